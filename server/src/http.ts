import http from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { AgwpError, errorBody } from './errors.ts'
import { authenticate, RateLimiter } from './auth.ts'
import { DEFAULT_LIMITS, type Ctx, type Limits } from './context.ts'
import { Router } from './router.ts'
import { registerRoutes } from './routes.ts'
import { registerAdminRoutes } from './admin-routes.ts'
import { validateBody } from './validate.ts'
import { openState } from './open-state.ts'
import { isStorageFull, requestScope } from './store.ts'
import { RepoRegistry } from './repos.ts'
import { GitError } from './git.ts'
import { settleAtStartup } from './intents.ts'
import { forwardIfElsewhere, requestRepo } from './forward.ts'
import { defaultInstance, type InstanceOptions } from './owners.ts'
import { checkRepoName } from './paths.ts'
import { startOwnership } from './scale-out.ts'
import { settleWorkspaceRefs } from './wsrefs.ts'
import { tuneConnections } from './connections.ts'
import { IdempotencyKeys, checkKey, fingerprint } from './idempotency.ts'
import { Ui, type UiOptions } from './ui/index.ts'
import { UI_PATH } from './ui/guard.ts'
import { startMaintenance, type InFlight, type Maintenance, type MaintenanceOptions } from './maintenance.ts'

export const PREFIX = '/agwp/v1'

export interface ServerOptions {
  dataDir: string
  /** a postgres:// URL: the state lives in that database (repositories stay in dataDir) */
  store?: string
  /** with a postgres store: apply pending migrations at start (default), or refuse an old schema */
  migrate?: boolean
  host?: string
  port?: number
  limits?: Partial<Limits>
  /** requests per second per token (0 disables) and burst */
  rate?: number
  burst?: number
  requestTimeoutMs?: number
  log?: (msg: string) => void
  /** The review page under /ui (not part of AGWP v1); off when absent. */
  ui?: UiOptions
  /** Background repository maintenance (maintenance.ts); off when absent. */
  maintenance?: MaintenanceOptions | undefined
  /** With a PostgreSQL store: who this instance is, from the address it bound (default defaultInstance). */
  instance?: ((bound: { host: string; port: number }) => InstanceOptions) | undefined
}

export interface RunningServer {
  url: string
  port: number
  ctx: Ctx
  /** The review page, when it is on. */
  ui: Ui | undefined
  /** The background maintenance, when it is on (tests call its tick). */
  maintenance: Maintenance | undefined
  close: () => Promise<void>
}

export async function startServer(opts: ServerOptions): Promise<RunningServer> {
  const log = opts.log ?? ((m: string) => process.stderr.write(m + '\n'))
  const { ctx, shared } = await openContext(opts, log)
  const { state } = ctx
  const router = new Router()
  registerRoutes(router)
  registerAdminRoutes(router)
  const limiter = new RateLimiter(opts.rate ?? 50, opts.burst ?? 200)
  const keys = new IdempotencyKeys(state)
  let listening = ''
  // With a PostgreSQL store, requests wait until this instance is recorded (it needs the bound port).
  let owned = (): void => undefined
  const owning = shared
    ? new Promise<void>((r) => {
        owned = r
      })
    : undefined
  const ui = opts.ui ? new Ui(opts.ui, () => listening) : undefined
  const requests = new Handling()
  const server = http.createServer((req, res) => {
    const done = requests.begin()
    // Each request runs in a scope that collects the journal offsets it depends on, so
    // its answer waits for exactly the fsync that makes them durable (group commit).
    requestScope
      .run(ctx.state.newScope(), () => handle({ ctx, router, limiter, keys, log, ui, owning }, req, res))
      .catch((e: unknown) => {
        log(`ag-server: unhandled ${String(e)}`)
        if (!res.headersSent) send(res, 500, errorBody(new AgwpError('internal', 'internal error')))
      })
      .finally(done)
  })
  tuneConnections(server, opts.requestTimeoutMs ?? 60_000)
  const addr = await listen(server, opts.host ?? '127.0.0.1', opts.port ?? 7420)
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address
  listening = `${host}:${addr.port}`
  if (shared) {
    const bound = { host: addr.address, port: addr.port }
    try {
      ctx.owners = await startOwnership(ctx, (opts.instance ?? defaultInstance)(bound), log)
      owned()
    } catch (e) {
      server.closeAllConnections()
      server.close()
      await state.close()
      throw e
    }
  }
  const maintenance = opts.maintenance ? startMaintenance(ctx, opts.maintenance, requests, log) : undefined
  return {
    url: `http://${host}:${addr.port}${PREFIX}`,
    port: addr.port,
    ctx,
    ui,
    maintenance,
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((r) => server.close(() => r()))
      await maintenance?.stop()
      await ctx.owners?.close()
      ctx.repos.closeAll()
      await state.close()
    },
  }
}

