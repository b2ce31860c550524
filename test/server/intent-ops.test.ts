import t from 'tap'
import { fixture, journalStore } from './helpers.ts'
import { startServer } from '../../server/src/http.ts'
import type { Op } from '../../server/src/state.ts'

// An intent records what changes, never a copy of state that later requests may change:
// proposal A journals its intent, its ref moves and the commit of its record fails (as if
// the server died there; this one goes on serving). Proposal B on the same workspace is
// then acknowledged. Start-up completes A from its intent, and B must still be in the
// workspace's list. (A and B cannot overlap in time: both hold the repository's lock.)

const fx = await fixture()
t.teardown(fx.close)

t.test('an intent replayed at start-up keeps proposals acknowledged after it', async (t) => {
  const { api, server } = fx
  const ws = (await api('alice', 'POST', '/repos/demo/workspaces', {})).body.id as string
  t.equal((await api('alice', 'PUT', `/workspaces/${ws}/files`, { path: 'a.txt', content: 'a\n' })).status, 200)

  // The first ref update's record is never written: the commit that carries it fails.
  const store = journalStore(server.ctx)
  const realCommit = store.commit.bind(store)
  let held: string | undefined
  store.commit = (ops: Op[]) => {
    const done = ops.find((o) => o.c === 'intents' && 'v' in o && o.v === null)
    if (done && held === undefined && ops.length > 1) {
      held = done.k.slice('demo:'.length)
      throw new Error('simulated crash before the record of the ref update')
    }
    realCommit(ops)
  }

  const a = await api('alice', 'POST', `/workspaces/${ws}/proposals`, { title: 'A' })
  t.equal(a.status, 500, 'A died between its ref update and its record')
  t.match(held, /^refs\/proposals\//, 'its ref update was the one cut short')
  const b = await api('alice', 'POST', `/workspaces/${ws}/proposals`, { title: 'B' })
  t.equal(b.status, 201, 'B acknowledged')
  await server.close()

  const again = await startServer({ dataDir: fx.data, host: '127.0.0.1', port: 0, rate: 0, log: () => undefined })
  t.teardown(() => again.close())
  const w = journalStore(again.ctx).get('workspaces', ws)
  const aId = held?.replace('refs/proposals/', '') as string
  t.equal(journalStore(again.ctx).get('proposals', aId)?.state, 'open', 'A was completed from its intent')
  t.same([...(w?.proposals ?? [])].sort(), [aId, b.body.id].sort(), 'both proposals are in the workspace list')
})
