// AGWP-Repo: a request that names one repository may act on nothing else. An object (workspace,
// proposal, task, run, lease) of another repository is answered 404 exactly like an id that
// does not exist; a repository in the path other than the header is 403. Two repositories,
// one token covering both: the header, not the token, is what keeps the request in one.
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import type { Test } from 'tap'
import { contractErrors, makeSourceRepo, tmpdir } from './helpers.ts'
import { startServer } from '../../server/src/http.ts'
import { createTask } from '../../server/src/coordination.ts'
import type { Json } from '../helpers/json.ts'
import { seedWorld } from '../helpers/agwp-world.ts'
import type { Person } from '../helpers/agwp-world.ts'

const root = tmpdir('scope')
const src = makeSourceRepo(root, 2)
const data = path.join(root, 'data')
const people: Record<string, Person> = {
  alice: { principal: 'agent:alice', role: 'contributor', scopes: ['read', 'workspace', 'propose', 'coordinate'] },
  rita: { principal: 'human:rita', role: 'reviewer', scopes: ['read', 'review'] },
  mona: { principal: 'human:mona', role: 'maintainer', scopes: ['read', 'review', 'integrate', 'coordinate'] },
}
const { tokens } = await seedWorld(data, {
  repos: { demo: src, other: src },
  people,
  policy: { other: { required_approvals: 0 } },
})
const server = await startServer({ dataDir: data, host: '127.0.0.1', port: 0, rate: 0, log: () => undefined })
t.teardown(async () => {
  await server.close()
  fs.rmSync(root, { recursive: true, force: true })
})

