import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import fc from 'fast-check'
import type { Op } from '../../server/src/state.ts'
import { Store, type StoreOptions } from '../../server/src/store.ts'
import { proposalRecord, tmpdir, workspaceRecord } from './helpers.ts'
import type { ProposalRec, WorkspaceRec } from '../../server/src/types.ts'

// The store keeps only its recently used records in memory as objects; the others are
// read back from disk: from the last snapshot, or from a spill file for those changed since
// (kept in memory as JSON text when the spill file cannot take them). That must be
// invisible: a store that keeps all but one record of each collection out of memory answers
// every read exactly as one that keeps everything, after any sequence of puts, field sets,
// list additions and deletes, with or without compactions in between, with spill writes
// that fail now and then, and again after a restart.

const root = tmpdir('store-cold')
t.teardown(() => fs.rmSync(root, { recursive: true, force: true }))

const KEYS = ['k0', 'k1', 'k2', 'k3', 'k4']
const REPOS = ['alpha', 'beta']
// '__proto__' and 'constructor' are file names an agent may write: they must stay plain fields.
const PATHS = ['a.txt', 'd/b.txt', '__proto__', 'constructor']

const workspace = (id: string, repo: string): WorkspaceRec => workspaceRecord(id, repo)
const proposal = (id: string, repo: string, state: ProposalRec['state']): ProposalRec =>
  proposalRecord(id, repo, { state, title: `p ${id} é`, head: '1'.repeat(40), workspace: 'k0' })

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

/** Spill writes that fail now and then, by throwing or by writing nothing (a full disk). */
function flakySpill(): NonNullable<StoreOptions['spillIo']> {
  let n = 0
  return {
    write: (fd, buf, len, at) => {
      n++
      if (n % 6 === 0) throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' })
      if (n % 6 === 3) return 0
      return fs.writeSync(fd, buf, 0, len, at)
    },
  }
}

t.test('a store with cold records answers as one without, before and after a restart', async (t) => {
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
  // Reads between commits bring records back into memory and move them in the hot set: they are part of the sequence.
  const step = fc.oneof(
    fc.array(op, { minLength: 1, maxLength: 3 }).map((ops) => ({ ops })),
    fc.record({ read: key, ws: fc.boolean() }),
  )
  let n = 0
  const kinds: (() => StoreOptions)[] = [
    () => ({ hotRecords: 1000 }), // everything in memory: the reference
    () => ({ hotRecords: 1 }), // cold records in the snapshot written at open, or spilled
    () => ({ hotRecords: 1, compactBytes: 400 }), // and compactions between the steps
    () => ({ hotRecords: 1, compactBytes: 400, spillIo: flakySpill() }), // and some kept as text
  ]
  let compacted = 0
  const run = (): void =>
    fc.assert(
      fc.property(fc.array(step, { maxLength: 30 }), (steps) => {
        const run = n++
        const open = (): Store[] =>
          kinds.map((o, i) => Store.open(path.join(root, `${run}-${i}`), { log: () => undefined, ...o() }))
        const agree = (stores: Store[]): boolean => stores.every((s) => view(s) === view(stores[0] as Store))
        let stores = open()
        try {
          for (const s of steps) {
            for (const store of stores) {
              if ('ops' in s) store.commit(s.ops)
              else store.get(s.ws ? 'workspaces' : 'proposals', s.read)
            }
            if (!agree(stores)) return false
          }
          if (fs.statSync(path.join(root, `${run}-2`, 'journal.log')).size < steps.length * 20) compacted++
        } finally {
          for (const s of stores) s.close()
        }
        stores = open()
        try {
          return agree(stores)
        } finally {
          for (const s of stores) s.close()
        }
      }),
      { numRuns: 150 },
    )
  t.doesNotThrow(run, 'the same records, lists and index answers')
  t.ok(compacted > 10, `the runs compacted between steps (${compacted} of 150 ended on a short journal)`)
})

t.test('a record handed out is never changed by moving it out of memory and back, or by later writes', async (t) => {
  const s = Store.open(path.join(root, 'handed-out'), { log: () => undefined, hotRecords: 1 })
  t.teardown(() => s.close())
  s.commit([{ c: 'workspaces', k: 'ws-1', v: workspace('ws-1', 'alpha') }])
  s.commit([{ c: 'workspaces', k: 'ws-1', at: ['changes', '__proto__'], v: { blob: 'b', mode: '100644', size: 1 } }])
  const held = s.get('workspaces', 'ws-1') as WorkspaceRec
  const before = JSON.stringify(held)
  // ws-2 takes the one hot place: ws-1 is spilled, then read back by the set below.
  s.commit([{ c: 'workspaces', k: 'ws-2', v: workspace('ws-2', 'beta') }])
  s.commit([{ c: 'workspaces', k: 'ws-1', at: ['changes', 'x'], v: null }])
  t.equal(JSON.stringify(held), before, 'the copy a caller holds is as it was')
  const now = s.get('workspaces', 'ws-1') as WorkspaceRec
  t.not(now, held)
  t.same(Object.keys(now.changes), ['__proto__', 'x'], 'a file named __proto__ is a plain field after a round trip')
  t.equal(Object.getPrototypeOf(now.changes), Object.prototype)
})

