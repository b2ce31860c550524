import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { fsJournalIo, Store, type JournalIo } from '../../server/src/store.ts'
import { AgwpError } from '../../server/src/errors.ts'
import { tmpdir } from './helpers.ts'
import type { TaskRec } from '../../server/src/types.ts'

// Fault injection for the journal: a failed or short append at every point of a commit
// (before the first byte, after a part of the line, at the fsync; with the cut-back
// itself failing once) must leave exactly the acknowledged commits after a restart,
// with nothing unacknowledged applied in memory or on disk.

const root = tmpdir('store-faults')
t.teardown(() => fs.rmSync(root, { recursive: true, force: true }))

const enospc = (): Error => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })

interface Plan {
  /** bytes the armed commit gets onto disk before its write fails (undefined: writes work) */
  failAfter?: number
  /** the write returns short (this many bytes) but keeps working */
  shortBy?: number
  failFsync?: boolean
  /** how many cut-back attempts (truncate) fail before one works */
  failTruncates?: number
}

class FaultyIo implements JournalIo {
  plan: Plan | undefined
  private written = 0
  write(fd: number, buf: Buffer, off: number, len: number): number {
    const p = this.plan
    if (p?.failAfter !== undefined) {
      const room = p.failAfter - this.written
      if (room <= 0) throw enospc()
      const n = fsJournalIo.write(fd, buf, off, Math.min(len, room))
      this.written += n
      return n
    }
    if (p?.shortBy !== undefined && len > p.shortBy) {
      this.plan = undefined
      return fsJournalIo.write(fd, buf, off, p.shortBy)
    }
    return fsJournalIo.write(fd, buf, off, len)
  }
  fsync(fd: number): void {
    if (this.plan?.failFsync) throw Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' })
    fsJournalIo.fsync(fd)
  }
  fsyncAsync(fd: number, done: (err: Error | null) => void): void {
    setImmediate(() => {
      try {
        this.fsync(fd)
        done(null)
      } catch (e) {
        done(e as Error)
      }
    })
  }
  truncate(fd: number, len: number): void {
    if (this.plan?.failTruncates) {
      this.plan.failTruncates--
      throw Object.assign(new Error('EIO: i/o error, ftruncate'), { code: 'EIO' })
    }
    fsJournalIo.truncate(fd, len)
  }
  arm(p: Plan): void {
    this.plan = p
    this.written = 0
  }
}

const task = (id: string, title: string): TaskRec => ({
  id,
  repo: 'r',
  title,
  body: '',
  state: 'open',
  paths: [],
  created_by: 'human:x',
  created_at: 'c',
  updated_at: 'u',
})

// One line of a commit of task `id` is about this long; the offsets sample every region of it.
const LINE = Buffer.byteLength(
  JSON.stringify({ ops: [{ c: 'tasks', k: 'task-00', v: task('task-00', 'x'.repeat(40)) }] }) + '\n',
)
const scenarios: { name: string; plan: Plan; acked: boolean }[] = [
  { name: 'write fails before the first byte', plan: { failAfter: 0 }, acked: false },
  { name: 'write fails after 1 byte', plan: { failAfter: 1 }, acked: false },
  { name: 'write fails mid-line', plan: { failAfter: Math.floor(LINE / 2) }, acked: false },
  { name: 'write fails before the newline', plan: { failAfter: LINE - 1 }, acked: false },
  { name: 'fsync fails after the whole line', plan: { failFsync: true }, acked: false },
  { name: 'cut-back fails once (store refuses, then heals)', plan: { failAfter: 10, failTruncates: 1 }, acked: false },
  { name: 'cut-back keeps failing for two commits', plan: { failAfter: 10, failTruncates: 3 }, acked: false },
  { name: 'short write that then completes', plan: { shortBy: 7 }, acked: true },
]

for (const sc of scenarios) {
  for (const at of [0, 3]) {
    t.test(`${sc.name}, after ${at} good commit(s)`, async (t) => {
      const dir = path.join(root, `s-${scenarios.indexOf(sc)}-${at}`)
      const io = new FaultyIo()
      const logs: string[] = []
      const s = Store.open(dir, { io, log: (m) => logs.push(m) })
      const acked = new Map<string, string>()
      let n = 0
      // Acknowledged = committed and then durable (what the server waits for before answering).
      const put = async (): Promise<string> => {
        const id = `task-${String(n++).padStart(2, '0')}`
        s.commit([{ c: 'tasks', k: id, v: task(id, `${id} ${'x'.repeat(32)}`) }])
        await s.flush()
        acked.set(id, `${id} ${'x'.repeat(32)}`)
        return id
      }
      for (let i = 0; i < at; i++) await put()
      io.arm(sc.plan)
      const victim = `task-${String(n).padStart(2, '0')}`
      let err: unknown
      try {
        await put()
      } catch (e) {
        err = e
      }
      if (sc.acked) t.equal(err, undefined, 'a short write that completes is acknowledged')
      else {
        t.ok(err, 'the failed commit throws')
        t.equal(s.get('tasks', victim), undefined, 'a failed commit is not applied in memory')
        if (sc.plan.failAfter !== undefined)
          t.ok(
            err instanceof AgwpError && err.code === 'storage_full' && err.status === 507,
            'disk full is 507 storage_full',
          )
      }
      // While the cut-back keeps failing, further commits are refused, not written behind the torn line.
      let refused = 0
      while ((io.plan?.failTruncates ?? 0) > 0) {
        await t.rejects(put(), 'refused while the journal cannot be restored')
        refused++
      }
      io.plan = undefined
      for (let i = 0; i < 3; i++) await put()
      s.close()
      if (sc.plan.failTruncates) t.ok(refused > 0 || sc.plan.failTruncates === 1, 'refusals counted')
      const journal = fs.readFileSync(path.join(dir, 'journal.log'), 'utf8')
      for (const line of journal.split('\n').slice(0, -1))
        t.doesNotThrow(() => JSON.parse(line), 'every journal line is whole')

      const reopened = Store.open(dir, { log: (m) => logs.push(m) })
      t.same(
        Object.fromEntries(reopened.all('tasks').map((x) => [x.id, x.title])),
        Object.fromEntries(acked),
        'after a restart: every acknowledged commit, nothing else',
      )
      t.same(
        logs.filter((l) => /torn|damaged/.test(l)),
        [],
        'no torn tail at the restart',
      )
      reopened.close()
    })
  }
}

