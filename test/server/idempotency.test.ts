// Idempotency-Key on every state-changing AGWP endpoint (issue 16), one table: the same key
// twice is one effect and the same answer; the same key with another request is 422 and changes
// nothing; the same key from another principal is another key. State changes are counted at the
// store: a journal commit that touches anything but the idempotency records themselves.
import fs from 'node:fs'
import t from 'tap'
import { fixture, tmpdir, journalStore } from './helpers.ts'
import { startServer } from '../../server/src/http.ts'
import { IdempotencyKeys, fingerprint } from '../../server/src/idempotency.ts'
import { openState } from '../../server/src/open-state.ts'
import type { Op } from '../../server/src/state.ts'
import type { Json } from '../helpers/json.ts'

const fx = await fixture({ server: { rate: 0 } })
t.teardown(fx.close)
const { api } = fx
const store = journalStore(fx.server.ctx)

let effects = 0
const commit = store.commit.bind(store)
store.commit = (ops: Op[]): void => {
  if (ops.some((o) => o.c !== 'idempotency')) effects++
  commit(ops)
}

let n = 0
const freshKey = (): string => `key-${process.pid}-${++n}`
const ok = async (who: string, method: string, p: string, body?: unknown): Promise<Json> => {
  const r = await api(who, method, p, body)
  if (r.status >= 300) throw new Error(`${method} ${p}: ${r.status} ${JSON.stringify(r.body)}`)
  return r.body
}
const workspace = async (file = 'README.md'): Promise<string> => {
  const id = (await ok('alice', 'POST', '/repos/demo/workspaces', {})).id as string
  await ok('alice', 'PUT', `/workspaces/${id}/files`, { path: file, content: `changed ${n}\n` })
  return id
}
const proposal = async (): Promise<string> => {
  const ws = await workspace()
  return (await ok('alice', 'POST', `/workspaces/${ws}/proposals`, { title: `p ${n}` })).id as string
}
const task = async (): Promise<string> => (await ok('admin', 'POST', '/admin/repos/demo/tasks', { title: `t ${n}` })).id
const run = async (): Promise<string> => (await ok('alice', 'POST', `/tasks/${await task()}/claim`, {})).run_id

interface Case {
  /** who sends it */
  who: string
  method: string
  path: string
  body?: unknown
  /** the same endpoint with another body (or, without a body, another query) */
  other: { path?: string; body?: unknown }
}

