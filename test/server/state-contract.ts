import type { Test } from 'tap'
import type { IndexName, State } from '../../server/src/state.ts'
import {
  DEFAULT_POLICY,
  type IdempotencyRec,
  type LeaseRec,
  type ProposalRec,
  type TaskRec,
  type TokenRec,
} from '../../server/src/types.ts'
import { leaseRecord, proposalRecord, reviewRecord, runRecord } from './helpers.ts'

// What any State backend must do (server/src/state.ts), as tests a backend's own test file
// registers with stateContract(t, name, open): the journal's in state-journal.test.ts, the
// PostgreSQL backend's beside it. `open` gives a fresh, empty state each time; every test
// closes what it opened.

const AT = '2026-01-01T00:00:00.000Z'

export const task = (id: string, repo: string, state: TaskRec['state'] = 'open'): TaskRec => ({
  id,
  repo,
  title: id,
  body: '',
  state,
  paths: [],
  created_by: 'agent:a',
  created_at: AT,
  updated_at: AT,
})
const lease = (id: string, repo: string, run: string, released = false): LeaseRec =>
  leaseRecord(id, repo, { run_id: run, released })
const review = reviewRecord
const proposal = (id: string, repo: string, state: ProposalRec['state']): ProposalRec =>
  proposalRecord(id, repo, { state })
const token = (id: string, hash: string): TokenRec => ({
  id,
  hash,
  principal: 'agent:a',
  scopes: ['read'],
  repos: ['demo'],
  expires_at: '2099-01-01T00:00:00.000Z',
  created_at: AT,
  revoked: false,
})
const idem = (expires: string): IdempotencyRec => ({
  principal: 'agent:a',
  fingerprint: 'f',
  state: 'applied',
  expires_at: expires,
})

/** A promise and the functions that settle it: lets a test order two transactions without timers. */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void
  const promise = new Promise<void>((r) => (resolve = r))
  return { promise, resolve }
}

const ids = (xs: { id: string }[]): string[] => xs.map((x) => x.id).sort()

