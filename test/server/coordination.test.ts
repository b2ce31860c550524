import t from 'tap'
import { fixture, contractErrors } from './helpers.ts'
import { createTask } from '../../server/src/coordination.ts'

const fx = await fixture({ server: { rate: 0 } })
t.teardown(fx.close)
const { api } = fx
const ctx = fx.server.ctx
const newTask = async (title: string, paths: string[] = []): Promise<string> =>
  (await createTask(ctx, 'human:root', 'demo', { title, paths })).id

t.test('tasks: list, claim, heartbeat, notes, release', async (t) => {
  const id = await newTask('first', ['lib/**'])
  const created = await api('admin', 'POST', '/admin/repos/demo/tasks', { title: 'via admin', body: 'b' })
  t.equal(created.status, 201)
  t.equal(contractErrors('Task', created.body), '')
  t.equal((await api('alice', 'POST', '/admin/repos/demo/tasks', { title: 'nope' })).status, 403)
  const list = await api('alice', 'GET', '/repos/demo/tasks?state=open')
  t.equal(contractErrors('TaskList', list.body), '')
  t.ok(list.body.tasks.some((x: { id: string }) => x.id === id))
  const claim = await api('alice', 'POST', `/tasks/${id}/claim`, { ttl_s: 60 })
  t.equal(claim.status, 201)
  t.equal(contractErrors('Run', claim.body), '')
  const run = claim.body.run_id as string
  t.equal(claim.body.actor, `agent:alice#${run}`)
  const again = await api('bob', 'POST', `/tasks/${id}/claim`, {})
  t.equal(again.status, 409, 'claimed task cannot be claimed again')
  t.equal(again.body.error.details.run_id, run)
  const task = await api('bob', 'GET', `/tasks/${id}`)
  t.match(task.body, { state: 'claimed', run_id: run, claimed_by: `agent:alice#${run}` })
  t.equal((await api('reed', 'POST', `/tasks/${id}/claim`, {})).status, 403, 'read-only token cannot claim')

  const before = Date.parse(claim.body.lease_expires_at)
  const hb = await api('alice', 'POST', `/runs/${run}/heartbeat`, { ttl_s: 600 })
  t.equal(hb.status, 200)
  t.ok(Date.parse(hb.body.lease_expires_at) > before, 'heartbeat renews the lease')
  t.equal((await api('bob', 'POST', `/runs/${run}/heartbeat`, {})).status, 403, 'not your run')

  const note = await api('alice', 'POST', `/runs/${run}/notes`, { body: 'handoff: half done' })
  t.equal(note.status, 201)
  t.equal(contractErrors('Note', note.body), '')
  t.equal((await api('alice', 'POST', `/runs/${run}/notes`, { body: '' })).status, 422)

  const rel = await api('alice', 'POST', `/runs/${run}/release`, { outcome: 'done', note: 'finished' })
  t.equal(rel.status, 200)
  t.equal(rel.body.state, 'released')
  t.equal(rel.body.notes.length, 2)
  t.equal((await api('alice', 'GET', `/tasks/${id}`)).body.state, 'done')
  t.equal((await api('alice', 'POST', `/runs/${run}/heartbeat`, {})).status, 409, 'released run cannot be renewed')
  t.equal((await api('alice', 'POST', `/runs/${run}/release`, { outcome: 'maybe' })).status, 422)

  const ab = await newTask('to abandon')
  const r2 = (await api('bob', 'POST', `/tasks/${ab}/claim`, {})).body.run_id
  await api('bob', 'POST', `/runs/${r2}/release`, { outcome: 'abandoned' })
  t.equal((await api('bob', 'GET', `/tasks/${ab}`)).body.state, 'open', 'abandoned task returns to the pool')
})

t.test('an expired run frees its task and loses its authority', async (t) => {
  const id = await newTask('expiring')
  const run = (await api('alice', 'POST', `/tasks/${id}/claim`, { ttl_s: 10 })).body.run_id as string
  t.equal((await api('alice', 'GET', '/whoami', undefined, { 'AGWP-Run': run })).body.actor, `agent:alice#${run}`)
  // Move the lease deadline into the past instead of sleeping.
  const rec = await ctx.state.get('runs', run)
  if (!rec) throw new Error('run missing')
  await ctx.state.tx([], async (x) =>
    x.write({ c: 'runs', k: run, v: { ...rec, lease_expires_at: new Date(Date.now() - 1000).toISOString() } }),
  )
  t.equal((await api('bob', 'GET', `/tasks/${id}`)).body.state, 'open')
  t.equal((await api('alice', 'GET', `/runs/${run}`)).body.state, 'expired')
  const denied = await api('alice', 'GET', '/whoami', undefined, { 'AGWP-Run': run })
  t.equal(denied.status, 403, 'expired run cannot be acted within')
  const reclaim = await api('bob', 'POST', `/tasks/${id}/claim`, {})
  t.equal(reclaim.status, 201)
  t.equal((await ctx.state.get('runs', run))?.state, 'expired', 'old run recorded as expired')
})

