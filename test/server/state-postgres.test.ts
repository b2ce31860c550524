import t from 'tap'
import { openState } from '../../server/src/open-state.ts'
import { PgState } from '../../server/src/pg/pg-state.ts'
import { until, withPostgres } from '../helpers/postgres.ts'
import { stateContract, task } from './state-contract.ts'

// The State contract on the PostgreSQL backend: a real server (test/helpers/postgres.ts), a
// fresh database for each test.

await withPostgres(t, async (db) => {
  stateContract(t, 'postgres', async () => openState({ dataDir: '/nonexistent', store: await db.fresh() }))
})

await withPostgres(t, async (db) => {
  t.test('postgres: add compares elements as JSON whatever order jsonb keeps their keys in', async (t) => {
    const s = await openState({ dataDir: '/nonexistent', store: await db.fresh() })
    t.teardown(() => s.close())
    await s.tx([], async (x) => x.write({ c: 'tasks', k: 'task-1', v: task('task-1', 'demo') }))
    // jsonb keeps {"a", "path"}, shorter key first: a caller's {"path", "a"} is the same element
    const first = { a: 1, path: 'src/a.ts' }
    const same = { path: 'src/a.ts', a: 1 }
    await s.tx([], async (x) => x.write({ c: 'tasks', k: 'task-1', at: ['extra'], add: first }))
    await s.tx([], async (x) => x.write({ c: 'tasks', k: 'task-1', at: ['extra'], add: same }))
    const got = (await s.get('tasks', 'task-1')) as unknown as { extra: unknown[] }
    t.same(got.extra, [first], 'the equal element was not added twice')
  })

  t.test('postgres: a NUL, which would end the query text, is refused and nothing is written', async (t) => {
    const s = await openState({ dataDir: '/nonexistent', store: await db.fresh() })
    t.teardown(() => s.close())
    await t.rejects(
      s.tx([], async (x) =>
        x.write(
          { c: 'tasks', k: 'task-1', v: task('task-1', 'demo') },
          { c: 'tasks', k: 'x\0y', v: task('x', 'demo') },
        ),
      ),
      { message: /NUL/ },
      'in a key',
    )
    await t.rejects(
      s.tx(['repo:\0'], async () => 'never'),
      { message: /NUL/ },
      'in a lock name',
    )
    t.same(await s.all('tasks'), [], 'the record beside it was not written either')
    await s.tx([], async (x) => x.write({ c: 'tasks', k: 'task-2', v: task('task-2', 'demo') }))
    t.same(
      (await s.all('tasks')).map((r) => r.id),
      ['task-2'],
      'the next transaction runs as usual',
    )
  })

  t.test("postgres: commit and a tx's reads wait for the lock another instance holds", async (t) => {
    const url = await db.fresh()
    const { state: a } = await PgState.open(url)
    const { state: b } = await PgState.open(url)
    const { state: c } = await PgState.open(url)
    t.teardown(() => Promise.all([a.close(), b.close(), c.close()]))
    await a.commit([], [{ c: 'tasks', k: 'task-1', v: task('task-1', 'demo') }])
    let release!: () => void
    const holding = new Promise<void>((r) => (release = r))
    let entered!: () => void
    const inside = new Promise<void>((r) => (entered = r))
    const aTx = a.tx(['coord:demo'], async (x) => {
      entered()
      await holding
      x.write({ c: 'tasks', k: 'task-1', at: ['title'], v: 'by a' })
    })
    await inside
    // b and c are other processes: only the advisory lock keeps them out
    const bTx = b.tx(
      ['coord:demo'],
      async (x) => [(await x.get('tasks', 'task-1'))?.title, (await x.byIndex('tasksByRepo', 'demo'))[0]?.title],
      [
        { c: 'tasks', k: 'task-1' },
        { index: 'tasksByRepo', key: 'demo' },
      ],
    )
    const cCommit = c.commit(['coord:demo'], [{ c: 'tasks', k: 'task-1', at: ['body'], v: 'by c' }])
    await until(
      'b and c wait on the lock',
      async () => (await a.sql("SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")).rowCount === 2,
    )
    const before = await a.get('tasks', 'task-1')
    t.same([before?.title, before?.body], ['task-1', ''], 'nothing written while a holds the lock')
    release()
    await aTx
    t.same(await bTx, ['by a', 'by a'], "b's reads with the lock saw a's write: they were made once the lock was b's")
    await cCommit
    const got = await a.get('tasks', 'task-1')
    t.same([got?.title, got?.body], ['by a', 'by c'], "c's commit came after, on the row a left")
  })

  t.test('postgres: transactions that fail give their connection back once rolled back', async (t) => {
    const { state: s } = await PgState.open(await db.fresh(), { max: 2 })
    t.teardown(() => s.close())
    const fail = (i: number) =>
      s.tx(['repo:demo'], async (x) => {
        x.write({ c: 'tasks', k: `task-${i}`, v: task(`task-${i}`, 'demo') })
        await x.get('tasks', 'task-0')
        throw new Error(`no ${i}`)
      })
    for (let i = 0; i < 10; i++) await t.rejects(fail(i), { message: `no ${i}` })
    const all = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => fail(10 + i)))
    t.equal(all.filter((r) => r.status === 'rejected').length, 20, 'twenty more at once, each refused')
    await s.tx(['repo:demo'], async (x) => x.write({ c: 'tasks', k: 'kept', v: task('kept', 'demo') }))
    t.same(
      (await s.all('tasks')).map((r) => r.id),
      ['kept'],
      'on a pool of two, the next one commits, and none of theirs was',
    )
  })

  t.test('postgres: idsByIndex names the keys byIndex reads', async (t) => {
    const s = await openState({ dataDir: '/nonexistent', store: await db.fresh() })
    t.teardown(() => s.close())
    await s.tx([], async (x) =>
      x.write(
        { c: 'tasks', k: 'task-1', v: task('task-1', 'demo') },
        { c: 'tasks', k: 'task-2', v: task('task-2', 'demo') },
        { c: 'tasks', k: 'task-3', v: task('task-3', 'other') },
      ),
    )
    t.same((await s.idsByIndex('tasksByRepo', 'demo')).sort(), ['task-1', 'task-2'])
    t.same(await s.idsByIndex('tasksByRepo', 'none'), [], 'none for an unknown key')
  })

  t.test('postgres: transactions queued on one lock leave the pool to the one that holds it', async (t) => {
    const { state: s } = await PgState.open(await db.fresh(), { max: 2 })
    t.teardown(() => s.close())
    // Each holds repo:demo and writes, inside, on a transaction of its own (as an intent is
    // written before its ref moves): six waiting for the lock on two pooled connections would
    // leave the holder none for its own.
    const n = 6
    const done = await Promise.allSettled(
      Array.from({ length: n }, (_, i) =>
        s.tx(['repo:demo'], async (x) => {
          await s.tx([], async (own) => own.write({ c: 'tasks', k: `own-${i}`, v: task(`own-${i}`, 'demo') }))
          x.write({ c: 'tasks', k: `task-${i}`, v: task(`task-${i}`, 'demo') })
        }),
      ),
    )
    t.same(
      done.map((d) => (d.status === 'fulfilled' ? 'ok' : String(d.reason))),
      Array(n).fill('ok'),
      'every transaction committed',
    )
    t.equal((await s.idsByIndex('tasksByRepo', 'demo')).length, 2 * n, 'with both its writes')
  })
})
