import t from 'tap'
import { fixture, journalStore } from './helpers.ts'
import { createTask } from '../../server/src/coordination.ts'
import { adminMint, adminSetRole } from '../../server/src/admin.ts'

const fx = await fixture({ policy: { required_approvals: 0 } })
t.teardown(fx.close)
const { api } = fx

t.test('20 simultaneous claims of one task: exactly one run', async (t) => {
  const ctx = fx.server.ctx
  const tokens: string[] = []
  for (let i = 0; i < 20; i++) {
    tokens.push(
      (
        await adminMint(ctx.state, {
          principal: `agent:c${i}`,
          scopes: ['read', 'coordinate'],
          repos: ['demo'],
          ttl_s: 600,
        })
      ).token,
    )
    await adminSetRole(ctx.state, 'demo', `agent:c${i}`, 'contributor')
  }
  const id = (await createTask(ctx, 'human:root', 'demo', { title: 'contended' })).id
  const results = await Promise.all(tokens.map((tok) => api(tok, 'POST', `/tasks/${id}/claim`, {})))
  const codes = results.map((r) => r.status).sort()
  t.equal(codes.filter((c) => c === 201).length, 1, 'one winner')
  t.equal(codes.filter((c) => c === 409).length, 19, 'everyone else gets conflict')
  const runs = journalStore(ctx)
    .all('runs')
    .filter((r) => r.task === id)
  t.equal(runs.length, 1, 'one run recorded')
  t.equal((await api('alice', 'GET', `/tasks/${id}`)).body.run_id, runs[0]?.run_id)
})

t.test('2 simultaneous integrations: exactly one', async (t) => {
  const ids: string[] = []
  for (const [who, file] of [
    ['alice', 'a.txt'],
    ['bob', 'b.txt'],
  ] as const) {
    const ws = (await api(who, 'POST', '/repos/demo/workspaces', {})).body.id
    await api(who, 'PUT', `/workspaces/${ws}/files`, { path: file, content: file })
    ids.push((await api(who, 'POST', `/workspaces/${ws}/proposals`, { title: file })).body.id)
  }
  const head = (await api('mona', 'GET', '/repos/demo')).body.head
  const res = await Promise.all(
    ids.map((id) => api('mona', 'POST', `/proposals/${id}/integrate`, { expected_target_head: head })),
  )
  const codes = res.map((r) => r.status).sort()
  t.same(codes, [200, 409])
  const loser = res.find((r) => r.status === 409)
  t.equal(loser?.body.error.code, 'conflict')
  const states = await Promise.all(ids.map(async (id) => (await api('mona', 'GET', `/proposals/${id}`)).body.state))
  t.same(states.sort(), ['integrated', 'open'])

  // Same proposal integrated twice at once: still one.
  const ws = (await api('alice', 'POST', '/repos/demo/workspaces', {})).body.id
  await api('alice', 'PUT', `/workspaces/${ws}/files`, { path: 'c.txt', content: 'c' })
  const pid = (await api('alice', 'POST', `/workspaces/${ws}/proposals`, { title: 'c' })).body.id
  const twice = await Promise.all([1, 2].map(() => api('mona', 'POST', `/proposals/${pid}/integrate`, {})))
  t.same(twice.map((r) => r.status).sort(), [200, 409])
})

t.test('20 simultaneous overlapping leases, each outside a run: exactly one granted', async (t) => {
  const ctx = fx.server.ctx
  const tokens: string[] = []
  for (let i = 0; i < 20; i++) {
    const principal = `agent:l${i}`
    tokens.push(
      (await adminMint(ctx.state, { principal, scopes: ['read', 'coordinate'], repos: ['demo'], ttl_s: 600 })).token,
    )
    await adminSetRole(ctx.state, 'demo', principal, 'contributor')
  }
  const results = await Promise.all(
    tokens.map((tok, i) => api(tok, 'POST', '/repos/demo/leases', { paths: [i % 2 ? 'race/**' : 'race/x.ts'] })),
  )
  const codes = results.map((r) => r.status)
  t.equal(codes.filter((c) => c === 201).length, 1, 'one lease granted')
  t.equal(codes.filter((c) => c === 409).length, 19, 'every other one overlaps it')
  const live = journalStore(ctx)
    .byIndex('unreleasedLeasesByRepo', 'demo')
    .filter((l) => l.paths.some((p) => p.startsWith('race/')))
  t.equal(live.length, 1, 'one lease recorded')
})
