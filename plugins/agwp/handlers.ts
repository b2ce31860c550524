// Tools whose behaviour is more than one manifest operation: a choice between two AGWP
// resources (list or one by id, a ref or a workspace), a second request, or a local check.
// Each handler is typed from its tool's manifest (generated/types/tools.ts).
import { localFailure } from '../../core/src/plugin-api.ts'
import type { Handlers } from '../../core/src/plugin-api.ts'
import type { PluginTools } from '../../generated/types/tools.ts'
import type { AgwpClient } from './client.ts'
import { asAnswer, execute } from './executor.ts'
import type { Operation } from './operation.ts'

const get = (path: string, query: string[] = []): Operation => ({ method: 'GET', path, query })

type AnswerObject = Record<string, unknown>

/** An object fetched by id must belong to the repository the call named (and --repo checked). */
function sameRepo(x: AnswerObject, repo: string, what: string): AnswerObject {
  if (typeof x['repo'] === 'string' && x['repo'] !== repo)
    throw localFailure('not_found', `${what} is not in repository ${repo}`)
  return x
}

/** A diff with one patch text (shown raw in the fence) instead of one JSON string per file. */
function flattenDiff(d: AnswerObject): { files: unknown[]; patch: string } & AnswerObject {
  const files = Array.isArray(d['files']) ? (d['files'] as AnswerObject[]) : []
  const patch = files.map((f) => (typeof f['patch'] === 'string' ? f['patch'] : '')).join('')
  return { ...d, files: files.map(({ patch: _p, ...rest }) => rest), patch }
}

const UNPAIRED_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

export const handlers: Handlers<PluginTools['agwp'], AgwpClient> = {
  repo_list: async (args, ctx) => {
    if (args.repo === undefined) return execute(ctx, args, get('/repos'))
    return { repos: [await execute(ctx, args, get('/repos/{repo}'))] }
  },

  file_read: (args, ctx) =>
    args.workspace !== undefined
      ? execute(ctx, args, get('/workspaces/{workspace}/file', ['path']))
      : execute(ctx, args, get('/repos/{repo}/file', ['ref', 'path'])),

  diff: async (args, ctx) => {
    if (args.proposal !== undefined) return flattenDiff(await execute(ctx, args, get('/proposals/{proposal}/diff')))
    if (args.base === undefined || args.head === undefined)
      throw localFailure('invalid', 'give base and head, or proposal')
    return flattenDiff(await execute(ctx, args))
  },

  task_list: async (args, ctx) => {
    if (args.task === undefined) return execute(ctx, args, get('/repos/{repo}/tasks', ['state', 'cursor']))
    const task = sameRepo(await execute(ctx, args, get('/tasks/{task}')), args.repo, `task ${args.task}`)
    const runId = task['run_id']
    if (typeof runId !== 'string') return { tasks: [task] }
    return asAnswer({ tasks: [task], run: await execute(ctx, { run_id: runId }, get('/runs/{run_id}')) })
  },

  proposal_list: async (args, ctx) => {
    if (args.proposal === undefined) return execute(ctx, args, get('/repos/{repo}/proposals', ['state', 'cursor']))
    const proposal = await execute(ctx, args, get('/proposals/{proposal}'))
    return { proposals: [sameRepo(proposal, args.repo, `proposal ${args.proposal}`)] }
  },

  workspace_status: async (args, ctx) => {
    const ws = await execute(ctx, args, get('/workspaces/{workspace}'))
    if (args.diff !== true) return asAnswer(ws)
    const d = flattenDiff(await execute(ctx, args, get('/workspaces/{workspace}/diff')))
    return asAnswer({ ...ws, files: d.files, patch: d.patch, ...(d['truncated'] === true ? { truncated: true } : {}) })
  },

  run_update: async (args, ctx) => {
    const path = { run_id: args.run_id }
    let note: AnswerObject | undefined
    if (args.note !== undefined)
      note = await execute(
        ctx,
        { ...path, body: args.note },
        { method: 'POST', path: '/runs/{run_id}/notes', body: ['body'] },
      )
    const run =
      args.heartbeat === false
        ? await execute(ctx, path, get('/runs/{run_id}'))
        : await execute(
            ctx,
            { ...path, ttl_s: args.ttl_s },
            { method: 'POST', path: '/runs/{run_id}/heartbeat', body: ['ttl_s'] },
          )
    return asAnswer(note ? { ...run, note } : run)
  },

  file_write: async (args, ctx) => {
    const content = args.content
    if (args.encoding === 'base64') {
      const compact = content.replace(/\s+/g, '')
      if (compact.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(compact))
        throw localFailure('invalid', 'content is not valid base64 (encoding: base64)')
      return execute(ctx, { ...args, content: compact })
    }
    if (UNPAIRED_SURROGATE.test(content))
      throw localFailure(
        'invalid',
        'content has unpaired UTF-16 surrogates; send binary data base64-encoded with encoding: base64',
      )
    return execute(ctx, args)
  },
}
