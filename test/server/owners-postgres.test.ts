import t from 'tap'
import { AgwpError } from '../../server/src/errors.ts'
import { PgOwnership, type PgOwnershipOptions } from '../../server/src/pg/owners.ts'
import { PgState } from '../../server/src/pg/pg-state.ts'
import { until, withPostgres } from '../helpers/postgres.ts'

// Repository ownership between instances (pg/owners.ts) on a real PostgreSQL: several
// PgOwnership objects on one database stand for several instances; the multi-process
// tests (multi-instance.test.ts) show the same through real servers.

interface Instance {
  state: PgState
  own: PgOwnership
  settled: string[]
  log: string[]
}

await withPostgres(t, async (db) => {
  const open = async (url: string, instance: string, leaseMs: number): Promise<Instance> => {
    const { state } = await PgState.open(url)
    const settled: string[] = []
    const log: string[] = []
    const opts: PgOwnershipOptions = {
      instance,
      url: `http://${instance}.invalid`,
      leaseMs,
      settle: async (repo) => {
        settled.push(repo)
      },
      log: (m) => log.push(m),
    }
    const own = await PgOwnership.start(state, opts)
    t.teardown(async () => {
      await own.close()
      await state.close()
    })
    return { state, own, settled, log }
  }
  const ownerRow = async (i: Instance, repo: string) =>
    (await i.state.sql('SELECT instance, epoch FROM repo_owners WHERE repo = $1', [repo])).rows.map((r) => ({
      instance: r.instance as string,
      epoch: Number(r.epoch),
    }))

  t.test('20 concurrent first requests at 3 instances: one owner, epoch 1, the rest forward to it', async (t) => {
    const url = await db.fresh()
    const all = await Promise.all(['a', 'b', 'c'].map((id) => open(url, id, 60_000)))
    const placed = await Promise.all(
      Array.from({ length: 20 }, (_, n) => {
        const i = all[n % 3] as Instance
        return i.own.place('r1').then((p) => ({ id: i.own.instance, p }))
      }),
    )
    const rows = await ownerRow(all[0] as Instance, 'r1')
    t.equal(rows.length, 1)
    t.equal(rows[0]?.epoch, 1, 'taken once')
    const owner = rows[0]?.instance
    for (const { id, p } of placed) {
      if (id === owner) t.same(p, { serve: true })
      else t.same(p, { serve: false, owner, url: `http://${owner}.invalid` })
    }
    t.same(
      all.map((i) => i.settled),
      all.map((i) => (i.own.instance === owner ? ['r1'] : [])),
      'the owner settled r1 once before serving it; no one else did',
    )
  })

  t.test('an owner that stops heartbeating loses the repository; its fence refuses', async (t) => {
    const url = await db.fresh()
    // a never heartbeats within the test (its lease is long); b judges a's lease by its own, short one.
    const a = await open(url, 'a', 60_000)
    const b = await open(url, 'b', 300)
    t.same(await a.own.place('r'), { serve: true })
    t.same(await b.own.place('r'), { serve: false, owner: 'a', url: 'http://a.invalid' }, 'a is alive')
    await a.state.tx(['repo:r'], (tx) => a.own.fence(tx, 'r'))
    t.pass('the owner passes its own fence')
    await until('b takes r over', async () => (await b.own.place('r')).serve)
    t.same(await ownerRow(b, 'r'), [{ instance: 'b', epoch: 2 }], 'the epoch moved on')
    t.same(b.settled, ['r'], 'the new owner settled r before serving it')
    // a still believes it owns r: its late update is refused inside the transaction.
    t.equal(a.own.epochOf('r'), 1)
    const err = await a.state.tx(['repo:r'], (tx) => a.own.fence(tx, 'r')).catch((e: unknown) => e)
    t.ok(err instanceof AgwpError && err.code === 'not_owner' && err.status === 503, 'not_owner, 503')
    t.ok(err instanceof AgwpError && err.headers['Retry-After'] === '60', 'with Retry-After')
    t.equal(a.own.epochOf('r'), undefined, 'and a stops serving r at once')
    t.same(await a.own.place('r'), { serve: false, owner: 'b', url: 'http://b.invalid' }, 'a now forwards r to b')
  })

  t.test('a heartbeat that finds a repository gone stops serving it', async (t) => {
    const url = await db.fresh()
    const a = await open(url, 'a', 60_000)
    const b = await open(url, 'b', 300)
    await a.own.place('r')
    await a.own.place('s')
    await until('b takes r over', async () => (await b.own.place('r')).serve)
    await a.own.heartbeat()
    t.equal(a.own.epochOf('r'), undefined, 'r lost')
    t.equal(a.own.epochOf('s'), 1, 's kept')
    t.match(a.log.join('\n'), /instance a lost r: another instance took it over/)
    const before = (await a.state.sql("SELECT heartbeat_at FROM repo_owners WHERE repo = 's'")).rows[0].heartbeat_at
    await a.own.heartbeat()
    const after = (await a.state.sql("SELECT heartbeat_at FROM repo_owners WHERE repo = 's'")).rows[0].heartbeat_at
    t.ok(after > before, 'the heartbeat renews what a still serves')
    t.same(await ownerRow(a, 'r'), [{ instance: 'b', epoch: 2 }], 'and does not touch what it lost')
  })

  t.test('an instance restarted under the same id takes its repositories back with a new epoch', async (t) => {
    const url = await db.fresh()
    const a1 = await open(url, 'a', 60_000)
    await a1.own.place('r')
    const a2 = await open(url, 'a', 60_000)
    t.same(await a2.own.place('r'), { serve: true })
    t.same(await ownerRow(a2, 'r'), [{ instance: 'a', epoch: 2 }])
    t.same(a2.settled, ['r'], 'settled what the previous process left')
    const err = await a1.state.tx(['repo:r'], (tx) => a1.own.fence(tx, 'r')).catch((e: unknown) => e)
    t.ok(err instanceof AgwpError && err.code === 'not_owner', 'the old process is fenced')
  })

  t.test('a takeover waits for the old owner transaction that holds the repository lock', async (t) => {
    const url = await db.fresh()
    const a = await open(url, 'a', 60_000)
    const b = await open(url, 'b', 200)
    await a.own.place('r')
    let release = (): void => undefined
    const held = new Promise<void>((r) => {
      release = r
    })
    let fenced = false
    const aTx = a.state.tx(['repo:r'], async (tx) => {
      await a.own.fence(tx, 'r')
      await held
      fenced = true
    })
    // b may try only once a's lease is out; it then waits on r's lock until a's transaction ends.
    await until(
      "a's lease is out",
      async () =>
        (await b.state.sql("SELECT 1 FROM repo_owners WHERE repo = 'r' AND heartbeat_at < now() - interval '200 ms'"))
          .rowCount === 1,
    )
    const taking = b.own.place('r')
    await until(
      'b waits on the lock',
      async () =>
        (
          await b.state.sql(
            "SELECT 1 FROM pg_locks l JOIN pg_stat_activity s ON s.pid = l.pid WHERE l.locktype = 'advisory' AND NOT l.granted",
          )
        ).rowCount === 1,
    )
    t.equal(b.settled.length, 0, 'not taken while a holds the lock')
    release()
    await aTx
    t.ok(fenced, "a's transaction finished as owner")
    t.same(await taking, { serve: true }, 'then b takes r')
    t.same(await ownerRow(b, 'r'), [{ instance: 'b', epoch: 2 }])
  })
})