/**
 * The state and repositories a server works on, settled. Several instances share a PostgreSQL
 * store and its repositories: a repository is settled by the instance that takes it over
 * (owners.ts), never by every instance at its start.
 */
async function openContext(opts: ServerOptions, log: (m: string) => void): Promise<{ ctx: Ctx; shared: boolean }> {
  const state = await openState({
    dataDir: opts.dataDir,
    log,
    ...(opts.store !== undefined ? { store: opts.store } : {}),
    ...(opts.migrate === false ? { migrate: false } : {}),
  })
  const shared = state.backend === 'postgres'
  const ctx: Ctx = {
    state,
    repos: new RepoRegistry(path.join(opts.dataDir, 'repos')),
    limits: { ...DEFAULT_LIMITS, ...(opts.limits ?? {}) },
    tmpDir: path.join(opts.dataDir, 'tmp'),
  }
  if (!shared) {
    // Settle ref updates a crash interrupted, and the git locks it left, before anything
    // can observe the state.
    await settleAtStartup(ctx, log)
    // Workspace contents reachable from refs/agwp/workspaces/* (migrates older data directories).
    await settleWorkspaceRefs(ctx, log)
  }
  return { ctx, shared }
}

/**
 * Requests being handled: maintenance waits while the server is busy, and keeps every
 * unreachable object younger than the oldest (one it wrote may not be referenced yet). A
 * handler can outlive its connection (a timed-out socket): it counts until it returns.
 */
class Handling implements InFlight {
  private readonly started = new Map<number, number>()
  private next = 0
  /** A request begins; call what this returns when its handler has returned. */
  begin(): () => void {
    const id = this.next++
    this.started.set(id, performance.now())
    return () => void this.started.delete(id)
  }
  // Arrow properties: maintenance calls them unbound.
  readonly count = (): number => this.started.size
  readonly oldestMs = (): number => {
    const first = this.started.values().next() // insertion order: the oldest still running
    return first.done ? 0 : performance.now() - first.value
  }
}

function listen(server: http.Server, host: string, port: number): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => resolve(server.address() as AddressInfo))
  })
}

function send(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body)
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    ...headers,
  })
  res.end(text)
}

async function readBody(req: http.IncomingMessage, max: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? '0')
  if (declared > max) throw new AgwpError('too_large', `request body exceeds ${max} bytes`, { max_bytes: max })
  const chunks: Buffer[] = []
  let len = 0
  for await (const c of req) {
    const b = c as Buffer
    len += b.length
    if (len > max) throw new AgwpError('too_large', `request body exceeds ${max} bytes`, { max_bytes: max })
    chunks.push(b)
  }
  return Buffer.concat(chunks)
}

interface Served {
  /** with a PostgreSQL store: resolved once this instance's ownership has started */
  owning: Promise<void> | undefined
  ctx: Ctx
  router: Router
  limiter: RateLimiter
  keys: IdempotencyKeys
  log: (m: string) => void
  ui: Ui | undefined
}

/** What this request wrote (and read of others' writes) is durable. */
function settled(ctx: Ctx): Promise<void> {
  const scope = requestScope.getStore()
  return scope ? ctx.state.settle(scope) : ctx.state.flush()
}

