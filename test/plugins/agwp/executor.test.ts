// The generic executor against a real local HTTP listener: what goes on the wire.
import t from 'tap'
import { isPluginFailure } from '../../../core/src/plugin-api.ts'
import type { AgwpContext } from '../../../plugins/agwp/executor.ts'
import type { Operation } from '../../../plugins/agwp/operation.ts'
import plugin from '../../../plugins/agwp/index.ts'
import { execute, scoped, toRequest } from '../../../plugins/agwp/executor.ts'
import { ctxFor, envFor, listen } from './_listener.ts'

const l = await listen()
t.teardown(() => l.close())
t.beforeEach(() => {
  l.seen.length = 0
})

t.test('hostile path segments are encoded one segment each', async (t) => {
  const ctx = ctxFor(envFor(l.url), { method: 'GET', path: '/repos/{repo}/commits/{commit}' })
  await execute(ctx, { repo: 'a/b?c#d%e f/../x', commit: '..%2f\u00e9' })
  t.equal(l.seen.length, 1)
  t.equal(l.seen[0]?.url, '/agwp/v1/repos/a%2Fb%3Fc%23d%25e%20f%2F..%2Fx/commits/..%252f%C3%A9')
})

t.test('empty and dot segments are refused before any request', async (t) => {
  const ctx = ctxFor(envFor(l.url), { method: 'GET', path: '/repos/{repo}/log' })
  for (const repo of ['', '.', '..']) {
    const e = await execute(ctx, { repo }).catch((x: unknown) => x)
    t.ok(isPluginFailure(e) && e.code === 'invalid', `"${repo}" refused`)
  }
  const missing = await execute(ctx, {}).catch((x: unknown) => x)
  t.ok(isPluginFailure(missing) && missing.code === 'invalid', 'a missing path argument is refused')
  t.equal(l.seen.length, 0, 'nothing was sent')
})

t.test('query: absent arguments omitted, values encoded, scalars stringified, arrays repeated', async (t) => {
  const ctx = ctxFor(envFor(l.url), {
    method: 'GET',
    path: '/repos/{repo}/search',
    query: ['q', 'ref', 'path', 'limit', 'flag'],
  })
  await execute(ctx, { repo: 'r', q: 'a&b=c#d e+f', limit: 5, flag: false, path: ['x/y', 'z'] })
  const u = new URL(l.seen[0]?.url ?? '', 'http://x')
  t.equal(u.pathname, '/agwp/v1/repos/r/search')
  t.same(
    [...u.searchParams],
    [
      ['q', 'a&b=c#d e+f'],
      ['path', 'x/y'],
      ['path', 'z'],
      ['limit', '5'],
      ['flag', 'false'],
    ],
  )
  t.notOk(u.searchParams.has('ref'), 'absent ref omitted')
})

t.test('body: a list maps same-named fields, an object maps field to argument, absent omitted', async (t) => {
  const listCtx = ctxFor(envFor(l.url), {
    method: 'PUT',
    path: '/workspaces/{workspace}/files',
    body: ['path', 'content', 'encoding'],
  })
  await execute(listCtx, { workspace: 'ws-1', path: 'a.txt', content: 'hi\n', extra: 'not sent' })
  t.equal(l.seen[0]?.method, 'PUT')
  t.same(JSON.parse(l.seen[0]?.body ?? ''), { path: 'a.txt', content: 'hi\n' })
  t.match(l.seen[0]?.headers['content-type'], /^application\/json/)
  const objCtx = ctxFor(envFor(l.url), { method: 'POST', path: '/runs/{run_id}/notes', body: { body: 'note' } })
  await execute(objCtx, { run_id: 'run-1', note: 'hello' })
  t.same(JSON.parse(l.seen[1]?.body ?? ''), { body: 'hello' })
  const empty = ctxFor(envFor(l.url), { method: 'POST', path: '/tasks/{task}/claim', body: ['ttl_s'] })
  await execute(empty, { task: 'task-1' })
  t.same(JSON.parse(l.seen[2]?.body ?? ''), {}, 'a POST always carries a JSON object')
})

t.test('run header and bearer token', async (t) => {
  const ctx = ctxFor(envFor(l.url, { token: 'agwp_secret-value-123456' }), {
    method: 'GET',
    path: '/whoami',
    runHeader: 'run_id',
  })
  await execute(ctx, { run_id: 'run-7' })
  await execute(ctx, {})
  t.equal(l.seen[0]?.headers['agwp-run'], 'run-7')
  t.equal(l.seen[1]?.headers['agwp-run'], undefined, 'no run, no header')
  t.equal(l.seen[0]?.headers['authorization'], 'Bearer agwp_secret-value-123456')
  const bad = await execute(ctx, { run_id: 'run-1\r\nX-Evil: 1' }).catch((x: unknown) => x)
  t.ok(isPluginFailure(bad) && bad.code === 'invalid', 'a header-breaking run id is refused')
  t.equal(l.seen.length, 2, 'and not sent')
})