export function stateContract(t: Test, name: string, open: () => Promise<State>): void {
  /** a test of one fresh state, closed after it */
  const on = (title: string, fn: (t: Test, s: State) => Promise<void>): void => {
    t.test(`${name}: ${title}`, async (t) => {
      const s = await open()
      try {
        await fn(t, s)
      } finally {
        await s.close()
      }
    })
  }

  on('put, get, delete', async (t, s) => {
    t.equal(await s.get('tasks', 'task-1'), undefined, 'absent at first')
    await s.tx([], async (x) => x.write({ c: 'tasks', k: 'task-1', v: task('task-1', 'demo') }))
    t.same(await s.get('tasks', 'task-1'), task('task-1', 'demo'), 'put, then read back')
    await s.tx([], async (x) => x.write({ c: 'counters', k: 'plain', v: 7 }))
    t.equal(await s.get('counters', 'plain'), 7, 'a non-object record too')
    await s.tx([], async (x) => x.write({ c: 'tasks', k: 'task-1', v: null }))
    t.equal(await s.get('tasks', 'task-1'), undefined, 'deleted')
    t.same(await s.all('tasks'), [], 'and gone from all()')
  })

  on('commit applies ops as a tx that only writes them', async (t, s) => {
    await s.commit(['repo:demo'], [{ c: 'tasks', k: 'task-1', v: task('task-1', 'demo') }])
    t.same(await s.get('tasks', 'task-1'), task('task-1', 'demo'), 'a put')
    await s.commit(
      ['b', 'a', 'b'],
      [
        { c: 'tasks', k: 'task-1', at: ['title'], v: 'renamed' },
        { c: 'tasks', k: 'task-1', at: ['paths'], add: 'src/**' },
        { c: 'tasks', k: 'task-2', v: task('task-2', 'demo') },
        { c: 'counters', k: 'n', v: 4 },
      ],
    )
    const got = await s.get('tasks', 'task-1')
    t.equal(got?.title, 'renamed', 'a set')
    t.same(got?.paths, ['src/**'], 'an add')
    t.same(ids(await s.byIndex('tasksByRepo', 'demo')), ['task-1', 'task-2'], 'several records, indexed')
    t.equal(await s.get('counters', 'n'), 4, 'a counter')
    await s.commit([], [{ c: 'tasks', k: 'task-9', at: ['title'], v: 'x' }])
    t.equal(await s.get('tasks', 'task-9'), undefined, 'a set on an absent record makes none')
    await s.commit([], [])
    await s.commit(['a'], [{ c: 'tasks', k: 'task-2', v: null }])
    t.same(ids(await s.all('tasks')), ['task-1'], 'a delete')
  })

  on('tx reads: named records and index groups are read with the lock, others as usual', async (t, s) => {
    await s.commit(
      [],
      [
        { c: 'tasks', k: 'task-1', v: task('task-1', 'demo') },
        { c: 'tasks', k: 'task-2', v: task('task-2', 'demo') },
        { c: 'tasks', k: 'task-3', v: task('task-3', 'other') },
        { c: 'repos', k: 'demo', v: { policy: DEFAULT_POLICY, roles: {} } },
        { c: 'leases', k: 'lease-1', v: lease('lease-1', 'demo', 'run-1') },
        { c: 'leases', k: 'lease-2', v: lease('lease-2', 'demo', 'run-gone') },
        { c: 'runs', k: 'run-1', v: runRecord('run-1', 'task-1', 'demo') },
        { c: 'runs', k: 'run-2', v: runRecord('run-2', 'task-2', 'demo') },
      ],
    )
    const out = await s.tx(
      ['coord:demo'],
      async (x) => {
        x.write({ c: 'tasks', k: 'task-1', at: ['title'], v: 'changed' })
        return {
          named: (await x.get('tasks', 'task-1'))?.title,
          again: (await x.get('tasks', 'task-1'))?.title,
          absent: await x.get('tasks', 'task-9'),
          repo: (await x.get('repos', 'demo'))?.roles,
          unnamed: (await x.get('tasks', 'task-2'))?.id,
          group: (await x.byIndex('tasksByRepo', 'demo')).map((r) => r.title).sort(),
          empty: await x.byIndex('tasksByRepo', 'none'),
          unnamedGroup: ids(await x.byIndex('tasksByRepo', 'other')),
          leases: ids(await x.byIndex('unreleasedLeasesByRepo', 'demo')),
          theirRuns: (await x.getMany('runs', ['run-1', 'run-gone'])).map((r) => r?.run_id),
          otherRuns: (await x.getMany('runs', ['run-1', 'run-2'])).map((r) => r?.run_id),
        }
      },
      [
        { c: 'tasks', k: 'task-1' },
        { c: 'tasks', k: 'task-9' },
        { c: 'repos', k: 'demo' },
        { index: 'tasksByRepo', key: 'demo' },
        { index: 'tasksByRepo', key: 'none' },
        { index: 'unreleasedLeasesByRepo', key: 'demo', with: { c: 'runs', field: 'run_id' } },
      ],
    )
    t.same(
      out,
      {
        named: 'task-1',
        again: 'task-1',
        absent: undefined,
        repo: {},
        unnamed: 'task-2',
        group: ['task-1', 'task-2'],
        empty: [],
        unnamedGroup: ['task-3'],
        leases: ['lease-1', 'lease-2'],
        theirRuns: ['run-1', undefined],
        otherRuns: ['run-1', 'run-2'],
      },
      'named records and groups as they were, without the queued write; absent ones absent; others read as usual',
    )
    t.equal((await s.get('tasks', 'task-1'))?.title, 'changed', 'the write committed')
  })

  on('getMany reads records in the order asked', async (t, s) => {
    await s.tx([], async (x) =>
      x.write(
        { c: 'tasks', k: 'task-1', v: task('task-1', 'demo') },
        { c: 'tasks', k: 'task-2', v: task('task-2', 'b') },
        { c: 'counters', k: 'n', v: 3 },
      ),
    )
    const got = await s.getMany('tasks', ['task-2', 'task-9', 'task-1', 'task-2'])
    t.same(
      got.map((r) => r?.id),
      ['task-2', undefined, 'task-1', 'task-2'],
      'one answer per key, undefined where absent, a key asked twice answered twice',
    )
    t.same(got[2], task('task-1', 'demo'), 'the whole record')
    t.same(await s.getMany('tasks', []), [], 'no keys, no records')
    t.same(await s.getMany('counters', ['n', 'none']), [3, undefined], 'a non-object record too')
    await s.tx([], async (x) => {
      x.write({ c: 'tasks', k: 'task-1', v: null })
      t.same(
        (await x.getMany('tasks', ['task-1', 'task-2'])).map((r) => r?.id),
        ['task-1', 'task-2'],
        'inside a tx, without its own queued writes',
      )
    })
    t.same(
      (await s.getMany('tasks', ['task-1', 'task-2'])).map((r) => r?.id),
      [undefined, 'task-2'],
      'and its delete once committed',
    )
  })

  on('any text round-trips: quotes, backslashes, newlines, non-ASCII, in keys and values', async (t, s) => {
    const odd = String.raw`it's "quoted" \ back\\slash E'\x41' \u0041 $1 $$ ;` + '\n COMMIT; -- é 漢 🙂\t'
    const k = `task-'${odd}`
    const v = { ...task(k, 'demo'), title: odd, body: String.raw`\'` + "\n'" }
    await s.tx([`repo:${odd}`], async (x) =>
      x.write({ c: 'tasks', k, v }, { c: 'tasks', k: 'plain', v: task('plain', 'demo') }),
    )
    t.same(await s.get('tasks', k), v, 'read back as written')
    await s.tx([], async (x) =>
      x.write({ c: 'tasks', k, at: ['paths'], add: odd }, { c: 'tasks', k, at: [odd], v: { [odd]: odd } }),
    )
    const got = (await s.get('tasks', k)) as unknown as Record<string, unknown>
    t.same(got['paths'], [odd], 'an add of it')
    t.same(got[odd], { [odd]: odd }, 'a set at a path named by it')
    t.equal((await s.get('tasks', 'plain'))?.title, 'plain', 'the record written beside it is unharmed')
    await s.tx([], async (x) => x.write({ c: 'tasks', k, v: null }))
    t.same(
      (await s.all('tasks')).map((r) => r.id),
      ['plain'],
      'and its delete',
    )
  })

  on('one tx writes, changes and deletes records of several collections together', async (t, s) => {
    await s.tx([], async (x) =>
      x.write(
        { c: 'tasks', k: 'task-1', v: task('task-1', 'demo') },
        { c: 'tasks', k: 'task-2', v: task('task-2', 'demo') },
        { c: 'tokens', k: 'tok-1', v: token('tok-1', 'h1') },
      ),
    )
    await s.tx([], async (x) =>
      x.write(
        { c: 'tasks', k: 'task-1', at: ['title'], v: 'one' },
        { c: 'tasks', k: 'task-2', v: null },
        { c: 'tasks', k: 'task-3', v: task('task-3', 'demo') },
        { c: 'tasks', k: 'task-3', at: ['title'], v: 'three' },
        // the same hash moves from one token to another: the delete makes room for the put
        { c: 'tokens', k: 'tok-2', v: token('tok-2', 'h1') },
        { c: 'tokens', k: 'tok-1', v: null },
        { c: 'counters', k: 'c', v: 5 },
        { c: 'counters', k: 'c', v: 6 },
        { c: 'leases', k: 'lease-1', v: lease('lease-1', 'demo', 'run-1') },
      ),
    )
    t.same(
      (await s.all('tasks')).map((r) => [r.id, r.title]).sort(),
      [
        ['task-1', 'one'],
        ['task-3', 'three'],
      ],
      'a set, a delete, and a put followed by a set',
    )
    t.equal((await s.credentials('h1', undefined)).token?.id, 'tok-2', 'the hash found on the new token')
    t.equal(await s.get('tokens', 'tok-1'), undefined)
    t.equal(await s.get('counters', 'c'), 6, 'the last put of a counter')
    t.same(ids(await s.byIndex('unreleasedLeasesByRun', 'run-1')), ['lease-1'])
  })

  on('set and add ops', async (t, s) => {
    await s.tx([], async (x) => x.write({ c: 'tasks', k: 'task-1', v: task('task-1', 'demo') }))
    await s.tx([], async (x) =>
      x.write(
        { c: 'tasks', k: 'task-1', at: ['title'], v: 'renamed' },
        { c: 'tasks', k: 'task-1', at: ['paths'], add: 'src/**' },
        { c: 'tasks', k: 'task-1', at: ['paths'], add: 'docs/**' },
        { c: 'tasks', k: 'task-1', at: ['run_id'], v: 'run-1' },
      ),
    )
    let got = await s.get('tasks', 'task-1')
    t.equal(got?.title, 'renamed', 'set replaced a field')
    t.same(got?.paths, ['src/**', 'docs/**'], 'add appended, in order')
    t.equal(got?.run_id, 'run-1', 'set made a new field')
    await s.tx([], async (x) =>
      x.write({ c: 'tasks', k: 'task-1', at: ['paths'], add: 'src/**' }, { c: 'tasks', k: 'task-1', at: ['run_id'] }),
    )
    got = await s.get('tasks', 'task-1')
    t.same(got?.paths, ['src/**', 'docs/**'], 'add of an equal element is a no-op')
    t.notOk(got && 'run_id' in got, 'set without v removed the field')
    await s.tx([], async (x) => x.write({ c: 'tasks', k: 'task-9', at: ['title'], v: 'x' }))
    t.equal(await s.get('tasks', 'task-9'), undefined, 'set on an absent record makes none')
  })

  on('all and entries', async (t, s) => {
    await s.tx([], async (x) =>
      x.write(
        { c: 'tasks', k: 'task-1', v: task('task-1', 'demo') },
        { c: 'tasks', k: 'task-2', v: task('task-2', 'b') },
      ),
    )
    t.same(ids(await s.all('tasks')), ['task-1', 'task-2'])
    const entries = (await s.entries('tasks')).sort(([a], [b]) => a.localeCompare(b))
    t.same(
      entries.map(([k, v]) => [k, v.repo]),
      [
        ['task-1', 'demo'],
        ['task-2', 'b'],
      ],
    )
    t.same(await s.all('runs'), [], 'an empty collection')
  })

  on('every index follows a change of its key and a delete', async (t, s) => {
    const w = (...ops: Parameters<import('../../server/src/state.ts').Tx['write']>) =>
      s.tx([], async (x) => x.write(...ops))
    const keysOf = async (n: IndexName) => (await s.indexKeys(n)).sort()
    await w(
      { c: 'reviews', k: 'review-1', v: review('review-1', 'pr-1') },
      { c: 'leases', k: 'lease-1', v: lease('lease-1', 'demo', 'run-1') },
      { c: 'proposals', k: 'pr-1', v: proposal('pr-1', 'demo', 'open') },
      { c: 'tasks', k: 'task-1', v: task('task-1', 'demo') },
      { c: 'idempotency', k: 'i1', v: idem('2026-01-01T00:05:30.000Z') },
    )
    t.same(ids(await s.byIndex('reviewsByProposal', 'pr-1')), ['review-1'])
    t.same(ids(await s.byIndex('unreleasedLeasesByRun', 'run-1')), ['lease-1'])
    t.same(ids(await s.byIndex('unreleasedLeasesByRepo', 'demo')), ['lease-1'])
    t.same(ids(await s.byIndex('proposalsByRepoState', 'demo\nopen')), ['pr-1'])
    t.same(ids(await s.byIndex('tasksByRepo', 'demo')), ['task-1'])
    t.same(await s.idsByIndex('idempotencyByExpiry', '2026-01-01T00:05'), ['i1'], 'idsByIndex: the record keys')
    t.same(await s.idsByIndex('proposalsByRepoState', 'demo\nopen'), ['pr-1'])
    t.same(await keysOf('idempotencyByExpiry'), ['2026-01-01T00:05'])
    t.same((await s.byIndex('idempotencyByExpiry', '2026-01-01T00:05')).length, 1)

    await w(
      { c: 'reviews', k: 'review-1', at: ['proposal'], v: 'pr-2' },
      { c: 'leases', k: 'lease-1', at: ['released'], v: true },
      { c: 'proposals', k: 'pr-1', at: ['state'], v: 'integrated' },
      { c: 'tasks', k: 'task-1', v: task('task-1', 'other') },
      { c: 'idempotency', k: 'i1', at: ['expires_at'], v: '2026-01-01T00:07:00.000Z' },
    )
    t.same(await s.byIndex('reviewsByProposal', 'pr-1'), [], 'review moved off its old key')
    t.same(ids(await s.byIndex('reviewsByProposal', 'pr-2')), ['review-1'], '…onto its new one')
    t.same(await s.byIndex('unreleasedLeasesByRun', 'run-1'), [], 'a released lease leaves the run index')
    t.same(await s.byIndex('unreleasedLeasesByRepo', 'demo'), [], 'and the repo index')
    t.same(await s.byIndex('proposalsByRepoState', 'demo\nopen'), [])
    t.same(ids(await s.byIndex('proposalsByRepoState', 'demo\nintegrated')), ['pr-1'])
    t.same(await s.byIndex('tasksByRepo', 'demo'), [])
    t.same(ids(await s.byIndex('tasksByRepo', 'other')), ['task-1'])
    t.same(await keysOf('idempotencyByExpiry'), ['2026-01-01T00:07'], 'an emptied key is gone from indexKeys')
    t.same(await s.idsByIndex('idempotencyByExpiry', '2026-01-01T00:05'), [], 'idsByIndex follows the key too')

    await w(
      { c: 'reviews', k: 'review-1', v: null },
      { c: 'proposals', k: 'pr-1', v: null },
      { c: 'tasks', k: 'task-1', v: null },
      { c: 'idempotency', k: 'i1', v: null },
    )
    t.same(await s.byIndex('reviewsByProposal', 'pr-2'), [], 'deleted records leave their index')
    t.same(await s.byIndex('proposalsByRepoState', 'demo\nintegrated'), [])
    t.same(await s.byIndex('tasksByRepo', 'other'), [])
    t.same(await keysOf('idempotencyByExpiry'), [])
    t.same(await keysOf('reviewsByProposal'), [])
  })

  on('credentials: the token by its hash, the run named, the clock, together', async (t, s) => {
    const token1 = async (): Promise<TokenRec | undefined> => (await s.credentials('h1', undefined)).token
    await s.tx([], async (x) => x.write({ c: 'tokens', k: 'tok-1', v: token('tok-1', 'h1') }))
    t.equal((await token1())?.id, 'tok-1')
    t.equal((await s.credentials('h2', undefined)).token, undefined, 'an unknown hash')
    await s.tx([], async (x) => x.write({ c: 'tokens', k: 'tok-1', at: ['revoked'], v: true }))
    t.equal((await token1())?.revoked, true, 'a field change is seen through the hash')
    await s.tx([], async (x) => x.write({ c: 'runs', k: 'run-1', v: runRecord('run-1', 'task-1', 'demo') }))
    const got = await s.credentials('h1', 'run-1')
    t.equal(got.run?.run_id, 'run-1', 'the run named')
    t.equal(got.token?.id, 'tok-1', 'beside the token')
    t.ok(got.now instanceof Date && !Number.isNaN(got.now.getTime()), 'and the clock')
    t.equal((await s.credentials('h1', 'run-9')).run, undefined, 'an unknown run')
    t.equal((await s.credentials('h1', undefined)).run, undefined, 'none named')
    await s.tx([], async (x) => {
      t.equal((await x.credentials('h1', undefined)).now.getTime(), x.now.getTime(), "inside a tx, the tx's clock")
    })
    await s.tx([], async (x) => x.write({ c: 'tokens', k: 'tok-1', v: null }))
    t.equal(await token1(), undefined, 'a deleted token is not found')
  })

  on('a tx whose fn throws writes nothing', async (t, s) => {
    await t.rejects(
      s.tx(['repo:demo'], async (x) => {
        x.write({ c: 'tasks', k: 'task-1', v: task('task-1', 'demo') })
        await x.nextId('task', 'task-')
        throw new Error('changed my mind')
      }),
      { message: 'changed my mind' },
    )
    t.equal(await s.get('tasks', 'task-1'), undefined, 'the queued write was dropped')
    t.same(await s.byIndex('tasksByRepo', 'demo'), [])
    const after = await s.tx(['repo:demo'], async () => 'free')
    t.equal(after, 'free', 'its lock was released')
  })

  on('reads in a tx do not see its own queued writes', async (t, s) => {
    await s.tx([], async (x) => {
      x.write({ c: 'tasks', k: 'task-1', v: task('task-1', 'demo') })
      t.equal(await x.get('tasks', 'task-1'), undefined, 'get')
      t.same(await x.all('tasks'), [], 'all')
      t.same(await x.byIndex('tasksByRepo', 'demo'), [], 'byIndex')
    })
    t.ok(await s.get('tasks', 'task-1'), 'visible once committed')
  })

  on('50 concurrent check-then-write txs on one lock: exactly one winner', async (t, s) => {
    await s.tx([], async (x) => x.write({ c: 'tasks', k: 'task-1', v: task('task-1', 'demo') }))
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        s.tx(['repo:demo'], async (x) => {
          const cur = await x.get('tasks', 'task-1')
          if (cur?.state !== 'open') return false
          x.write({ c: 'tasks', k: 'task-1', v: { ...cur, state: 'claimed', run_id: `run-${i}` } })
          return true
        }),
      ),
    )
    t.equal(results.filter(Boolean).length, 1, 'one tx saw it open and claimed it')
    const won = results.indexOf(true)
    t.equal((await s.get('tasks', 'task-1'))?.run_id, `run-${won}`, 'and its write is the one kept')
  })

  on('a tx on lock a does not wait for one holding b', async (t, s) => {
    const holding = deferred()
    const entered = deferred()
    const onB = s.tx(['b'], async () => {
      entered.resolve()
      await holding.promise
      return 'b'
    })
    await entered.promise
    const onA = await s.tx(['a'], async (x) => {
      x.write({ c: 'counters', k: 'x', v: 1 })
      return 'a'
    })
    t.equal(onA, 'a', 'the tx on a ran to its end while b was held')
    t.equal(await s.get('counters', 'x'), 1)
    holding.resolve()
    t.equal(await onB, 'b')
    // and the same lock named twice, or in another order, neither deadlocks nor runs twice at once
    let inside = 0
    let most = 0
    await Promise.all(
      [
        ['a', 'b'],
        ['b', 'a'],
        ['a', 'a', 'b'],
      ].map((locks) =>
        s.tx(locks, async () => {
          most = Math.max(most, ++inside)
          await Promise.resolve()
          inside--
        }),
      ),
    )
    t.equal(most, 1, 'txs naming the same locks in any order ran one at a time')
  })

  on('nextId is unique over 50 concurrent txs, failed ones included', async (t, s) => {
    const got: string[] = []
    const outcomes = await Promise.allSettled(
      Array.from({ length: 50 }, (_, i) =>
        s.tx([`lock-${i % 5}`], async (x) => {
          const id = await x.nextId('task', 'task-')
          got.push(id)
          await Promise.resolve()
          if (i % 3 === 0) throw new Error('fails')
          x.write({ c: 'tasks', k: id, v: task(id, 'demo') })
        }),
      ),
    )
    t.equal(outcomes.filter((o) => o.status === 'rejected').length, 17, 'a third failed')
    t.equal(new Set(got).size, 50, 'fifty distinct ids')
    t.ok(
      got.every((id) => /^task-\d+$/.test(id)),
      'each with its prefix',
    )
    t.equal((await s.all('tasks')).length, 33, 'the others committed')
    const next = await s.tx([], (x) => x.nextId('task', 'task-'))
    t.notOk(got.includes(next), 'a later id is none of them')
  })

  on('counters never move back when txs commit out of order', async (t, s) => {
    const first = deferred()
    const firstTook = deferred()
    const slow = s.tx(['one'], async (x) => {
      const id = await x.nextId('c', 'n')
      firstTook.resolve()
      await first.promise
      return id
    })
    await firstTook.promise
    const fast = await s.tx(['two'], (x) => x.nextId('c', 'n'))
    first.resolve()
    const slowId = await slow
    const fastN = Number(fast.slice(1))
    t.ok(Number(slowId.slice(1)) < fastN, 'the slow tx took the smaller number')
    t.ok(((await s.get('counters', 'c')) ?? 0) >= fastN, 'its later commit did not move the counter back')
    const third = await s.tx([], (x) => x.nextId('c', 'n'))
    t.ok(Number(third.slice(1)) > fastN, 'a later id is larger than both')
  })

  on('now() and Tx.now are Dates', async (t, s) => {
    const n = await s.now()
    t.ok(n instanceof Date && !Number.isNaN(n.getTime()), 'state.now()')
    await s.tx([], async (x) => {
      t.ok(x.now instanceof Date && !Number.isNaN(x.now.getTime()), 'tx.now')
    })
  })
}
