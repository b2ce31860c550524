import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import fc from 'fast-check'
import { Store, type Op } from '../../server/src/store.ts'
import { tmpdir } from './helpers.ts'
import type { ProposalRec, WorkspaceRec } from '../../server/src/types.ts'

// The store keeps only its recently used records as objects and the rest as JSON text
// (packed). Packing must be invisible: a store that packs all but one record of each
// collection answers every read exactly as one that packs nothing, after any sequence of
// puts, field sets, list additions and deletes, and again after a restart.

const root = tmpdir('store-packing')
t.teardown(() => fs.rmSync(root, { recursive: true, force: true }))

const KEYS = ['k0', 'k1', 'k2', 'k3', 'k4']
const REPOS = ['alpha', 'beta']
// '__proto__' and 'constructor' are file names an agent may write: they must stay plain fields.
const PATHS = ['a.txt', 'd/b.txt', '__proto__', 'constructor']

const workspace = (id: string, repo: string): WorkspaceRec => ({
  id,
  repo,
  base: null,
  base_ref: 'main',
  owner: 'agent:a',
  state: 'open',
  changes: {},
  proposals: [],
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
})
const proposal = (id: string, repo: string, state: ProposalRec['state']): ProposalRec => ({
  id,
  repo,
  title: `p ${id} é`,
  description: '',
  reasoning: '',
  state,
  author: 'agent:a',
  author_principal: 'agent:a',
  target: 'main',
  base: null,
  head: '1'.repeat(40),
  workspace: 'k0',
  revisions: [],
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
})

/** Everything a caller can read from a store, as text to compare. */
function view(s: Store): string {
  const out: unknown[] = []
  for (const c of ['workspaces', 'proposals'] as const) {
    out.push(KEYS.map((k) => s.get(c, k) ?? null))
    out.push(s.all(c).sort((a, b) => a.id.localeCompare(b.id)))
    out.push(s.entries(c).sort(([a], [b]) => a.localeCompare(b)))
  }
  for (const repo of REPOS)
    for (const state of ['open', 'integrated', 'withdrawn'])
      out.push(s.idsByIndex('proposalsByRepoState', `${repo}\n${state}`).sort())
  out.push(s.get('counters', 'n') ?? null)
  return JSON.stringify(out)
}

t.test('a store that packs answers as one that does not, before and after a restart', async (t) => {
  const key = fc.constantFrom(...KEYS)
  const repo = fc.constantFrom(...REPOS)
  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.record({ k: key, r: repo }).map(({ k, r }): Op => ({ c: 'workspaces', k, v: workspace(k, r) })),
    fc
      .record({ k: key, p: fc.constantFrom(...PATHS), size: fc.nat(99), del: fc.boolean() })
      .map(
        ({ k, p, size, del }): Op =>
          del
            ? { c: 'workspaces', k, at: ['changes', p] }
            : { c: 'workspaces', k, at: ['changes', p], v: { blob: '2'.repeat(40), mode: '100644', size } },
      ),
    fc.record({ k: key, pr: key }).map(({ k, pr }): Op => ({ c: 'workspaces', k, at: ['proposals'], add: pr })),
    fc
      .record({ k: key, r: repo, st: fc.constantFrom('open', 'integrated', 'withdrawn' as const) })
      .map(({ k, r, st }): Op => ({ c: 'proposals', k, v: proposal(k, r, st) })),
    fc
      .record({ k: key, st: fc.constantFrom('open', 'integrated', 'withdrawn') })
      .map(({ k, st }): Op => ({ c: 'proposals', k, at: ['state'], v: st })),
    fc
      .record({ k: key, ws: fc.boolean() })
      .map(({ k, ws }): Op => (ws ? { c: 'workspaces', k, v: null } : { c: 'proposals', k, v: null })),
    fc.nat(1000).map((n): Op => ({ c: 'counters', k: 'n', v: n })),
  )
  // Reads between commits unpack records and move them in the hot set: they are part of the sequence.
  const step = fc.oneof(
    fc.array(op, { minLength: 1, maxLength: 3 }).map((ops) => ({ ops })),
    fc.record({ read: key, ws: fc.boolean() }),
  )
  let n = 0
  const run = (): void =>
    fc.assert(
      fc.property(fc.array(step, { maxLength: 30 }), (steps) => {
        const dirs = [path.join(root, `${n}-packs`), path.join(root, `${n++}-plain`)]
        const open = (): Store[] =>
          dirs.map((d, i) => Store.open(d, { log: () => undefined, hotRecords: i === 0 ? 1 : 1000 }))
        let [packs, plain] = open() as [Store, Store]
        try {
          for (const s of steps) {
            if ('ops' in s) {
              packs.commit(s.ops)
              plain.commit(s.ops)
            } else {
              packs.get(s.ws ? 'workspaces' : 'proposals', s.read)
              plain.get(s.ws ? 'workspaces' : 'proposals', s.read)
            }
            if (view(packs) !== view(plain)) return false
          }
        } finally {
          packs.close()
          plain.close()
        }
        ;[packs, plain] = open() as [Store, Store]
        try {
          return view(packs) === view(plain)
        } finally {
          packs.close()
          plain.close()
        }
      }),
      { numRuns: 150 },
    )
  t.doesNotThrow(run, 'the same records, lists and index answers')
})

t.test('a record handed out is never changed by packing, unpacking or later writes', async (t) => {
  const s = Store.open(path.join(root, 'handed-out'), { log: () => undefined, hotRecords: 1 })
  t.teardown(() => s.close())
  s.commit([{ c: 'workspaces', k: 'ws-1', v: workspace('ws-1', 'alpha') }])
  s.commit([{ c: 'workspaces', k: 'ws-1', at: ['changes', '__proto__'], v: { blob: 'b', mode: '100644', size: 1 } }])
  const held = s.get('workspaces', 'ws-1') as WorkspaceRec
  const before = JSON.stringify(held)
  // ws-2 takes the one hot place: ws-1 is packed, then unpacked by the set below.
  s.commit([{ c: 'workspaces', k: 'ws-2', v: workspace('ws-2', 'beta') }])
  s.commit([{ c: 'workspaces', k: 'ws-1', at: ['changes', 'x'], v: null }])
  t.equal(JSON.stringify(held), before, 'the copy a caller holds is as it was')
  const now = s.get('workspaces', 'ws-1') as WorkspaceRec
  t.not(now, held)
  t.same(Object.keys(now.changes), ['__proto__', 'x'], 'a file named __proto__ is a plain field after a round trip')
  t.equal(Object.getPrototypeOf(now.changes), Object.prototype)
})
