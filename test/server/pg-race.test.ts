import { spawn, type ChildProcess } from 'node:child_process'
import readline from 'node:readline'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { PgState } from '../../server/src/pg/pg-state.ts'
import { withPostgres } from '../helpers/postgres.ts'
import { task } from './state-contract.ts'

// The database decides a race between processes: 4 processes (pg-claim-child.ts), each with
// 50 concurrent claim-shaped transactions on one task, over 5 rounds: exactly one claim wins
// each round, and exactly one run is written for it.

const CHILD = fileURLToPath(new URL('./pg-claim-child.ts', import.meta.url))
const PROCESSES = 4
const ROUNDS = 5

/** The next line a child prints. */
function lines(child: ChildProcess): () => Promise<string> {
  const it = readline.createInterface({ input: child.stdout as NodeJS.ReadableStream })[Symbol.asyncIterator]()
  return async () => {
    const r = await it.next()
    if (r.done) throw new Error('a race process ended early')
    return r.value
  }
}

await withPostgres(t, async (db) => {
  t.test(`${PROCESSES} processes × 50 claims of one task, ${ROUNDS} rounds: one winner each`, async (t) => {
    const { state } = await PgState.open(db.url)
    t.teardown(() => state.close())
    const children = Array.from({ length: PROCESSES }, () =>
      spawn(process.execPath, ['--import=tsx', CHILD, db.url], { stdio: ['pipe', 'pipe', 'inherit'] }),
    )
    t.teardown(() => {
      for (const c of children) c.stdin?.end()
    })
    const next = children.map(lines)
    t.same(await Promise.all(next.map((n) => n())), Array(PROCESSES).fill('ready'), 'every process is ready')
    for (let round = 1; round <= ROUNDS; round++) {
      const id = `task-${round}`
      await state.tx(['repo:demo'], async (x) => x.write({ c: 'tasks', k: id, v: task(id, 'demo') }))
      for (const c of children) c.stdin?.write(`go ${id}\n`)
      const won = (await Promise.all(next.map((n) => n()))).map((l) => Number(/^won (\d+)$/.exec(l)?.[1] ?? NaN))
      const runs = (await state.all('runs')).filter((r) => r.task === id)
      t.equal(
        won.reduce((a, b) => a + b, 0),
        1,
        `round ${round}: one winner of ${PROCESSES * 50} (${won.join('+')})`,
      )
      t.equal(runs.length, 1, `round ${round}: one run written`)
      t.equal((await state.get('tasks', id))?.run_id, runs[0]?.run_id, `round ${round}: the task names that run`)
    }
  })
})
