import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { fixture, sh, journalStore } from './helpers.ts'
import { startServer } from '../../server/src/http.ts'
import { Store } from '../../server/src/store.ts'
import type { IntentRec } from '../../server/src/types.ts'

// The integration crash window, reproduced exactly: the server is stopped, the store is
// left with the journaled intent and the target ref is (or is not) moved -- the state a
// kill between `update-ref` and the journal line leaves -- and a new server starts on it.

const fx = await fixture({ policy: { required_approvals: 0 } })
t.teardown(fx.close)
const bare = path.join(fx.data, 'repos/demo.git')

async function propose(api: typeof fx.api, file: string): Promise<{ id: string; head: string; base: string }> {
  const ws = (await api('alice', 'POST', '/repos/demo/workspaces', {})).body.id
  await api('alice', 'PUT', `/workspaces/${ws}/files`, { path: file, content: `${file}\n` })
  const r = await api('alice', 'POST', `/workspaces/${ws}/proposals`, { title: file })
  if (r.status !== 201) throw new Error(`propose ${file}: ${r.status}`)
  return r.body
}

const p1 = await propose(fx.api, 'one.txt')
const p2 = await propose(fx.api, 'two.txt')
const p3 = await propose(fx.api, 'three.txt')
const main0 = sh(bare, 'rev-parse', 'refs/heads/main').trim()
if (p1.base !== main0) throw new Error('p1 is not based on main')
await fx.server.close()

// p1: the ref moved (fast-forward to its head), the record was never written.
// p2: the intent was journaled, the server died before update-ref: nothing moved.
const store = Store.open(path.join(fx.data, 'state'))
const intent = (p: { id: string; head: string }): IntentRec => ({
  repo: 'demo',
  ref: 'refs/heads/main',
  expected: main0,
  next: p.head,
  accept: 'contains',
  ops: [
    { c: 'proposals', k: p.id, at: ['state'], v: 'integrated' },
    {
      c: 'proposals',
      k: p.id,
      at: ['integrated'],
      v: { commit: p.head, strategy: 'fast_forward', by: 'human:mona', at: new Date().toISOString() },
    },
  ],
  created_at: new Date().toISOString(),
})
store.commit([{ c: 'intents', k: 'demo:refs/heads/main', v: intent(p1) }])
store.commit([{ c: 'intents', k: 'demo:refs/proposals/x', v: { ...intent(p2), ref: 'refs/heads/other' } }])
store.close()
sh(bare, 'update-ref', 'refs/heads/main', p1.head, main0)

const logs: string[] = []
const server = await startServer({ dataDir: fx.data, host: '127.0.0.1', port: 0, rate: 0, log: (m) => logs.push(m) })
t.teardown(() => server.close())
const api: typeof fx.api = async (who, method, p, body) => {
  const r = await fetch(server.url + p, {
    method,
    headers: { authorization: `Bearer ${fx.tokens[who]}`, 'content-type': 'application/json' },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  })
  return { status: r.status, body: await r.json(), headers: r.headers }
}

t.test('an intent whose ref moved is completed at start-up', async (t) => {
  const p = (await api('alice', 'GET', `/proposals/${p1.id}`)).body
  t.equal(p.state, 'integrated')
  t.equal(p.integrated.commit, p1.head)
  t.equal(sh(bare, 'rev-parse', 'refs/heads/main').trim(), p1.head)
  t.ok(
    logs.some((l) => /completed pending update of refs\/heads\/main/.test(l)),
    'logged',
  )
  t.equal(journalStore(server.ctx).all('intents').length, 0, 'no intent left')
})

t.test('an intent whose ref did not move is dropped', async (t) => {
  const p = (await api('alice', 'GET', `/proposals/${p2.id}`)).body
  t.equal(p.state, 'open')
  t.ok(logs.some((l) => /dropped pending update of refs\/heads\/other/.test(l)))
  // and the proposal integrates normally afterwards (a merge: main moved past its base)
  const r = await api('mona', 'POST', `/proposals/${p2.id}/integrate`, {})
  t.equal(r.status, 200)
  t.equal(sh(bare, 'rev-parse', 'refs/heads/main').trim(), r.body.commit)
  t.equal((await api('alice', 'GET', `/proposals/${p2.id}`)).body.state, 'integrated')
})

t.test('a refused integration leaves no intent behind and changes nothing', async (t) => {
  const journal = fs.readFileSync(path.join(fx.data, 'state/journal.log'), 'utf8')
  t.match(journal, /"c":"intents","k":"demo:refs\/heads\/main","v":\{/, 'the intent was journaled before the update')
  t.equal(journalStore(server.ctx).all('intents').length, 0)
  // The branch moves behind the server's back after it read the target head: CAS fails.
  const before = sh(bare, 'rev-parse', 'refs/heads/main').trim()
  const moved = sh(bare, 'commit-tree', `${before}^{tree}`, '-p', before, '-m', 'outside').trim()
  const ev = (await api('alice', 'GET', `/proposals/${p3.id}`)).body
  sh(bare, 'update-ref', 'refs/heads/main', moved, before)
  const r = await api('mona', 'POST', `/proposals/${p3.id}/integrate`, { expected_target_head: ev.target_head })
  t.equal(r.status, 409)
  t.equal(journalStore(server.ctx).all('intents').length, 0)
  t.equal((await api('alice', 'GET', `/proposals/${p3.id}`)).body.state, 'open')
})
