import { Writable } from 'node:stream'
import t from 'tap'
import { LineWriter } from '../../../core/src/jsonrpc/writer.ts'

/**
 * A pipe whose reader is under the test's control: writes complete only when `release()` is
 * called (as the OS takes bytes from a full pipe), and `highWaterMark` decides when the
 * stream reports itself full, as net.Socket does.
 */
class SlowPipe extends Writable {
  readonly writes: Buffer[] = []
  private held: (() => void)[] = []
  auto = false
  constructor(highWaterMark = 1024) {
    super({ highWaterMark })
  }
  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (e?: Error | null) => void): void {
    this.writes.push(Buffer.from(chunk)) // a copy: what the OS would have received at this moment
    if (this.auto) cb()
    else this.held.push(() => cb())
  }
  release(): void {
    const h = this.held
    this.held = []
    for (const f of h) f()
  }
  get text(): string {
    return Buffer.concat(this.writes).toString('utf8')
  }
}

const tick = () => new Promise<void>((r) => process.nextTick(r))
const turn = () => new Promise<void>((r) => setImmediate(r))

t.test('one JSON value per line, in order; the lines of one tick leave as one write', async (t) => {
  const out = new SlowPipe()
  out.auto = true
  const w = new LineWriter(out)
  w.write('{"a":1}')
  w.write(['{"b":', Buffer.from('[2]'), '}'])
  w.write('{"c":"é€𝄞"}')
  t.equal(out.writes.length, 0, 'nothing before the end of the tick')
  await w.idle()
  t.equal(out.text, '{"a":1}\n{"b":[2]}\n{"c":"é€𝄞"}\n')
  t.equal(out.writes.length, 1, 'a single write')
  w.write('{"d":4}')
  await w.idle()
  t.equal(out.text, '{"a":1}\n{"b":[2]}\n{"c":"é€𝄞"}\n{"d":4}\n', 'a later line gets its own write')
})

t.test('blocked while the stream is over its high-water mark; idle() waits until the OS took every byte', async (t) => {
  const out = new SlowPipe(64)
  const w = new LineWriter(out)
  w.write(`{"pad":"${'x'.repeat(100)}"}`)
  await tick()
  t.ok(w.blocked, 'more than the stream wants')
  let idle = false
  const p = w.idle().then(() => (idle = true))
  await turn()
  t.notOk(idle, 'not idle while the write is pending')
  out.release()
  await p
  t.notOk(w.blocked, 'drained')
  t.ok(idle)
})

t.test('lines written while blocked are gathered and sent in order, exactly once', async (t) => {
  const out = new SlowPipe(16)
  const w = new LineWriter(out)
  const want: string[] = []
  for (let round = 0; round < 5; round++) {
    for (let i = 0; i < 50; i++) {
      const line = JSON.stringify({ round, i, pad: 'y'.repeat((round * 37 + i * 11) % 300) })
      want.push(line)
      w.write(i % 3 === 0 ? [line.slice(0, 5), Buffer.from(line.slice(5))] : line)
    }
    await tick()
    out.release()
    await turn()
  }
  out.auto = true
  out.release()
  await w.idle()
  t.equal(out.text, `${want.join('\n')}\n`)
})

t.test('a line longer than a block is written whole, after what was gathered before it', async (t) => {
  const out = new SlowPipe()
  out.auto = true
  const w = new LineWriter(out)
  const big = JSON.stringify({ big: 'z'.repeat(200_000) })
  const bigParts = ['{"parts":', Buffer.from(JSON.stringify('q'.repeat(150_000))), '}']
  w.write('{"first":1}')
  w.write(big)
  w.write('{"between":2}')
  w.write(bigParts)
  w.write('{"last":3}')
  await w.idle()
  t.equal(
    out.text,
    `{"first":1}\n${big}\n{"between":2}\n{"parts":${JSON.stringify('q'.repeat(150_000))}}\n{"last":3}\n`,
  )
})

t.test('many blocks: a block is reused only after the stream finished with it', async (t) => {
  const out = new SlowPipe(1 << 30)
  const w = new LineWriter(out)
  const want: string[] = []
  // ~640 KiB in lines of ~1 KiB, in ten ticks: several 64 KiB blocks are in flight at once.
  for (let tickNo = 0; tickNo < 10; tickNo++) {
    for (let i = 0; i < 64; i++) {
      const line = JSON.stringify({ tickNo, i, pad: String(tickNo).repeat(1000) })
      want.push(line)
      w.write(line)
    }
    await tick()
    if (tickNo % 3 === 2) out.release()
  }
  out.auto = true
  out.release()
  await w.idle()
  t.equal(out.text, `${want.join('\n')}\n`, 'no bytes overwritten while the stream still held them')
})

t.test('a stream error (client gone) releases idle waiters and stops writing', async (t) => {
  const out = new SlowPipe(16)
  const w = new LineWriter(out)
  w.write('x'.repeat(100))
  await tick()
  const p = w.idle()
  out.emit('error', new Error('EPIPE'))
  await p
  t.notOk(w.blocked)
  const before = out.writes.length
  w.write('z')
  await tick()
  t.equal(out.writes.length, before, 'nothing is written after the error')
})
