// The generic executor: a manifest `operation` plus validated arguments become one AGWP
// request. Path arguments are URL-encoded per segment; query arguments that are absent are
// omitted; the body maps argument names to fields; the run header carries the run id; and
// every request of a call that names its repository carries AGWP-Repo (see `scoped`).
import { localFailure } from '../../core/src/plugin-api.ts'
import type { ToolArgs, ToolContext } from '../../core/src/plugin-api.ts'
import type { AgwpClient, AgwpRequest } from './client.ts'
import type { Operation } from './operation.ts'

/** A call's context in this plugin: its state is the AGWP client init built. */
export type AgwpContext = ToolContext<AgwpClient>

export function toRequest(op: Operation, args: ToolArgs): AgwpRequest {
  const path = op.path.replace(/\{([a-z0-9_]+)\}/g, (_, name: string) => segment(name, args[name]))
  const query: [string, string][] = []
  for (const name of op.query ?? []) {
    const v = args[name]
    if (v === undefined || v === null) continue
    for (const x of Array.isArray(v) ? v : [v]) query.push([name, scalar(name, x)])
  }
  const req: AgwpRequest = { method: op.method, path, query }
  if (op.body !== undefined) {
    const pairs = Array.isArray(op.body) ? op.body.map((n) => [n, n] as const) : Object.entries(op.body)
    const body: Record<string, unknown> = {}
    for (const [field, name] of pairs) if (args[name] !== undefined) body[field] = args[name]
    req.body = body
  }
  if (op.runHeader !== undefined) {
    const run = args[op.runHeader]
    if (typeof run === 'string' && run !== '') req.runId = run
  }
  return req
}

/**
 * Runs a tool's own manifest operation (or `op`, for handlers that pick one). The answer is
 * typed as the caller expects it (`T`): the core checks it against the tool's output schema
 * before anything of it is shown, so a wrong shape is refused there, not trusted here.
 */
export async function execute<T = Record<string, unknown>>(
  ctx: AgwpContext,
  args: ToolArgs,
  // The build checked the manifest's block against OPERATION_SCHEMA: it is an Operation.
  op: Operation | undefined = ctx.tool.operation as Operation | undefined,
): Promise<T> {
  if (!op) throw localFailure('not_configured', `tool ${ctx.tool.name} declares no operation`)
  return (await clientOf(ctx).send(toRequest(op, args), ctx.signal)) as T
}

/**
 * An answer a handler composed from upstream answers, typed as its tool's output. Unchecked
 * here on purpose: the core checks it against the tool's output schema before it is shown.
 */
export function asAnswer<T>(x: Record<string, unknown>): T {
  return x as T
}

/**
 * The call's context with every request limited to the repository the call names through its
 * manifest repoArg (the core has checked it against --repo): the client sends AGWP-Repo, and the
 * server answers an id of another repository as absent. Requests a handler builds from other
 * arguments (a run it looks up, a lease check) carry it too. No repository named: ctx as is.
 */
export function scoped(ctx: AgwpContext, args: ToolArgs): AgwpContext {
  const name = ctx.tool.repoArg
  const repo = name !== undefined ? args[name] : undefined
  if (typeof repo !== 'string' || repo === '') return ctx
  const client = clientOf(ctx)
  const state: AgwpClient = {
    send: (req, signal) => client.send(req.repo === undefined ? { ...req, repo } : req, signal),
  }
  // Field by field, not `{ ...ctx }`: signal is an accessor of the core's context (see ToolContext).
  return {
    signal: ctx.signal,
    log: ctx.log,
    tool: ctx.tool,
    server: ctx.server,
    state,
    attachment: (name, input) => ctx.attachment(name, input),
  }
}

export function clientOf(ctx: AgwpContext): AgwpClient {
  const c = ctx.state as AgwpClient | undefined
  if (!c || typeof c.send !== 'function') throw localFailure('not_configured', 'the agwp plugin has no upstream client')
  return c
}

/** One path segment: never empty, never a dot segment (URL parsing would resolve it away). */
function segment(name: string, v: unknown): string {
  if (typeof v !== 'string' && typeof v !== 'number') throw localFailure('invalid', `"${name}" is required`)
  const s = String(v)
  if (s === '' || s === '.' || s === '..') throw localFailure('invalid', `"${name}" must not be empty, "." or ".."`)
  return encodeURIComponent(s)
}

function scalar(name: string, v: unknown): string {
  if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') return String(v)
  throw localFailure('invalid', `"${name}" must be a string, number or boolean`)
}
