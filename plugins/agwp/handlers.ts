// Tools whose behaviour is more than one manifest operation: a choice between two AGWP
// resources (list or one by id, a ref or a workspace), a second request, or a local check.
import { pluginFailure } from '../../core/src/plugin-api.ts'
import type { Handler, Operation, ToolArgs } from '../../core/src/plugin-api.ts'
import { execute } from './executor.ts'

const get = (path: string, query: string[] = []): Operation => ({ method: 'GET', path, query })

/** An object fetched by id must belong to the repository the call named (and --repo checked). */
function sameRepo(x: Record<string, unknown>, args: ToolArgs, what: string): Record<string, unknown> {
  if (typeof x['repo'] === 'string' && x['repo'] !== args['repo'])
    throw pluginFailure('not_found', `${what} is not in repository ${String(args['repo'])}`)
  return x
}

/** A diff with one patch text (shown raw in the fence) instead of one JSON string per file. */
function flattenDiff(d: Record<string, unknown>): Record<string, unknown> {
  const files = Array.isArray(d['files']) ? (d['files'] as Record<string, unknown>[]) : []
  const patch = files.map((f) => (typeof f['patch'] === 'string' ? f['patch'] : '')).join('')
  return { ...d, files: files.map(({ patch: _p, ...rest }) => rest), patch }
}

const UNPAIRED_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

export const handlers: Record<string, Handler> = {
  repo_list: async (args, ctx) => {
    if (typeof args['repo'] !== 'string') return execute(ctx, args, get('/repos'))
    return { repos: [await execute(ctx, args, get('/repos/{repo}'))] }
  },

  file_read: (args, ctx) =>
    typeof args['workspace'] === 'string'
      ? execute(ctx, args, get('/workspaces/{workspace}/file', ['path']))
      : execute(ctx, args, get('/repos/{repo}/file', ['ref', 'path'])),

  diff: async (args, ctx) => {
    if (typeof args['proposal'] === 'string')
      return flattenDiff(await execute(ctx, args, get('/proposals/{proposal}/diff')))
    if (typeof args['base'] !== 'string' || typeof args['head'] !== 'string')
      throw pluginFailure('invalid', 'give base and head, or proposal')
    return flattenDiff(await execute(ctx, args))
  },

  task_list: async (args, ctx) => {
    if (typeof args['task'] !== 'string') return execute(ctx, args, get('/repos/{repo}/tasks', ['state', 'cursor']))
    const task = sameRepo(await execute(ctx, args, get('/tasks/{task}')), args, `task ${args['task']}`)
    const runId = task['run_id']
    if (typeof runId !== 'string') return { tasks: [task] }
    return { tasks: [task], run: await execute(ctx, { run_id: runId }, get('/runs/{run_id}')) }
  },

  proposal_list: async (args, ctx) => {
    if (typeof args['proposal'] !== 'string')
      return execute(ctx, args, get('/repos/{repo}/proposals', ['state', 'cursor']))
    return {
      proposals: [
        sameRepo(await execute(ctx, args, get('/proposals/{proposal}')), args, `proposal ${args['proposal']}`),
      ],
    }
  },

  workspace_status: async (args, ctx) => {
    const ws = await execute(ctx, args, get('/workspaces/{workspace}'))
    if (args['diff'] !== true) return ws
    const d = flattenDiff(await execute(ctx, args, get('/workspaces/{workspace}/diff')))
    return { ...ws, files: d['files'], patch: d['patch'], ...(d['truncated'] === true ? { truncated: true } : {}) }
  },

  run_update: async (args, ctx) => {
    const path = { run_id: args['run_id'] }
    let note: Record<string, unknown> | undefined
    if (typeof args['note'] === 'string')
      note = await execute(
        ctx,
        { ...path, body: args['note'] },
        { method: 'POST', path: '/runs/{run_id}/notes', body: ['body'] },
      )
    const run =
      args['heartbeat'] === false
        ? await execute(ctx, path, get('/runs/{run_id}'))
        : await execute(
            ctx,
            { ...path, ttl_s: args['ttl_s'] },
            { method: 'POST', path: '/runs/{run_id}/heartbeat', body: ['ttl_s'] },
          )
    return note ? { ...run, note } : run
  },

  file_write: async (args, ctx) => {
    const content = args['content'] as string
    if (args['encoding'] === 'base64') {
      const compact = content.replace(/\s+/g, '')
      if (compact.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(compact))
        throw pluginFailure('invalid', 'content is not valid base64 (encoding: base64)')
      return execute(ctx, { ...args, content: compact })
    }
    if (UNPAIRED_SURROGATE.test(content))
      throw pluginFailure(
        'invalid',
        'content has unpaired UTF-16 surrogates; send binary data base64-encoded with encoding: base64',
      )
    return execute(ctx, args)
  },
}