t.test('AGWP-Run attributes actions and is refused for another principal', async (t) => {
  const id = await newTask('attributed')
  const run = (await api('alice', 'POST', `/tasks/${id}/claim`, {})).body.run_id as string
  const h = { 'AGWP-Run': run }
  const ws = await api('alice', 'POST', '/repos/demo/workspaces', {}, h)
  t.equal(ws.body.run_id, run)
  await api('alice', 'PUT', `/workspaces/${ws.body.id}/files`, { path: 'attr.txt', content: 'a\n' }, h)
  const p = await api('alice', 'POST', `/workspaces/${ws.body.id}/proposals`, { title: 'attributed', task: id }, h)
  t.equal(p.body.author, `agent:alice#${run}`)
  t.equal(p.body.task, id)
  const stolen = await api('bob', 'GET', '/whoami', undefined, h)
  t.equal(stolen.status, 403)
  t.match(stolen.body.error.message, /another principal/)
  t.equal((await api('bob', 'GET', '/whoami', undefined, { 'AGWP-Run': 'run-9999' })).status, 403)
})

t.test('path leases', async (t) => {
  const a = await api('alice', 'POST', '/repos/demo/leases', { paths: ['lib/**'], ttl_s: 60 })
  t.equal(a.status, 201)
  t.equal(contractErrors('Lease', a.body), '')
  t.equal(a.body.holder, 'agent:alice')
  const clash = await api('bob', 'POST', '/repos/demo/leases', { paths: ['lib/util.ts'] })
  t.equal(clash.status, 409)
  t.equal(clash.body.error.details.lease, a.body.id)
  const clash2 = await api('bob', 'POST', '/repos/demo/leases', { paths: ['lib/*.ts'] })
  t.equal(clash2.status, 409, 'two overlapping globs')
  const disjoint = await api('bob', 'POST', '/repos/demo/leases', { paths: ['docs/**', 'README.md'] })
  t.equal(disjoint.status, 201, 'disjoint globs are fine')
  const own = await api('alice', 'POST', '/repos/demo/leases', { paths: ['lib/util.ts'] })
  t.equal(own.status, 201, 'same holder may extend')
  t.equal((await api('alice', 'POST', '/repos/demo/leases', { paths: ['../x'] })).status, 422)
  const list = await api('reed', 'GET', '/repos/demo/leases')
  t.equal(contractErrors('LeaseList', list.body), '')
  t.equal(list.body.leases.length, 3)
  t.equal((await api('bob', 'DELETE', `/leases/${a.body.id}`)).status, 403, 'not your lease')
  t.equal((await api('alice', 'DELETE', `/leases/${a.body.id}`)).status, 200)
  t.equal((await api('alice', 'DELETE', `/leases/${own.body.id}`)).status, 200)
  t.equal(
    (await api('bob', 'POST', '/repos/demo/leases', { paths: ['lib/util.ts'] })).status,
    201,
    'free after release',
  )
  t.equal((await api('alice', 'DELETE', '/leases/lease-999')).status, 404)
})

t.test('rate limiting answers 429 with Retry-After', async (t) => {
  const limited = await fixture({ server: { rate: 1, burst: 3 } })
  t.teardown(limited.close)
  const codes: number[] = []
  let retry: string | null = null
  for (let i = 0; i < 6; i++) {
    const r = await limited.api('alice', 'GET', '/whoami')
    codes.push(r.status)
    if (r.status === 429) {
      retry = r.headers.get('retry-after')
      t.equal(r.body.error.code, 'rate_limited')
    }
  }
  t.same(codes.slice(0, 3), [200, 200, 200])
  t.ok(codes.includes(429))
  t.match(retry, /^[1-9][0-9]*$/)
  t.equal((await limited.api('bob', 'GET', '/whoami')).status, 200, 'per token')
})