const CASES: Record<string, () => Promise<Case>> = {
  'workspace create': async () => ({
    who: 'alice',
    method: 'POST',
    path: '/repos/demo/workspaces',
    body: {},
    other: { body: { base: 'main' } },
  }),
  'file write': async () => {
    const ws = await workspace()
    return {
      who: 'alice',
      method: 'PUT',
      path: `/workspaces/${ws}/files`,
      body: { path: 'new.txt', content: 'one\n' },
      other: { body: { path: 'new.txt', content: 'two\n' } },
    }
  },
  'file move': async () => {
    const ws = await workspace('a.txt')
    return {
      who: 'alice',
      method: 'POST',
      path: `/workspaces/${ws}/moves`,
      body: { from: 'a.txt', to: 'b.txt' },
      other: { body: { from: 'a.txt', to: 'c.txt' } },
    }
  },
  'file delete': async () => {
    const ws = await workspace()
    return {
      who: 'alice',
      method: 'DELETE',
      path: `/workspaces/${ws}/files?path=lib%2Futil.ts`,
      other: { path: `/workspaces/${ws}/files?path=logo.bin` },
    }
  },
  'workspace discard': async () => {
    const ws = await workspace()
    return { who: 'alice', method: 'DELETE', path: `/workspaces/${ws}`, other: { path: `/workspaces/${ws}?x=1` } }
  },
  propose: async () => {
    const ws = await workspace()
    return {
      who: 'alice',
      method: 'POST',
      path: `/workspaces/${ws}/proposals`,
      body: { title: 'once' },
      other: { body: { title: 'twice' } },
    }
  },
  revise: async () => {
    const pr = await proposal()
    const ws = await workspace('lib/util.ts')
    return {
      who: 'alice',
      method: 'POST',
      path: `/proposals/${pr}/revisions`,
      body: { workspace: ws },
      other: { body: { workspace: ws, note: 'another' } },
    }
  },
  withdraw: async () => ({
    who: 'alice',
    method: 'POST',
    path: `/proposals/${await proposal()}/withdraw`,
    body: { reason: 'superseded' },
    other: { body: { reason: 'other' } },
  }),
  review: async () => ({
    who: 'rita',
    method: 'POST',
    path: `/proposals/${await proposal()}/reviews`,
    body: { verdict: 'approve' },
    other: { body: { verdict: 'request_changes', body: 'no' } },
  }),
  integrate: async () => {
    const pr = await proposal()
    await ok('rita', 'POST', `/proposals/${pr}/reviews`, { verdict: 'approve' })
    return {
      who: 'mona',
      method: 'POST',
      path: `/proposals/${pr}/integrate`,
      body: {},
      other: { body: { strategy: 'squash' } },
    }
  },
  claim: async () => ({
    who: 'alice',
    method: 'POST',
    path: `/tasks/${await task()}/claim`,
    body: { ttl_s: 60 },
    other: { body: { ttl_s: 61 } },
  }),
  heartbeat: async () => ({
    who: 'alice',
    method: 'POST',
    path: `/runs/${await run()}/heartbeat`,
    body: { ttl_s: 600 },
    other: { body: { ttl_s: 601 } },
  }),
  note: async () => ({
    who: 'alice',
    method: 'POST',
    path: `/runs/${await run()}/notes`,
    body: { body: 'handoff' },
    other: { body: { body: 'another' } },
  }),
  release: async () => ({
    who: 'alice',
    method: 'POST',
    path: `/runs/${await run()}/release`,
    body: { outcome: 'done' },
    other: { body: { outcome: 'blocked' } },
  }),
  'lease acquire': async () => ({
    who: 'alice',
    method: 'POST',
    path: '/repos/demo/leases',
    body: { paths: [`leased-${n}/**`], ttl_s: 60 },
    other: { body: { paths: [`leased-${n}/**`], ttl_s: 61 } },
  }),
  'lease release': async () => {
    const id = (await ok('alice', 'POST', '/repos/demo/leases', { paths: [`gone-${n}/**`] })).id
    return { who: 'alice', method: 'DELETE', path: `/leases/${id}`, other: { path: `/leases/${id}?x=1` } }
  },
  'admin task create': async () => ({
    who: 'admin',
    method: 'POST',
    path: '/admin/repos/demo/tasks',
    body: { title: 'made once' },
    other: { body: { title: 'made twice' } },
  }),
}

for (const [name, make] of Object.entries(CASES)) {
  t.test(name, async (t) => {
    const c = await make()
    const key = freshKey()
    const send = (who: string, path: string, body: unknown) =>
      api(who, c.method, path, body, { 'idempotency-key': key })

    const before = effects
    const first = await send(c.who, c.path, c.body)
    t.ok(first.status >= 200 && first.status < 300, `applied: ${first.status} ${JSON.stringify(first.body)}`)
    // A request may commit more than once (an intent, then its record): count what it did.
    const did = effects - before
    t.ok(did >= 1, 'it changed state')
    const again = await send(c.who, c.path, c.body)
    t.equal(again.status, first.status, 'the repeat gets the original status')
    t.same(again.body, first.body, 'and the original body')
    t.equal(again.headers.get('idempotent-replayed'), 'true', 'marked as a replay')
    t.equal(effects, before + did, 'and changes nothing')

    const other = await send(c.who, c.other.path ?? c.path, c.other.body ?? c.body)
    t.equal(other.status, 422, 'the same key for another request is refused')
    t.match(other.body, { error: { code: 'invalid', details: { header: 'Idempotency-Key' } } })
    t.equal(effects, before + did, 'and changes nothing')

    // The same key from someone else is their own key: never the first principal's answer.
    const who = c.who === 'alice' ? 'bob' : 'alice'
    const theirs = await send(who, c.path, c.body)
    t.equal(theirs.headers.get('idempotent-replayed'), null, `${who} is not answered from ${c.who}'s key`)
    t.notSame(theirs.body, first.body)
  })
}

