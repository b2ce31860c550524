import t from 'tap'
import { fixture } from './helpers.ts'

// A state transition is a compare-and-set under one lock: when integrate and withdraw
// race, exactly one wins and the other gets 409 naming the state it lost to.

const fx = await fixture({ policy: { required_approvals: 0 } })
t.teardown(fx.close)
const { api } = fx

t.test('integrate vs withdraw: one winner, the loser sees its state', async (t) => {
  const outcomes = new Map<string, number>()
  for (let round = 0; round < 12; round++) {
    const ws = (await api('alice', 'POST', '/repos/demo/workspaces', {})).body.id
    await api('alice', 'PUT', `/workspaces/${ws}/files`, { path: `race/${round}.txt`, content: `${round}\n` })
    const id = (await api('alice', 'POST', `/workspaces/${ws}/proposals`, { title: `race ${round}` })).body.id
    const integrate = api('mona', 'POST', `/proposals/${id}/integrate`, {})
    await new Promise((r) => setTimeout(r, (round * 7) % 40))
    const withdraw = api('alice', 'POST', `/proposals/${id}/withdraw`, { reason: 'race' })
    const [i, w] = await Promise.all([integrate, withdraw])
    const statuses = [i.status, w.status].sort().join(',')
    t.equal(statuses, '200,409', `round ${round}: exactly one winner (integrate ${i.status}, withdraw ${w.status})`)
    const final = (await api('alice', 'GET', `/proposals/${id}`)).body
    if (i.status === 200) {
      t.equal(final.state, 'integrated')
      t.equal(final.withdrawn_reason, undefined, 'an integrated proposal carries no withdrawn_reason')
      t.equal(w.body.error?.details?.state, 'integrated', 'withdraw lost to integrated')
    } else {
      t.equal(final.state, 'withdrawn')
      t.equal(i.body.error?.details?.state, 'withdrawn', 'integrate lost to withdrawn')
    }
    outcomes.set(final.state, (outcomes.get(final.state) ?? 0) + 1)
  }
  t.comment(`outcomes: ${JSON.stringify(Object.fromEntries(outcomes))}`)
})
