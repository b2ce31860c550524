// One of the processes of pg-race.test.ts: on each `go <task>` line, 50 concurrent
// claim-shaped transactions on one PostgreSQL database (is the task open? then claim it and
// write a run), then `won <n>`: how many of its 50 claimed it.
import readline from 'node:readline'
import { PgState } from '../../server/src/pg/pg-state.ts'
import type { RunRec, TaskRec } from '../../server/src/types.ts'

const url = process.argv[2] ?? ''
const { state } = await PgState.open(url, { migrate: false })

async function claim(task: string): Promise<boolean> {
  return state.tx(['repo:demo'], async (x) => {
    const t = await x.get('tasks', task)
    if (t?.state !== 'open') return false
    const run_id = await x.nextId('run', 'run-')
    const at = x.now.toISOString()
    const claimed: TaskRec = { ...t, state: 'claimed', run_id, updated_at: at }
    const run: RunRec = {
      run_id,
      task,
      repo: 'demo',
      principal: `agent:${process.pid}`,
      state: 'active',
      lease_expires_at: new Date(x.now.getTime() + 60_000).toISOString(),
      notes: [],
      created_at: at,
      updated_at: at,
    }
    x.write({ c: 'tasks', k: task, v: claimed }, { c: 'runs', k: run_id, v: run })
    return true
  })
}

process.stdout.write('ready\n')
for await (const line of readline.createInterface({ input: process.stdin })) {
  const task = /^go (\S+)$/.exec(line)?.[1]
  if (!task) break
  const won = await Promise.all(Array.from({ length: 50 }, () => claim(task)))
  process.stdout.write(`won ${won.filter(Boolean).length}\n`)
}
await state.close()
