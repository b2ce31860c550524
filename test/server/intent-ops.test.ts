import t from 'tap'
import { fixture, journalStore } from './helpers.ts'
import { startServer } from '../../server/src/http.ts'
import type { Op } from '../../server/src/state.ts'

// An intent records what changes, never a copy of state that later requests may change:
// proposal A journals its intent, proposal B on the same workspace completes, A's ref
// moves and the server dies before A's record is written. Start-up completes A from its
// intent, and B (acknowledged) must still be in the workspace's list.

const fx = await fixture()
t.teardown(fx.close)

t.test('an intent replayed at start-up keeps proposals acknowledged after it', async (t) => {
  const { api, server } = fx
  const ws = (await api('alice', 'POST', '/repos/demo/workspaces', {})).body.id as string
  t.equal((await api('alice', 'PUT', `/workspaces/${ws}/files`, { path: 'a.txt', content: 'a\n' })).status, 200)

  // Hold the first proposal's ref update until the second proposal is acknowledged.
  const repo = server.ctx.repos.get('demo')
  const realCas = repo.casRef.bind(repo)
  let release!: () => void
  const gate = new Promise<void>((r) => (release = r))
  let held: string | undefined
  repo.casRef = async (ref, next, expected, env) => {
    if (held === undefined) {
      held = ref
      await gate
    }
    return realCas(ref, next, expected, env)
  }
  // The server "dies" right after the held ref moved: its record line is never written.
  const store = journalStore(server.ctx)
  const realCommit = store.commit.bind(store)
  let crashed = false
  store.commit = (ops: Op[]) => {
    const completes = ops.some((o) => o.c === 'intents' && 'v' in o && o.v === null && o.k === `demo:${held}`)
    if (completes && !crashed) {
      crashed = true
      throw new Error('simulated crash before the record of the ref update')
    }
    realCommit(ops)
  }

  const a = api('alice', 'POST', `/workspaces/${ws}/proposals`, { title: 'A' })
  while (held === undefined) await new Promise((r) => setTimeout(r, 5))
  const b = await api('alice', 'POST', `/workspaces/${ws}/proposals`, { title: 'B' })
  t.equal(b.status, 201, 'B acknowledged')
  release()
  t.equal((await a).status, 500, 'A died between its ref update and its record')
  t.ok(crashed)
  await server.close()

  const again = await startServer({ dataDir: fx.data, host: '127.0.0.1', port: 0, rate: 0, log: () => undefined })
  t.teardown(() => again.close())
  const w = journalStore(again.ctx).get('workspaces', ws)
  const aId = held?.replace('refs/proposals/', '') as string
  t.equal(journalStore(again.ctx).get('proposals', aId)?.state, 'open', 'A was completed from its intent')
  t.same([...(w?.proposals ?? [])].sort(), [aId, b.body.id].sort(), 'both proposals are in the workspace list')
})