t.test('start-up: a torn tail is truncated with a warning', async (t) => {
  const dir = path.join(root, 'torn-tail')
  const s = Store.open(dir)
  s.commit([{ c: 'tasks', k: 'task-1', v: task('task-1', 'one') }])
  s.commit([{ c: 'tasks', k: 'task-2', v: task('task-2', 'two') }])
  s.close()
  const file = path.join(dir, 'journal.log')
  const good = fs.readFileSync(file)
  fs.appendFileSync(file, '{"ops":[{"c":"tasks","k":"task-3","v":{"id":"ta')
  const logs: string[] = []
  const r = Store.open(dir, { log: (m) => logs.push(m) })
  t.same(
    r.all('tasks').map((x) => x.id),
    ['task-1', 'task-2'],
  )
  t.match(logs.join('\n'), /torn, unacknowledged write; truncated/)
  r.commit([{ c: 'tasks', k: 'task-3', v: task('task-3', 'three') }])
  r.close()
  t.notOk(good.includes('task-3'))
  const again = Store.open(dir)
  t.same(
    again.all('tasks').map((x) => x.id),
    ['task-1', 'task-2', 'task-3'],
    'a write after the truncated tail survives',
  )
  again.close()
})

t.test('start-up: damage in the middle refuses to start, names the line, keeps the file', async (t) => {
  const dir = path.join(root, 'torn-middle')
  fs.mkdirSync(dir, { recursive: true })
  const file = path.join(dir, 'journal.log')
  // What old versions left after a full disk: a torn line followed by acknowledged ones.
  const line = (id: string): string => JSON.stringify({ ops: [{ c: 'tasks', k: id, v: task(id, id) }] }) + '\n'
  const text = line('task-1') + '{"ops":[{"c":"tasks","k":"task-2","v":{"id"' + line('task-3') + line('task-4')
  fs.writeFileSync(file, text)
  t.throws(() => Store.open(dir), /journal\.log line 2 .*damaged/)
  t.equal(fs.readFileSync(file, 'utf8'), text, 'the journal is left exactly as it was')
  t.notOk(fs.existsSync(path.join(dir, 'state.json')), 'no snapshot was written from a partial replay')
})

t.test('an fsync still in flight at close never touches the descriptor afterwards', async (t) => {
  const held: ((err: Error | null) => void)[] = []
  const io: JournalIo = { ...fsJournalIo, fsyncAsync: (_fd, done) => void held.push(done) }
  const logs: string[] = []
  const a = Store.open(path.join(root, 'close-a'), { io, log: (m) => logs.push(m) })
  a.commit([{ c: 'tasks', k: 'task-1', v: task('task-1', 'one') }])
  const flushed = a.flush()
  t.equal(held.length, 1, 'an fsync is in flight')
  a.close() // fsyncs synchronously, then closes
  await t.resolves(flushed, 'a waiter is settled by the fsync at close')
  // The next store in this process may get the same descriptor number.
  const b = Store.open(path.join(root, 'close-b'))
  b.commit([{ c: 'tasks', k: 'task-2', v: task('task-2', 'two') }])
  await b.flush()
  for (const done of held.splice(0))
    done(Object.assign(new Error('EBADF: bad file descriptor, fsync'), { code: 'EBADF' }))
  await new Promise((r) => setImmediate(r))
  t.same(logs, [], 'the late failure of the closed journal is ignored')
  t.equal(b.get('tasks', 'task-2')?.title, 'two')
  b.close()
  const again = Store.open(path.join(root, 'close-b'))
  t.equal(again.get('tasks', 'task-2')?.title, 'two', 'the other store journal is intact')
  again.close()
  const aa = Store.open(path.join(root, 'close-a'))
  t.equal(aa.get('tasks', 'task-1')?.title, 'one', 'the closed store kept its write')
  aa.close()
})
