// The workspaces this session opened or worked in, and the `workspace_files` attachment
// (manifests/workspace.json) that answers agit_log_step's ask: which of the files a location
// names exist in one of them. A file the agent just wrote lives in its server-side workspace,
// not in the work tree, until a person integrates the proposal; AGIT's rule ("locations name
// existing files") would otherwise refuse every location of the agent's own change.
//
// AGWP has no "list my workspaces" request, so the plugin remembers the last few ids it saw
// succeed (a workspace argument, or a workspace an answer describes), with the repository the
// call named: a small bounded list, nothing else kept.
import type { AttachmentSupport, ToolArgs, ToolSpec } from '../../core/src/plugin-api.ts'
import type { AgwpClient } from './client.ts'
import { execute } from './executor.ts'

/** How many workspaces are remembered (the most recent first), and asked about. */
const REMEMBERED = 8

export interface WorkspaceMemory {
  /** Workspace id → the repository the call named (for AGWP-Repo), most recent last. */
  ids: Map<string, string | undefined>
}

/** The plugin's state: its client, and what it remembers of this session's workspaces. */
export interface AgwpState extends AgwpClient {
  workspaces: WorkspaceMemory
}

export function withMemory(client: AgwpClient): AgwpState {
  return Object.assign(client, { workspaces: { ids: new Map() } })
}

/** The memory of a state that has one (the plugin's own; a scoped copy has none). */
export function memoryOf(state: unknown): WorkspaceMemory | undefined {
  return (state as Partial<AgwpState> | undefined)?.workspaces
}

/** After a call succeeded: the workspace it named or answered with is remembered (or forgotten once discarded). */
export function remember(memory: WorkspaceMemory | undefined, tool: ToolSpec, args: ToolArgs, answer: unknown): void {
  if (memory === undefined) return
  const repoArg = tool.repoArg !== undefined ? args[tool.repoArg] : undefined
  const repo = typeof repoArg === 'string' && repoArg !== '' ? repoArg : undefined
  const a = (typeof answer === 'object' && answer !== null ? answer : {}) as Record<string, unknown>
  const described = tool.dataKind === 'workspace' && typeof a['id'] === 'string' ? a['id'] : undefined
  const id = described ?? (typeof args['workspace'] === 'string' ? args['workspace'] : undefined)
  if (id === undefined) return
  memory.ids.delete(id)
  if (described !== undefined && a['state'] === 'discarded') return
  memory.ids.set(id, repo ?? (typeof a['repo'] === 'string' ? a['repo'] : undefined))
  for (const old of memory.ids.keys()) {
    if (memory.ids.size <= REMEMBERED) break
    memory.ids.delete(old)
  }
}

/** The attachment: the asked paths that a remembered workspace holds as a file. */
export const workspaceFiles: AttachmentSupport<AgwpClient> = {
  async provide(call, ctx) {
    const memory = memoryOf(ctx.state)
    const asked = call.input?.['paths']
    if (memory === undefined || !Array.isArray(asked) || memory.ids.size === 0) return { value: { present: [] } }
    const wanted = new Set(asked.filter((p): p is string => typeof p === 'string'))
    const present = new Set<string>()
    for (const [id, repo] of [...memory.ids].reverse()) {
      if (present.size === wanted.size) break
      const ws = await execute(
        { ...copy(ctx), state: repoScoped(ctx.state, repo) },
        { workspace: id },
        { method: 'GET', path: '/workspaces/{workspace}' },
      ).catch(() => undefined)
      if (ws === undefined) {
        memory.ids.delete(id) // gone, or not ours: not asked again
        continue
      }
      for (const c of Array.isArray(ws['changes']) ? (ws['changes'] as Record<string, unknown>[]) : [])
        if (c['op'] === 'write' && typeof c['path'] === 'string' && wanted.has(c['path'])) present.add(c['path'])
    }
    return { value: { present: [...present] } }
  },
}

/** A context's fields, copied (its `signal` is an accessor a spread would drop). */
function copy<S>(ctx: Parameters<AttachmentSupport<S>['provide']>[1]) {
  return { signal: ctx.signal, log: ctx.log, tool: ctx.tool, server: ctx.server, attachment: ctx.attachment }
}

/** The client, sending AGWP-Repo for the repository the workspace's call named. */
function repoScoped(client: AgwpClient, repo: string | undefined): AgwpClient {
  if (repo === undefined) return client
  return { send: (req, signal) => client.send(req.repo === undefined ? { ...req, repo } : req, signal) }
}
