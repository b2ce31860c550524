// The stdio pump against a fake stream: which state it is in, what it dispatches, when it reads,
// holds and drains. Turns of the event loop are explicit (`turn()`), so nothing waits on time.
import t from 'tap'
import { LineReader } from '../../../core/src/jsonrpc/lines.ts'
import { MAX_IN_FLIGHT, PER_TURN, READ_AHEAD, StdioPump } from '../../../core/src/stdio/pump.ts'

function fake() {
  const handled: string[] = []
  const cancelled: string[] = []
  const later: (() => void)[] = []
  let drained = 0
  let idle: (() => void) | undefined
  const input = {
    paused: false,
    pause() {
      this.paused = true
    },
    resume() {
      this.paused = false
    },
  }
  const writer = {
    blocked: false,
    idle: () =>
      new Promise<void>((resolve) => {
        idle = resolve
      }),
  }
  const server = {
    inFlightCount: 0,
    /** Each request dispatched is a call in flight until the test settles it. */
    handleLine: (line: string) => {
      handled.push(line)
      server.inFlightCount++
    },
    rejectOversize: () => void handled.push('oversize'),
    /** Takes every cancellation (the line is then blanked in the reader). */
    cancelAhead: (line: string) => {
      cancelled.push(line)
      return () => {}
    },
    drain: async () => {},
  }
  const pump = new StdioPump({
    reader: new LineReader(1 << 20),
    writer,
    server,
    maxMessageBytes: 1 << 20,
    later: (fn) => void later.push(fn),
    onDrained: () => void drained++,
  })
  pump.connect(input)
  const lines = (n: number, from = 0) =>
    Buffer.from(Array.from({ length: n }, (_, i) => `{"jsonrpc":"2.0","id":${from + i},"method":"ping"}\n`).join(''))
  return {
    pump,
    input,
    writer,
    server,
    handled,
    cancelled,
    lines,
    /** Runs what was scheduled for the next turn of the event loop. */
    turn: () => {
      for (const fn of later.splice(0)) fn()
    },
    /** stdout drains. */
    drainStdout: async () => {
      idle?.()
      await Promise.resolve()
      await Promise.resolve()
    },
    get drained() {
      return drained
    },
    get scheduled() {
      return later.length
    },
  }
}

t.test('reading: at most PER_TURN requests per turn, the rest on later turns', async (t) => {
  const f = fake()
  f.pump.data(f.lines(PER_TURN * 2 + 3))
  t.equal(f.pump.state, 'reading')
  t.equal(f.handled.length, PER_TURN)
  t.equal(f.scheduled, 1, 'one later turn booked')
  f.turn()
  t.equal(f.handled.length, PER_TURN * 2)
  f.turn()
  t.equal(f.handled.length, PER_TURN * 2 + 3)
  t.equal(f.input.paused, false, 'reading goes on')
})

t.test('held-by-stdout: nothing dispatched, reading paused, cancellations taken ahead', async (t) => {
  const f = fake()
  f.writer.blocked = true
  const cancel = '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}\n'
  f.pump.data(Buffer.concat([f.lines(3), Buffer.from(cancel)]))
  t.equal(f.pump.state, 'held-by-stdout')
  t.equal(f.handled.length, 0)
  t.equal(f.input.paused, true)
  t.equal(f.cancelled.length, 1, 'the cancellation was taken out of order')
  f.pump.data(f.lines(1, 10))
  t.equal(f.handled.length, 0, 'still held')
  f.writer.blocked = false
  await f.drainStdout()
  t.equal(f.pump.state, 'reading')
  t.equal(f.handled.length, 4, 'every request dispatched once stdout drained, the cancellation not among them')
  t.equal(f.input.paused, false)
})

t.test('held-by-calls: reads on up to READ_AHEAD, resumes when a call settles', async (t) => {
  const f = fake()
  f.server.inFlightCount = MAX_IN_FLIGHT
  f.pump.data(f.lines(2))
  t.equal(f.pump.state, 'held-by-calls')
  t.equal(f.handled.length, 0)
  t.equal(f.input.paused, false, 'reading goes on, so cancellations can arrive')
  f.pump.data(Buffer.alloc(READ_AHEAD + 1, 0x20))
  t.equal(f.input.paused, true, 'past READ_AHEAD bytes reading stops')
  f.server.inFlightCount = MAX_IN_FLIGHT - 1
  f.pump.callSettled()
  f.pump.callSettled()
  t.equal(f.scheduled, 1, 'one later turn, however many calls settle')
  f.turn()
  t.equal(f.handled.length, 1, 'one slot, one request')
  t.equal(f.pump.state, 'held-by-calls')
})

t.test('draining at EOF: the last line without a newline counts; onDrained once', async (t) => {
  const f = fake()
  f.pump.data(Buffer.concat([f.lines(2), Buffer.from('{"jsonrpc":"2.0","id":99,"method":"ping"}')]))
  t.equal(f.handled.length, 2)
  f.pump.end(true)
  t.equal(f.pump.state, 'draining')
  t.equal(f.handled.length, 3)
  t.equal(f.input.paused, true)
  await Promise.resolve()
  t.equal(f.pump.state, 'done')
  f.pump.end(true)
  await Promise.resolve()
  t.equal(f.drained, 1)
})

t.test('draining on SIGTERM: a partial line is not a request', async (t) => {
  const f = fake()
  f.pump.data(Buffer.concat([f.lines(1), Buffer.from('{"jsonrpc":"2.0","id":5,"met')]))
  f.pump.end(false)
  t.equal(f.handled.length, 1)
  await Promise.resolve()
  t.equal(f.pump.state, 'done')
})

t.test('input ending while held: the holds still apply, then it drains', async (t) => {
  const f = fake()
  f.writer.blocked = true
  f.pump.data(f.lines(3))
  f.pump.end(true)
  t.equal(f.pump.state, 'held-by-stdout')
  t.equal(f.handled.length, 0)
  f.writer.blocked = false
  await f.drainStdout()
  t.equal(f.handled.length, 3)
  t.match(f.pump.state, /draining|done/)
  await Promise.resolve()
  t.equal(f.drained, 1)
})