t.test(
  'cold records leave memory: spilled, else kept as text until a compaction moves them to the snapshot',
  async (t) => {
    const N = 200
    const ws = (i: number): Op => ({ c: 'workspaces', k: `ws-${i}`, v: workspace(`ws-${i}`, 'alpha') })
    const dir = path.join(root, 'residency')
    let failing = false
    const spillIo: NonNullable<StoreOptions['spillIo']> = {
      write: (fd, buf, len, at) => {
        if (failing) throw Object.assign(new Error('no space left on device'), { code: 'ENOSPC' })
        return fs.writeSync(fd, buf, 0, len, at)
      },
    }
    const open = (): Store => Store.open(dir, { log: () => undefined, hotRecords: 4, spillIo, compactBytes: 1 << 30 })
    let s = open()
    for (let i = 0; i < N; i++) s.commit([ws(i)])
    t.match(s.residency(), { objects: 4, texts: 0, onDisk: N - 4 }, 'all but the hot records spilled')
    t.equal(s.get('workspaces', 'ws-7')?.id, 'ws-7', 'a spilled record reads back')
    failing = true
    for (let i = N; i < 2 * N; i++) s.commit([ws(i)])
    // Dropped from the hot set now: ws-197..199 and ws-200..395 stay as text; ws-7, read back
    // and unchanged, goes back to where it was on disk without a write.
    t.match(
      s.residency(),
      { objects: 4, texts: N - 1, onDisk: N - 3 },
      'a record the spill file cannot take stays as text',
    )
    t.same(
      s
        .all('workspaces')
        .map((w) => w.id)
        .sort(),
      Array.from({ length: 2 * N }, (_, i) => `ws-${i}`).sort(),
      'every record reads back',
    )
    s.close()
    t.same(
      fs.readdirSync(dir).sort(),
      ['journal.log', 'state.json'],
      'the spill file leaves nothing behind (it was unlinked when opened)',
    )
    // The compaction at open writes every record into the snapshot: none is text any more.
    s = open()
    t.match(s.residency(), { objects: 4, texts: 0, onDisk: 2 * N - 4 }, 'after a restart every cold record is on disk')
    t.equal(s.get('workspaces', 'ws-333')?.id, 'ws-333')
    // A hot record unchanged since the snapshot needs no write to turn cold, even when writes fail.
    for (const i of [1, 2, 3, 4, 5]) s.get('workspaces', `ws-${i}`)
    t.match(s.residency(), { objects: 4, texts: 0, onDisk: 2 * N - 4 }, 'unchanged records go back to the snapshot')
    s.close()
  },
)

t.test('the spill file stays within the size of the snapshot: it triggers compaction too', async (t) => {
  // Each commit changes a large record by a few bytes, then the next turns it cold: the
  // journal grows by a short line, the spill file by the whole record.
  const s = Store.open(path.join(root, 'spill-bound'), { log: () => undefined, hotRecords: 1, compactBytes: 8192 })
  t.teardown(() => s.close())
  const big = { blob: 'b'.repeat(40), mode: '100644', size: 1 }
  for (let i = 0; i < 20; i++) {
    const w = workspace(`ws-${i}`, 'alpha')
    for (let f = 0; f < 30; f++) w.changes[`dir/file-${f}.txt`] = big
    s.commit([{ c: 'workspaces', k: w.id, v: w }])
  }
  let worst = 0
  let compactions = 0
  let journal = 0
  for (let i = 0; i < 400; i++) {
    const k = `ws-${(i * 7) % 20}`
    s.commit([
      { c: 'workspaces', k, at: ['updated_at'], v: `2026-01-01T00:00:${String(i % 60).padStart(2, '0')}.000Z` },
    ])
    const size = fs.statSync(path.join(root, 'spill-bound', 'journal.log')).size
    if (size < journal) compactions++
    journal = size
    const snapshot = fs.statSync(path.join(root, 'spill-bound', 'state.json')).size
    worst = Math.max(worst, s.residency().spillBytes - snapshot)
  }
  t.ok(compactions > 0, `compacted ${compactions} times`)
  t.ok(worst <= 4096, `the spill file exceeded the snapshot by at most one record (${worst} bytes)`)
  t.equal(s.get('workspaces', 'ws-3')?.updated_at.slice(0, 17), '2026-01-01T00:00:')
})