// body is `any` on purpose, as in helpers.ts: shapes are checked with contractErrors().
async function api(
  who: string,
  method: string,
  p: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Json }> {
  const res = await fetch(server.url + p, {
    method,
    headers: {
      authorization: `Bearer ${tokens[who]}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  })
  return { status: res.status, body: await res.json() }
}
const inDemo = { 'agwp-repo': 'demo' }
const inOther = { 'agwp-repo': 'other' }

/** 404 not_found naming only the header's repository, shaped per the contract. */
function hidden(t: Test, r: { status: number; body: Json }, kind: string, id: string, what: string): void {
  t.equal(r.status, 404, `${what}: 404`)
  t.equal(r.body?.error?.code, 'not_found', `${what}: not_found`)
  t.equal(r.body?.error?.message, `no ${kind} '${id}' in repository 'demo'`, `${what}: message`)
  t.notMatch(JSON.stringify(r.body), /other/, `${what}: the other repository is not named`)
  t.equal(contractErrors('ErrorResponse', r.body), '', `${what}: ErrorResponse`)
}

// Objects in `other`, made without the header (as another process would).
const wsOther = (await api('alice', 'POST', '/repos/other/workspaces', {})).body.id as string
t.equal(
  (await api('alice', 'PUT', `/workspaces/${wsOther}/files`, { path: 'README.md', content: 'other\n' })).status,
  200,
)

t.test('workspaces of another repository: 404 on every route, nothing changes', async (t) => {
  const before = (await api('alice', 'GET', `/workspaces/${wsOther}`)).body
  const routes: [string, string, unknown?][] = [
    ['GET', `/workspaces/${wsOther}`],
    ['GET', `/workspaces/${wsOther}/file?path=README.md`],
    ['PUT', `/workspaces/${wsOther}/files`, { path: 'README.md', content: 'pwned\n' }],
    ['PUT', `/workspaces/${wsOther}/files`, { path: 'new.txt', content: 'pwned\n' }],
    ['DELETE', `/workspaces/${wsOther}/files?path=lib/util.ts`],
    ['POST', `/workspaces/${wsOther}/moves`, { from: 'README.md', to: 'moved.md' }],
    ['GET', `/workspaces/${wsOther}/diff`],
    ['POST', `/workspaces/${wsOther}/proposals`, { title: 'steal' }],
    ['DELETE', `/workspaces/${wsOther}`],
  ]
  for (const [method, p, body] of routes)
    hidden(t, await api('alice', method, p, body, inDemo), 'workspace', wsOther, `${method} ${p}`)
  // Indistinguishable from an id that exists nowhere.
  hidden(t, await api('alice', 'GET', '/workspaces/ws-999', undefined, inDemo), 'workspace', 'ws-999', 'unknown id')
  const after = await api('alice', 'GET', `/workspaces/${wsOther}`, undefined, inOther)
  t.equal(after.status, 200, 'the matching header is served')
  t.same(after.body, before, 'the workspace is unchanged')
  t.equal((await api('alice', 'GET', `/workspaces/${wsOther}/file?path=README.md`)).body.content, 'other\n')
  t.same((await api('alice', 'GET', `/repos/other/proposals`)).body.proposals, [], 'no proposal was made')
})

t.test('proposals of another repository: 404 for read, revise, withdraw, review, integrate', async (t) => {
  const pr = await api('alice', 'POST', `/workspaces/${wsOther}/proposals`, { title: 'in other' })
  t.equal(pr.status, 201)
  const id = pr.body.id as string
  const routes: [string, string, string, unknown?][] = [
    ['alice', 'GET', `/proposals/${id}`],
    ['alice', 'GET', `/proposals/${id}/diff`],
    ['alice', 'POST', `/proposals/${id}/revisions`, { workspace: wsOther }],
    ['alice', 'POST', `/proposals/${id}/withdraw`, {}],
    ['rita', 'POST', `/proposals/${id}/reviews`, { verdict: 'approve' }],
    ['mona', 'POST', `/proposals/${id}/integrate`, {}],
  ]
  for (const [who, method, p, body] of routes)
    hidden(t, await api(who, method, p, body, inDemo), 'proposal', id, `${who} ${method} ${p}`)
  const after = await api('alice', 'GET', `/proposals/${id}`, undefined, inOther)
  t.equal(after.status, 200)
  t.match(after.body, { state: 'open', revisions: [{ number: 1 }] }, 'not revised, withdrawn or integrated')
  t.same((await api('rita', 'GET', `/proposals/${id}`)).body.reviews ?? [], [], 'no review recorded')

  // A demo proposal revised with a workspace of other: the workspace is the hidden object.
  const wsDemo = (await api('alice', 'POST', '/repos/demo/workspaces', {}, inDemo)).body.id as string
  t.equal(
    (await api('alice', 'PUT', `/workspaces/${wsDemo}/files`, { path: 'a.txt', content: 'a\n' }, inDemo)).status,
    200,
  )
  const mine = await api('alice', 'POST', `/workspaces/${wsDemo}/proposals`, { title: 'in demo' }, inDemo)
  t.equal(mine.status, 201, 'the same header serves its own repository')
  hidden(
    t,
    await api('alice', 'POST', `/proposals/${mine.body.id}/revisions`, { workspace: wsOther }, inDemo),
    'workspace',
    wsOther,
    'revise with a foreign workspace',
  )
})

t.test('tasks, runs and leases of another repository: 404; AGWP-Run of another repository: 403', async (t) => {
  const ctx = server.ctx
  const task = (await createTask(ctx, 'human:root', 'other', { title: 'other task' })).id
  hidden(t, await api('alice', 'GET', `/tasks/${task}`, undefined, inDemo), 'task', task, 'GET task')
  hidden(t, await api('alice', 'POST', `/tasks/${task}/claim`, {}, inDemo), 'task', task, 'claim')
  t.equal((await api('alice', 'GET', `/tasks/${task}`)).body.state, 'open', 'still open')

  const run = (await api('alice', 'POST', `/tasks/${task}/claim`, {}, inOther)).body.run_id as string
  t.ok(run, 'claimed with the matching header')
  for (const [method, p, body] of [
    ['GET', `/runs/${run}`],
    ['POST', `/runs/${run}/heartbeat`, {}],
    ['POST', `/runs/${run}/notes`, { body: 'x' }],
    ['POST', `/runs/${run}/release`, { outcome: 'done' }],
  ] as [string, string, unknown?][]) {
    hidden(t, await api('alice', method, p, body, inDemo), 'run', run, `${method} ${p}`)
  }
  const r = await api('alice', 'GET', `/runs/${run}`, undefined, inOther)
  t.match(r.body, { state: 'active', notes: [] }, 'run untouched')

  const inRun = await api('alice', 'GET', '/whoami', undefined, { ...inDemo, 'agwp-run': run })
  t.equal(inRun.status, 403, 'a run of another repository cannot be acted within')
  t.equal(inRun.body.error.message, `run '${run}' does not exist in repository 'demo'`)
  t.equal((await api('alice', 'GET', '/whoami', undefined, { ...inOther, 'agwp-run': run })).status, 200)

  const lease = await api('alice', 'POST', '/repos/other/leases', { paths: ['lib/**'] }, inOther)
  t.equal(lease.status, 201)
  hidden(
    t,
    await api('alice', 'DELETE', `/leases/${lease.body.id}`, undefined, inDemo),
    'lease',
    lease.body.id,
    'release lease',
  )
  t.equal((await api('alice', 'GET', '/repos/other/leases')).body.leases.length, 1, 'lease still live')
  t.equal((await api('alice', 'DELETE', `/leases/${lease.body.id}`, undefined, inOther)).status, 200)
})

t.test('a repository in the path other than AGWP-Repo: 403', async (t) => {
  const routes: [string, string, unknown?][] = [
    ['GET', '/repos/other'],
    ['GET', '/repos/other/log'],
    ['GET', '/repos/other/file?path=README.md'],
    ['GET', '/repos/other/tree'],
    ['GET', '/repos/other/search?q=hello'],
    ['GET', '/repos/other/proposals'],
    ['GET', '/repos/other/tasks'],
    ['GET', '/repos/other/leases'],
    ['POST', '/repos/other/workspaces', {}],
    ['POST', '/repos/other/leases', { paths: ['x'] }],
  ]
  for (const [method, p, body] of routes) {
    const r = await api('alice', method, p, body, inDemo)
    t.equal(r.status, 403, `${method} ${p}`)
    t.equal(
      r.body.error.message,
      "this request is limited to repository 'demo' (AGWP-Repo), not 'other'",
      `${method} ${p}: message`,
    )
  }
  t.equal((await api('alice', 'GET', '/repos/demo/log', undefined, inDemo)).status, 200, 'its own repository is served')
  t.same(
    (await api('alice', 'GET', '/repos', undefined, inDemo)).body.repos.map((x: { name: string }) => x.name),
    ['demo'],
    '/repos lists only the header repository',
  )
  t.same(
    (await api('alice', 'GET', '/repos')).body.repos.map((x: { name: string }) => x.name).sort(),
    ['demo', 'other'],
    'without the header: both',
  )
  const bad = await api('alice', 'GET', '/repos/demo', undefined, { 'agwp-repo': '../x' })
  t.equal(bad.status, 422, 'a malformed AGWP-Repo is invalid')
  t.equal(bad.body.error.code, 'invalid')
})