async function handle(sv: Served, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const { ctx, router, limiter, keys, log } = sv
  try {
    if (sv.owning !== undefined) await sv.owning
    const url = new URL(req.url ?? '/', 'http://localhost')
    if (url.pathname === UI_PATH || url.pathname.startsWith(`${UI_PATH}/`)) {
      if (sv.ui) return await sv.ui.handle({ ctx, limiter, log, settle: () => settled(ctx) }, req, res, url)
      throw new AgwpError('not_found', 'the review page is off on this server (ag-server serve --ui turns it on)')
    }
    if (!url.pathname.startsWith(PREFIX + '/'))
      throw new AgwpError('not_found', 'unknown endpoint (AGWP lives under /agwp/v1)')
    const rel = url.pathname.slice(PREFIX.length)
    const method = req.method ?? 'GET'
    const m = router.match(method, rel)
    if (m === undefined) throw new AgwpError('not_found', `unknown endpoint ${method} ${rel.slice(0, 200)}`)
    if (m === 'method') throw new AgwpError('not_found', `method ${method} not supported on ${rel.slice(0, 200)}`)
    if (ctx.owners && (await forwarded(ctx, rel, m.params, req, res))) return
    const caller = await authenticate(
      ctx.state,
      header(req, 'authorization'),
      header(req, 'agwp-run'),
      header(req, 'agwp-repo'),
    )
    limiter.take(caller.token.id)
    const key = method === 'GET' ? undefined : checkKey(header(req, 'idempotency-key'))
    let body: unknown
    let raw: Buffer = Buffer.alloc(0)
    if (method === 'POST' || method === 'PUT' || method === 'PATCH') {
      raw = await readBody(req, ctx.limits.maxBodyBytes)
      if (raw.length === 0) body = {}
      else {
        const ct = header(req, 'content-type') ?? ''
        if (ct && !ct.startsWith('application/json'))
          throw new AgwpError('invalid', 'content-type must be application/json')
        try {
          body = JSON.parse(raw.toString('utf8'))
        } catch {
          throw new AgwpError('invalid', 'request body is not valid JSON')
        }
      }
      if (m.route.bodyDef) validateBody(m.route.bodyDef, body)
    } else {
      req.resume()
    }
    const route = m.route
    const run = (c: Ctx): Promise<Outcome> =>
      outcomeOf(log, async () => {
        const out = await route.handler({ ctx: c, caller, params: m.params, query: url.searchParams, body })
        return { status: out.status ?? 200, body: out.body }
      })
    if (key === undefined) return await reply(sv, res, await run(ctx))
    const fp = fingerprint({
      method,
      url: req.url ?? '',
      run: header(req, 'agwp-run'),
      repo: header(req, 'agwp-repo'),
      body: raw,
    })
    const b = await keys.begin(caller.principal, key, fp)
    if (b.kind === 'answer') return await reply(sv, res, await b.outcome, { 'Idempotent-Replayed': 'true' })
    let o: Outcome = { status: 500, body: errorBody(new AgwpError('internal', 'internal error')) }
    try {
      o = await run({ ...ctx, state: b.state })
    } finally {
      // Recorded before the answer leaves, and always: a repeat waiting on it must hear back.
      o = await b.finish(o)
    }
    await reply(sv, res, o)
  } catch (e) {
    await reply(sv, res, await outcomeOf(log, () => Promise.reject(e)), tooLargeClose(e, req))
  }
}

type Outcome = { status: number; body: unknown; headers?: Record<string, string> }

/** A handler's answer, or its error as the answer a client gets (never internals). */
async function outcomeOf(log: (m: string) => void, f: () => Promise<Outcome>): Promise<Outcome> {
  try {
    return await f()
  } catch (e0) {
    // A full disk anywhere on the write path (journal, object files, git) is the same 507.
    const e = isStorageFull(e0) ? new AgwpError('storage_full', 'the server is out of storage space') : e0
    if (e instanceof AgwpError) return { status: e.status, body: errorBody(e), headers: e.headers }
    log(`ag-server: ${e instanceof GitError ? e.message : e instanceof Error ? (e.stack ?? e.message) : String(e)}`)
    return { status: 500, body: errorBody(new AgwpError('internal', 'internal error')) }
  }
}

/** For an oversized body: answer, close the connection, discard the rest unread. */
function tooLargeClose(e: unknown, req: http.IncomingMessage): Record<string, string> {
  if (!(e instanceof AgwpError) || e.code !== 'too_large') return {}
  req.resume()
  return { Connection: 'close' }
}

/**
 * Send an answer once everything it depends on is durable: the journal lines this request
 * wrote, and those of other requests whose state it read (group commit defers fsync).
 * If they could not be made durable, the answer is that failure instead (507 on a full disk).
 */
async function reply(
  sv: Served,
  res: http.ServerResponse,
  o0: Outcome,
  extra: Record<string, string> = {},
): Promise<void> {
  let o = o0
  try {
    await settled(sv.ctx)
  } catch (e) {
    o = await outcomeOf(sv.log, () => Promise.reject(e))
  }
  send(res, o.status, o.body, { ...(o.headers ?? {}), ...extra })
}

/**
 * Several instances: a request for a repository another instance owns, answered by forwarding
 * it there (forward.ts). Only existing repositories are placed: a request naming another is
 * answered here (404), and records no owner.
 */
async function forwarded(
  ctx: Ctx,
  rel: string,
  params: Record<string, string>,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<boolean> {
  const owners = ctx.owners
  if (!owners) return false
  const repo = await requestRepo(ctx.state, rel, params, header(req, 'agwp-repo'))
  if (repo === undefined) return false
  try {
    checkRepoName(repo)
  } catch {
    return false
  }
  if (!ctx.repos.exists(repo)) return false
  return forwardIfElsewhere(owners, repo, req, res)
}

function header(req: http.IncomingMessage, name: string): string | undefined {
  const v = req.headers[name]
  return Array.isArray(v) ? v[0] : v
}
