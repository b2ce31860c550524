// The handlers that choose or combine AGWP requests, and the --require-lease confirmation,
// against a scripted listener.
import t from 'tap'
import { isPluginFailure } from '../../../core/src/plugin-api.ts'
import type { Operation } from '../../../plugins/agwp/operation.ts'
import plugin from '../../../plugins/agwp/index.ts'
import { ctxFor, envFor, json, listen } from './_listener.ts'
import type { Seen } from './_listener.ts'

const routes: Record<string, unknown> = {
  'GET /agwp/v1/repos/r': { name: 'r', default_branch: 'main' },
  'GET /agwp/v1/repos': { repos: [{ name: 'r' }] },
  'GET /agwp/v1/tasks/task-1': { id: 'task-1', repo: 'r', run_id: 'run-2' },
  'GET /agwp/v1/tasks/task-9': { id: 'task-9', repo: 'other' },
  'GET /agwp/v1/runs/run-2': { run_id: 'run-2', state: 'released', notes: [{ body: 'handoff' }] },
  'GET /agwp/v1/proposals/prop-1/diff': {
    base: 'a',
    head: 'b',
    truncated: false,
    files: [
      { path: 'x', patch: 'diff --git a/x b/x\n+1\n' },
      { path: 'y', patch: 'diff --git a/y b/y\n-2\n' },
    ],
  },
  'GET /agwp/v1/workspaces/ws-1': {
    id: 'ws-1',
    repo: 'r',
    state: 'open',
    changes: [{ path: 'src/a.ts', op: 'write' }],
  },
  'GET /agwp/v1/workspaces/ws-1/diff': {
    base: 'a',
    head: 't',
    truncated: false,
    files: [{ path: 'src/a.ts', patch: 'P' }],
  },
  'GET /agwp/v1/repos/r/leases': {
    leases: [
      { id: 'lease-1', repo: 'r', paths: ['src/'], holder: 'agent:a#run-2', run_id: 'run-2' },
      { id: 'lease-2', repo: 'r', paths: ['docs/*.md'], holder: 'agent:a' },
    ],
  },
  'GET /agwp/v1/whoami': { principal: 'agent:a', scopes: [], roles: {} },
  'POST /agwp/v1/runs/run-2/notes': { id: 'note-1', body: 'n' },
  'POST /agwp/v1/runs/run-2/heartbeat': { run_id: 'run-2', state: 'active', lease_expires_at: 'later' },
  'PUT /agwp/v1/workspaces/ws-1/files': { path: 'a', blob: 'b', created: true },
}
const l = await listen((req: Seen, res) => {
  const key = `${req.method} ${req.url.split('?')[0]}`
  if (key in routes) return json(200, routes[key])(req, res)
  json(404, { error: { code: 'not_found', message: `no ${key}`, details: {} } })(req, res)
})
t.teardown(() => l.close())
t.beforeEach(() => {
  l.seen.length = 0
})
const env = envFor(l.url)
const call = (name: string, args: Record<string, unknown>, operation?: Parameters<typeof ctxFor>[1]) => {
  const h = plugin.handlers[name]
  if (!h) throw new Error(`no handler ${name}`)
  return h(args, ctxFor(env, operation, undefined, name)) as Promise<Record<string, unknown>>
}
const sent = () => l.seen.map((s) => `${s.method} ${s.url}`)

t.test('repo_list: the list, or one repository in full as a one-item list', async (t) => {
  t.same(await call('repo_list', {}), { repos: [{ name: 'r' }] })
  t.same(await call('repo_list', { repo: 'r' }), { repos: [{ name: 'r', default_branch: 'main' }] })
})

t.test('file_read: at a ref or through a workspace', async (t) => {
  await call('file_read', { repo: 'r', path: 'a b.txt', ref: 'main' }).catch(() => undefined)
  await call('file_read', { repo: 'r', path: 'a.txt', workspace: 'ws-1' }).catch(() => undefined)
  t.same(sent(), ['GET /agwp/v1/repos/r/file?ref=main&path=a+b.txt', 'GET /agwp/v1/workspaces/ws-1/file?path=a.txt'])
})

t.test('diff: a proposal diff flattened into one patch text', async (t) => {
  const d = await call('diff', { repo: 'r', proposal: 'prop-1' })
  t.equal(d['patch'], 'diff --git a/x b/x\n+1\ndiff --git a/y b/y\n-2\n')
  t.same(d['files'], [{ path: 'x' }, { path: 'y' }])
  const e = await call(
    'diff',
    { repo: 'r', base: 'main' },
    { method: 'GET', path: '/repos/{repo}/diff', query: ['base', 'head'] },
  ).catch((x: unknown) => x)
  t.ok(isPluginFailure(e) && e.code === 'invalid', 'base without head is refused locally')
})

t.test('task_list with an id: the task, its latest run, and the repository checked', async (t) => {
  t.same(await call('task_list', { repo: 'r', task: 'task-1' }), {
    tasks: [routes['GET /agwp/v1/tasks/task-1']],
    run: routes['GET /agwp/v1/runs/run-2'],
  })
  const e = await call('task_list', { repo: 'r', task: 'task-9' }).catch((x: unknown) => x)
  t.ok(isPluginFailure(e) && e.code === 'not_found', 'a task of another repository is not shown')
})