await withPostgres(t, async (db) => {
  t.test('a session stopped inside a transaction loses its locks after idleInTransactionMs', async (t) => {
    const { state } = await PgState.open(db.url, { idleInTransactionMs: 300 })
    t.teardown(() => state.close())
    // Another process's state: within one, transactions naming repo:r queue in process.
    const { state: other } = await PgState.open(db.url)
    t.teardown(() => other.close())
    let resume = (): void => undefined
    const stopped = new Promise<void>((r) => {
      resume = r
    })
    let holding = (): void => undefined
    const held = new Promise<void>((r) => {
      holding = r
    })
    // Stands for a process stopped while it holds repo:r: its transaction sends nothing.
    const stuck = state.tx(['repo:r'], async (tx) => {
      holding()
      await stopped
      await tx.get('repos', 'r')
    })
    await held
    await other.tx(['repo:r'], async () => undefined)
    t.pass('another transaction took repo:r: the database ended the idle session')
    resume()
    const err = await stuck.catch((e: unknown) => e)
    t.ok(err instanceof Error, 'the stopped transaction fails when it resumes, and commits nothing')
  })
})

await withPostgres(t, async (db) => {
  t.test('a takeover waits for a fenced transaction that holds other locks than repo:R', async (t) => {
    const a = await PgState.open(db.url)
    const b = await PgState.open(db.url)
    const settle = async (): Promise<void> => undefined
    const ao = await PgOwnership.start(a.state, {
      instance: 'a',
      url: 'http://a',
      leaseMs: 60_000,
      settle,
      log: () => {},
    })
    const bo = await PgOwnership.start(b.state, { instance: 'b', url: 'http://b', leaseMs: 200, settle, log: () => {} })
    t.teardown(async () => {
      await ao.close()
      await bo.close()
      await a.state.close()
      await b.state.close()
    })
    await ao.place('r')
    let release = (): void => undefined
    const held = new Promise<void>((r) => {
      release = r
    })
    let passed = (): void => undefined
    const fenced = new Promise<void>((r) => {
      passed = r
    })
    // a workspace ref's transaction: ws:<id>, not repo:r
    const aTx = a.state.tx(['ws:w1'], async (tx) => {
      await ao.fence(tx, 'r')
      passed()
      await held
    })
    await fenced
    let taken = false
    const taking = (async () => {
      for (;;) {
        const p = await bo.place('r')
        if (p.serve) break
        await new Promise((r) => setTimeout(r, 20))
      }
      taken = true
    })()
    // Wait on the event: b blocked on a lock (the owner lock a holds shared).
    for (;;) {
      const { rowCount } = await a.state.sql(
        "SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND mode = 'ExclusiveLock'",
      )
      if (rowCount === 1) break
      await new Promise((r) => setTimeout(r, 20))
    }
    t.notOk(taken, 'not taken while the fenced transaction runs')
    release()
    await aTx
    await taking
    t.ok(taken, 'taken once it committed')
  })
})

await withPostgres(t, async (db) => {
  t.test('a graceful stop hands its repositories over at once, the epoch moving on', async (t) => {
    const a = await PgState.open(db.url)
    const b = await PgState.open(db.url)
    t.teardown(async () => {
      await a.state.close()
      await b.state.close()
    })
    const settle = async (): Promise<void> => undefined
    const opts = { url: 'http://x', leaseMs: 60_000, settle, log: () => {} }
    const ao = await PgOwnership.start(a.state, { ...opts, instance: 'a' })
    const bo = await PgOwnership.start(b.state, { ...opts, instance: 'b' })
    t.teardown(() => bo.close())
    await ao.place('r')
    t.same(await bo.place('r'), { serve: false, owner: 'a', url: 'http://x' }, 'a owns r')
    await ao.close()
    t.same(await bo.place('r'), { serve: true }, 'b takes r without waiting out the lease')
    const { rows } = await b.state.sql("SELECT instance, epoch FROM repo_owners WHERE repo = 'r'")
    t.same(rows, [{ instance: 'b', epoch: '2' }])
  })
})
