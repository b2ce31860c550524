import { Writable } from 'node:stream'
import t from 'tap'
import { LineWriter } from '../../../core/src/jsonrpc/writer.ts'

/** A Writable that reports "full" (write returns false) until drained by hand. */
class FakeOut extends Writable {
  readonly chunks: string[] = []
  full = false
  override write(chunk: unknown): boolean {
    this.chunks.push(String(chunk))
    return !this.full
  }
  drainNow(): void {
    this.full = false
    this.emit('drain')
  }
}

/** Writes are corked until the next tick; let that tick pass. */
const tick = () => new Promise<void>((r) => process.nextTick(r))

t.test('writes one line per value, newline-terminated, in order', async (t) => {
  const out = new FakeOut()
  const w = new LineWriter(out)
  w.write('{"a":1}')
  w.write('{"b":2}')
  await w.idle()
  t.equal(out.chunks.join(''), '{"a":1}\n{"b":2}\n')
  t.equal(w.backlog, 0)
})

t.test('parts (strings and shared buffers) form one line', async (t) => {
  const out = new FakeOut()
  const w = new LineWriter(out)
  const shared = Buffer.from('{"tools":[]}')
  w.write(['{"id":1,"result":', shared, '}'])
  w.write(['{"id":2,"result":', shared, '}'])
  await w.idle()
  t.equal(out.chunks.join(''), '{"id":1,"result":{"tools":[]}}\n{"id":2,"result":{"tools":[]}}\n')
})

t.test('idle() waits for corked writes to reach the stream', async (t) => {
  const out = new FakeOut()
  const w = new LineWriter(out)
  let uncorked = false
  const realUncork = out.uncork.bind(out)
  out.uncork = () => {
    uncorked = true
    realUncork()
  }
  out.full = true
  w.write('x') // fills the stream: the next lines queue up
  w.write('y')
  w.write('z')
  out.full = false
  out.emit('drain') // two queued lines go out corked, together
  await w.idle()
  t.ok(uncorked, 'idle resolved only after the uncork')
  t.equal(out.chunks.join(''), 'x\ny\nz\n')
})

t.test('stops writing while the stream is full and resumes on drain', async (t) => {
  const out = new FakeOut()
  const w = new LineWriter(out)
  out.full = true
  w.write('1')
  t.equal(out.chunks.length, 1, 'the first write goes out (and reports full)')
  w.write('2')
  w.write('3')
  await tick()
  t.equal(out.chunks.length, 1, 'nothing more is written while full')
  t.equal(w.backlog, 2, 'the rest is queued')
  let idle = false
  const p = w.idle().then(() => (idle = true))
  await new Promise((r) => setImmediate(r))
  t.notOk(idle, 'not idle while blocked')
  out.drainNow()
  await p
  t.ok(idle, 'idle after drain')
  t.equal(out.chunks.join(''), '1\n2\n3\n', 'everything, in order, exactly once')
  t.equal(w.backlog, 0)
})

t.test('blocked again during a flush: waits for the next drain', async (t) => {
  const out = new FakeOut()
  const w = new LineWriter(out)
  out.full = true
  w.write('a')
  w.write('b')
  await tick()
  out.full = true
  out.emit('drain') // drained, but the coalesced write of "b" fills it again
  await tick()
  t.equal(out.chunks.join(''), 'a\nb\n')
  w.write('c')
  await tick()
  t.equal(out.chunks.join(''), 'a\nb\n', 'c waits')
  out.drainNow()
  await w.idle()
  t.equal(out.chunks.join(''), 'a\nb\nc\n')
})

t.test('a stream error (client gone) drops the queue and releases idle waiters', async (t) => {
  const out = new FakeOut()
  const w = new LineWriter(out)
  out.full = true
  w.write('x')
  w.write('y')
  const p = w.idle()
  out.emit('error', new Error('EPIPE'))
  await p
  t.equal(w.backlog, 0)
  w.write('z')
  t.equal(out.chunks.join(''), 'x\n', 'nothing is written after the error')
})

/** Keeps references to what it was given, and may report it as still queued. */
class HoldingOut extends Writable {
  readonly held: Buffer[] = []
  set queued(n: number) {
    // writableLength is a getter on Writable's prototype; shadow it on the instance.
    Object.defineProperty(this, 'writableLength', { value: n, configurable: true })
  }
  override write(chunk: unknown): boolean {
    this.held.push(chunk as Buffer)
    return true
  }
}

t.test('a line of parts is written whole; its buffer is reused only once the stream let go of it', async (t) => {
  const shared = Buffer.from('{"tools":[]}')
  const line = (id: number) => [`{"id":${id},"result":`, shared, '}'] as const
  // The stream keeps everything queued: every line needs a buffer of its own.
  const busy = new HoldingOut()
  busy.queued = 10
  const w = new LineWriter(busy)
  for (const id of [1, 2, 3]) w.write(line(id))
  t.same(busy.held.map((b) => b.toString()), [1, 2, 3].map((id) => `{"id":${id},"result":{"tools":[]}}\n`), 'a held line is never overwritten')
  t.equal(new Set(busy.held.map((b) => b.buffer)).size, 3, 'three buffers')
  // The stream takes each write whole at once: one buffer serves every line.
  const free = new HoldingOut()
  const w2 = new LineWriter(free)
  const seen: string[] = []
  for (const id of [1, 2, 3]) {
    w2.write(line(id))
    seen.push((free.held.at(-1) as Buffer).toString())
  }
  t.same(seen, [1, 2, 3].map((id) => `{"id":${id},"result":{"tools":[]}}\n`))
  t.equal(new Set(free.held.map((b) => b.buffer)).size, 1, 'no allocation in steady state')
})