t.test('workspace_status with diff', async (t) => {
  const s = await call('workspace_status', { workspace: 'ws-1', diff: true })
  t.match(s, { id: 'ws-1', patch: 'P', files: [{ path: 'src/a.ts' }] })
  t.notOk('patch' in (await call('workspace_status', { workspace: 'ws-1' })))
})

t.test('run_update: note first, then heartbeat; the note is returned with the run', async (t) => {
  const r = await call('run_update', { run_id: 'run-2', note: 'n', ttl_s: 60 })
  t.same(sent(), ['POST /agwp/v1/runs/run-2/notes', 'POST /agwp/v1/runs/run-2/heartbeat'])
  t.same(JSON.parse(l.seen[1]?.body ?? ''), { ttl_s: 60 })
  t.match(r, { run_id: 'run-2', state: 'active', note: { id: 'note-1' } })
  l.seen.length = 0
  await call('run_update', { run_id: 'run-2', note: 'n', heartbeat: false })
  t.same(sent(), ['POST /agwp/v1/runs/run-2/notes', 'GET /agwp/v1/runs/run-2'])
})

t.test('file_write: base64 is checked and compacted; broken text is refused locally', async (t) => {
  const op: Operation = { method: 'PUT', path: '/workspaces/{workspace}/files', body: ['path', 'content', 'encoding'] }
  await call('file_write', { workspace: 'ws-1', path: 'a.bin', content: 'AAEC\nAw==', encoding: 'base64' }, op)
  t.same(JSON.parse(l.seen[0]?.body ?? ''), { path: 'a.bin', content: 'AAECAw==', encoding: 'base64' })
  for (const args of [{ content: 'not base64!', encoding: 'base64' }, { content: 'abc' + '\ud800' }]) {
    const e = await call('file_write', { workspace: 'ws-1', path: 'a', ...args }, op).catch((x: unknown) => x)
    t.ok(isPluginFailure(e) && e.code === 'invalid')
  }
  t.equal(l.seen.length, 1, 'refused writes were not sent')
})

t.test('confirmLease: held by the run, covering every path', async (t) => {
  const ctx = ctxFor(env, undefined, undefined, 'file_write')
  const q = (o: Partial<Parameters<NonNullable<typeof plugin.confirmLease>>[0]>) =>
    plugin.confirmLease!(
      { leaseId: 'lease-1', runId: 'run-2', repo: undefined, paths: ['src/a.ts'], args: { workspace: 'ws-1' }, ...o },
      ctx,
    )
  t.same(await q({}), { ok: true }, 'repository found through the workspace; src/ covers src/a.ts')
  t.match(await q({ paths: ['src/a.ts', 'README.md'] }), {
    ok: false,
    reason: /does not cover 1 of the written paths, e.g. "README.md"/,
  })
  t.match(await q({ runId: 'run-3' }), { ok: false, reason: /not held by run "run-3"/ })
  t.match(await q({ leaseId: 'lease-404', repo: 'r' }), { ok: false, reason: /not live/ })
  t.same(
    await q({ leaseId: 'lease-2', runId: undefined, repo: 'r', paths: ['docs/x.md'] }),
    { ok: true },
    'outside a run: a lease of this principal outside any run',
  )
  t.match(await q({ runId: undefined, repo: 'r' }), { ok: false, reason: /pass the run_id/ })
  t.match(await q({ args: { workspace: 'ws-404' } }), {
    ok: false,
    reason: /could not be confirmed: the upstream answered "not_found" \(404\)/,
  })
})

t.test('handlers in a repository scope: every request they make carries AGWP-Repo', async (t) => {
  const scopedCall = (name: string, args: Record<string, unknown>) => {
    const ctx = ctxFor(env, undefined, undefined, name)
    return plugin.handlers[name]!(args, { ...ctx, tool: { ...ctx.tool, repoArg: 'repo' } }) as Promise<
      Record<string, unknown>
    >
  }
  await scopedCall('task_list', { repo: 'r', task: 'task-1' })
  await scopedCall('run_update', { repo: 'r', run_id: 'run-2', note: 'n' })
  await scopedCall('workspace_status', { repo: 'r', workspace: 'ws-1', diff: true })
  t.same(sent(), [
    'GET /agwp/v1/tasks/task-1',
    'GET /agwp/v1/runs/run-2',
    'POST /agwp/v1/runs/run-2/notes',
    'POST /agwp/v1/runs/run-2/heartbeat',
    'GET /agwp/v1/workspaces/ws-1',
    'GET /agwp/v1/workspaces/ws-1/diff',
  ])
  t.same(
    l.seen.map((s) => s.headers['agwp-repo']),
    Array(6).fill('r'),
  )
})

t.test('confirmLease with the repo argument: looks there, with AGWP-Repo, without reading the workspace', async (t) => {
  const ctx = ctxFor(env, undefined, undefined, 'file_write')
  const scopedCtx = { ...ctx, tool: { ...ctx.tool, repoArg: 'repo' } }
  const v = await plugin.confirmLease!(
    { leaseId: 'lease-1', runId: 'run-2', repo: 'r', paths: ['src/a.ts'], args: { repo: 'r', workspace: 'ws-1' } },
    scopedCtx,
  )
  t.same(v, { ok: true })
  t.same(sent(), ['GET /agwp/v1/repos/r/leases?limit=1000'], 'no workspace lookup: the repository was given')
  t.equal(l.seen[0]?.headers['agwp-repo'], 'r')
})