t.test('toRequest is pure', async (t) => {
  t.same(
    toRequest(
      { method: 'DELETE', path: '/workspaces/{workspace}/files', query: ['path', 'if_match'] },
      { workspace: 'w 1', path: 'd/e.txt' },
    ),
    {
      method: 'DELETE',
      path: '/workspaces/w%201/files',
      query: [['path', 'd/e.txt']],
    },
  )
})

t.test('a DELETE is sent complete, without a body', async (t) => {
  const ctx = ctxFor(envFor(l.url), { method: 'DELETE', path: '/leases/{lease_id}' })
  t.same(await execute(ctx, { lease_id: 'lease-1' }), { ok: true })
  t.match(l.seen[0], { method: 'DELETE', url: '/agwp/v1/leases/lease-1', body: '' })
})

/** A context for a tool whose manifest names its repository through repoArg `repo`. */
function withRepoArg(op: Operation): AgwpContext {
  const ctx = ctxFor(envFor(l.url), op)
  return { ...ctx, tool: { ...ctx.tool, repoArg: 'repo' } }
}

t.test('AGWP-Repo: sent whenever the tool declares a repoArg and the call gives it', async (t) => {
  const write = withRepoArg({ method: 'PUT', path: '/workspaces/{workspace}/files', body: ['path', 'content'] })
  await plugin.operation!.run({ repo: 'demo', workspace: 'ws-3', path: 'a', content: 'x' }, write)
  t.equal(l.seen[0]?.headers['agwp-repo'], 'demo', 'an id-taking tool sends the repository it names')
  t.same(JSON.parse(l.seen[0]?.body ?? ''), { path: 'a', content: 'x' }, 'repo is not a body field')
  t.equal(l.seen[0]?.url, '/agwp/v1/workspaces/ws-3/files')
  const log = withRepoArg({ method: 'GET', path: '/repos/{repo}/log' })
  await plugin.operation!.run({ repo: 'demo' }, log)
  t.equal(l.seen[1]?.headers['agwp-repo'], 'demo', 'also when the path already names it')
  await plugin.operation!.run({ workspace: 'ws-3', path: 'a', content: 'x' }, write)
  t.equal(l.seen[2]?.headers['agwp-repo'], undefined, 'no repo given (no --repo): no header')
  const noArg = ctxFor(envFor(l.url), { method: 'GET', path: '/repos/{repo}/log' })
  await plugin.operation!.run({ repo: 'demo' }, noArg)
  t.equal(l.seen[3]?.headers['agwp-repo'], undefined, 'a tool without repoArg: no header')
})

t.test(
  'AGWP-Repo: every request of the call carries it, also those a handler builds from other arguments',
  async (t) => {
    const ctx = scoped(withRepoArg({ method: 'GET', path: '/whoami' }), { repo: 'demo' })
    await execute(ctx, {}, { method: 'GET', path: '/whoami' })
    await execute(ctx, { run_id: 'run-1' }, { method: 'POST', path: '/runs/{run_id}/notes', body: ['body'] })
    t.same(
      l.seen.map((s) => s.headers['agwp-repo']),
      ['demo', 'demo'],
    )
    const bad = await plugin
      .operation!.run(
        { repo: 'de\r\nmo', workspace: 'ws-3', path: 'a', content: 'x' },
        withRepoArg({ method: 'PUT', path: '/workspaces/{workspace}/files', body: ['path'] }),
      )
      .catch((x: unknown) => x)
    t.ok(isPluginFailure(bad) && bad.code === 'invalid', 'a header-breaking repository is refused')
    t.equal(l.seen.length, 2, 'and not sent')
  },
)

t.test('scoped keeps the signal of a context that exposes it as an accessor, as the core does', async (t) => {
  const base = withRepoArg({ method: 'GET', path: '/whoami' })
  const controller = new AbortController()
  let reads = 0
  // The core's context reads its signal through a prototype getter: a spread would drop it.
  class AccessorContext {
    readonly log = base.log
    readonly state = base.state
    readonly tool = base.tool
    readonly server = base.server
    readonly attachment = base.attachment
    get signal(): AbortSignal {
      reads++
      return controller.signal
    }
  }
  const ctx = scoped(new AccessorContext(), { repo: 'demo' })
  t.equal(ctx.signal, controller.signal)
  t.ok(reads >= 1)
  t.equal(scoped(new AccessorContext(), {}).signal, controller.signal, 'unscoped: the context itself')
})
