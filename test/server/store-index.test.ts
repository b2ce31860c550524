import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import fc from 'fast-check'
import type { Op } from '../../server/src/state.ts'
import { Store } from '../../server/src/store.ts'
import { leaseRecord, reviewRecord, tmpdir } from './helpers.ts'
import type { LeaseRec } from '../../server/src/types.ts'

// The store's secondary indexes (the reviews of a proposal, the unreleased leases of a run
// or a repository) must answer exactly what a scan of the whole table answers, after any
// sequence of puts, field sets and deletes, and again after a restart replays them.

const root = tmpdir('store-index')
t.teardown(() => fs.rmSync(root, { recursive: true, force: true }))

const review = reviewRecord
const lease = (id: string, repo: string, run: string | undefined, released: boolean): LeaseRec =>
  leaseRecord(id, repo, { ...(run === undefined ? {} : { run_id: run }), released })

const ids = (xs: { id: string }[]): string[] => xs.map((x) => x.id).sort()
const KEYS = ['k0', 'k1', 'k2', 'k3', 'k4', 'k5']
const OWNERS = ['a', 'b', 'c']

function agrees(s: Store): boolean {
  for (const o of OWNERS) {
    const reviews = s.all('reviews').filter((r) => r.proposal === o)
    if (ids(s.byIndex('reviewsByProposal', o)).join() !== ids(reviews).join()) return false
    const open = s.all('leases').filter((l) => !l.released)
    if (ids(s.byIndex('unreleasedLeasesByRun', o)).join() !== ids(open.filter((l) => l.run_id === o)).join())
      return false
    if (ids(s.byIndex('unreleasedLeasesByRepo', o)).join() !== ids(open.filter((l) => l.repo === o)).join())
      return false
  }
  return true
}

t.test('indexes agree with a full scan under any sequence of changes, and after a restart', async (t) => {
  const key = fc.constantFrom(...KEYS)
  const owner = fc.constantFrom(...OWNERS)
  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.record({ k: key, p: owner }).map(({ k, p }): Op => ({ c: 'reviews', k, v: review(k, p) })),
    fc
      .record({ k: key, repo: owner, run: fc.option(owner, { nil: undefined }), released: fc.boolean() })
      .map(({ k, repo, run, released }): Op => ({ c: 'leases', k, v: lease(k, repo, run, released) })),
    fc
      .record({ k: key, released: fc.boolean() })
      .map(({ k, released }): Op => ({ c: 'leases', k, at: ['released'], v: released })),
    fc.record({ k: key, p: owner }).map(({ k, p }): Op => ({ c: 'reviews', k, at: ['proposal'], v: p })),
    fc
      .record({ k: key, review: fc.boolean() })
      .map(({ k, review }): Op => (review ? { c: 'reviews', k, v: null } : { c: 'leases', k, v: null })),
  )
  let n = 0
  const run = (): void =>
    fc.assert(
      fc.property(fc.array(fc.array(op, { minLength: 1, maxLength: 3 }), { maxLength: 25 }), (commits) => {
        const dir = path.join(root, String(n++))
        const s = Store.open(dir, { log: () => undefined })
        try {
          for (const ops of commits) {
            s.commit(ops)
            if (!agrees(s)) return false
          }
        } finally {
          s.close()
        }
        const again = Store.open(dir, { log: () => undefined })
        try {
          return agrees(again)
        } finally {
          again.close()
        }
      }),
      { numRuns: 150 },
    )
  t.doesNotThrow(run, 'the same records as a scan, before and after a restart')
})
