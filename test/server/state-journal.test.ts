import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { JournalState } from '../../server/src/journal-state.ts'
import { openState } from '../../server/src/open-state.ts'
import { requestScope, Store, fsJournalIo, type JournalIo } from '../../server/src/store.ts'
import { tmpdir } from './helpers.ts'
import { stateContract, task } from './state-contract.ts'

// The State contract on the journal backend, then what only the journal has: a commit is
// acknowledged (settle) only after its fsync, and a reopened data directory sees every commit.

const root = tmpdir('state-journal')
t.teardown(() => fs.rmSync(root, { recursive: true, force: true }))
let n = 0
const fresh = (): string => path.join(root, `d${n++}`)

stateContract(t, 'journal', () => openState({ dataDir: fresh() }))

t.test('journal: settle waits for the fsync of what the scope wrote', async (t) => {
  let release: (() => void) | undefined
  const io: JournalIo = {
    ...fsJournalIo,
    fsyncAsync: (fd, done) => {
      release = () => fsJournalIo.fsyncAsync(fd, done)
    },
  }
  const dir = fresh()
  const s = new JournalState(Store.open(path.join(dir, 'state'), { io }))
  t.teardown(() => s.close())
  const scope = s.newScope()
  await requestScope.run(scope, () =>
    s.tx([], async (x) => x.write({ c: 'tasks', k: 'task-1', v: task('task-1', 'demo') })),
  )
  let settled = false
  const waiting = s.settle(scope).then(() => (settled = true))
  // The fsync's callback is held by the test, so nothing can settle it before release().
  await new Promise((r) => setImmediate(r))
  t.equal(settled, false, 'not settled while its fsync has not returned')
  t.ok(release, 'an fsync was started')
  release?.()
  await waiting
  t.equal(settled, true, 'settled once the fsync returned')
})

t.test('journal: a reopened data directory sees every commit, counters included', async (t) => {
  const dir = fresh()
  const a = await openState({ dataDir: dir })
  const id = await a.tx(['repo:demo'], async (x) => {
    const id = await x.nextId('task', 'task-')
    x.write({ c: 'tasks', k: id, v: task(id, 'demo') })
    return id
  })
  await a.close()
  const b = await openState({ dataDir: dir })
  t.teardown(() => b.close())
  t.equal((await b.get('tasks', id))?.id, id, 'the record survived')
  const next = await b.tx([], (x) => x.nextId('task', 'task-'))
  t.not(next, id, 'the counter survived: no id handed out twice')
})