t.test('two copies of one request at the same moment: one runs, both get its answer', async (t) => {
  const id = await task()
  const key = freshKey()
  const before = effects
  const [a, b] = await Promise.all(
    [0, 1].map(() => api('alice', 'POST', `/tasks/${id}/claim`, {}, { 'idempotency-key': key })),
  )
  t.equal(a?.status, 201)
  t.same(b?.body, a?.body)
  t.equal(effects, before + 1)
})

t.test('a refused request is answered the same way again, without running again', async (t) => {
  const id = await task()
  await ok('bob', 'POST', `/tasks/${id}/claim`, {})
  const key = freshKey()
  const first = await api('alice', 'POST', `/tasks/${id}/claim`, {}, { 'idempotency-key': key })
  t.equal(first.status, 409)
  const again = await api('alice', 'POST', `/tasks/${id}/claim`, {}, { 'idempotency-key': key })
  t.equal(again.status, 409)
  t.same(again.body, first.body)
  t.equal(again.headers.get('idempotent-replayed'), 'true')
})

t.test('a malformed key is refused before anything runs', async (t) => {
  const before = effects
  for (const bad of ['', 'has space', 'x'.repeat(256), 'tab\there']) {
    const r = await api('alice', 'POST', '/repos/demo/workspaces', {}, { 'idempotency-key': bad })
    t.equal(r.status, 422, JSON.stringify(bad))
    t.match(r.body, { error: { code: 'invalid', details: { header: 'Idempotency-Key' } } })
  }
  t.equal(effects, before)
})

t.test('keys are durable: a repeat after a restart gets the original answer', async (t) => {
  const fx2 = await fixture({ server: { rate: 0 } })
  t.teardown(fx2.close)
  const id = (await fx2.api('admin', 'POST', '/admin/repos/demo/tasks', { title: 'durable' })).body.id
  const key = freshKey()
  const first = await fx2.api('alice', 'POST', `/tasks/${id}/claim`, {}, { 'idempotency-key': key })
  t.equal(first.status, 201)
  // Reopen the data directory the way a restarted server does.
  await fx2.server.close()
  const again = await startServer({ dataDir: fx2.data, host: '127.0.0.1', port: 0, rate: 0, log: () => undefined })
  t.teardown(again.close)
  const r = await fetch(`${again.url}/tasks/${id}/claim`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${fx2.tokens['alice']}`,
      'content-type': 'application/json',
      'idempotency-key': key,
    },
    body: '{}',
  })
  t.equal(r.status, 201)
  t.same(await r.json(), first.body, 'the same run, not a 409 and not a second run')
})

t.test('a key is remembered for a bounded time, then forgotten and swept', async (t) => {
  const dir = tmpdir('idem')
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
  const state = await openState({ dataDir: dir })
  t.teardown(() => state.close())
  const s = journalStore({ state })
  const fp = fingerprint({ method: 'POST', url: '/x', run: undefined, repo: undefined, body: Buffer.from('{}') })
  const live = new IdempotencyKeys(state, 60_000)
  const first = await live.begin('agent:a', 'k', fp)
  if (first.kind !== 'run') throw new Error('a new key runs')
  await first.finish({ status: 201, body: { n: 1 } })
  t.equal((await live.begin('agent:a', 'k', fp)).kind, 'answer', 'within its time: answered from the key')
  t.equal(s.all('idempotency').length, 1)

  const expired = new IdempotencyKeys(state, -1)
  const isExpired = (r: { expires_at: string }): boolean => Date.parse(r.expires_at) <= Date.now()
  for (const k of ['k2', 'k4']) {
    const b = await expired.begin('agent:a', k, fp)
    if (b.kind !== 'run') throw new Error('a new key runs')
    await b.finish({ status: 201, body: { n: 2 } })
  }
  t.equal(s.all('idempotency').filter(isExpired).length, 2, 'expired records are still stored…')
  t.equal((await expired.begin('agent:a', 'k2', fp)).kind, 'run', 'past its time: a new request')
  t.equal(s.all('idempotency').filter(isExpired).length, 1, '…the one asked for again is dropped at once')
  // A fresh instance sweeps at its first use: the expired records leave the store.
  await new IdempotencyKeys(state, 60_000).begin('agent:a', 'k3', fp)
  t.notOk(s.all('idempotency').some(isExpired), '…and a sweep removes the rest')
  t.equal(s.all('idempotency').length, 1, 'the live one stays')
})
