// The stdio pump: what moves requests from the bytes read on stdin to the MCP server, and what
// keeps memory bounded however fast a client pipelines. A small state machine:
//
//   reading          input open; up to PER_TURN requests dispatched per turn of the event loop
//   held-by-stdout   the client is not reading our answers: nothing is dispatched and reading
//                    stops (answers would only pile up); resumes when stdout has drained
//   held-by-calls    MAX_IN_FLIGHT calls run: nothing is dispatched, but reading goes on up to
//                    READ_AHEAD bytes so that cancellations can be read; resumes when a call settles
//   draining         input ended (EOF, or SIGTERM): what was read has been dispatched; waiting for
//                    the calls in flight, then onDrained
//   done             every call settled
//
// While held, cancellations among the bytes read are taken out of order (server.cancelAhead), so
// a queued or running call can still be cancelled. Two bookings are kept apart from the state: a
// later turn (scheduled) and a wake-up when stdout drains (stdoutWaiter); each is made once.
import type { LineEvent, LineReader } from '../jsonrpc/lines.ts'
import type { RequestId } from '../jsonrpc/message.ts'
import type { Input } from './stdin.ts'

export type PumpState = 'reading' | 'held-by-stdout' | 'held-by-calls' | 'draining' | 'done'

/** Calls running at once beyond which no further request is dispatched. */
export const MAX_IN_FLIGHT = 64
/**
 * Requests dispatched per turn of the event loop. A quick call then completes before the next
 * ones start, so its objects die young; dispatching a whole 64 KiB read at once (~230 calls)
 * kept every one of them alive across scavenges, promoted to the old generation.
 */
export const PER_TURN = 8
/**
 * Bytes of requests read and waiting in the reader beyond which stdin is paused: the bound on
 * what a pipelining client can make ag-mcp hold. Below it, reading goes on between turns (and
 * while calls wait, so that cancellations can be read).
 */
export const READ_AHEAD = 128 * 1024

export interface PumpOptions {
  reader: Pick<LineReader, 'push' | 'end' | 'next' | 'takeAhead' | 'buffered' | 'bufferedBytes'>
  writer: { readonly blocked: boolean; idle(): Promise<void> }
  server: {
    readonly inFlightCount: number
    handleLine(text: string): void
    rejectOversize(id: RequestId | null, bytes: number, limit: number): void
    cancelAhead(text: string): (() => void) | undefined
    drain(): Promise<void>
  }
  maxMessageBytes: number
  /** Runs `fn` on a later turn of the event loop (setImmediate). */
  later(fn: () => void): void
  /** Once, when input has ended and every call has settled. */
  onDrained(): void
}

export class StdioPump {
  private current: PumpState = 'reading'
  private input: Input | undefined
  /** Input is over: no more bytes will come. */
  private ended = false
  private scheduled = false
  private stdoutWaiter = false

  constructor(private readonly o: PumpOptions) {}

  get state(): PumpState {
    return this.current
  }

  /** The input to pause and resume; its bytes come through data() and its end through end(). */
  connect(input: Input): void {
    this.input = input
  }

  /** Bytes read (valid only during the call: the reader copies them). */
  data(bytes: Buffer): void {
    this.o.reader.push(bytes)
    if (this.o.reader.bufferedBytes > READ_AHEAD) this.pauseInput()
    this.pump()
  }

  /** Stops reading. At EOF the last bytes count as a line; on SIGTERM a partial line does not. */
  end(eof: boolean): void {
    if (eof) this.o.reader.end()
    if (this.ended) return
    this.ended = true
    this.input?.pause()
    this.pump()
  }

  /** A call settled: if calls were holding the pump, pump again on a later turn. */
  callSettled(): void {
    if (this.current === 'held-by-calls') this.pumpLater()
  }

  private pump = (): void => {
    const { reader, writer, server } = this.o
    for (let budget = PER_TURN; reader.buffered; budget--) {
      if (writer.blocked) return this.holdForStdout()
      if (server.inFlightCount >= MAX_IN_FLIGHT) return this.hold('held-by-calls', true)
      if (budget === 0) return this.pumpLater()
      const e = reader.next()
      if (e === undefined) break
      this.dispatch(e)
    }
    if (this.ended) {
      // At EOF: a last line without a newline, or an oversize line cut short by the end.
      for (let e = reader.next(); e !== undefined; e = reader.next()) this.dispatch(e)
      this.drain()
      return
    }
    this.current = 'reading'
    if (this.input?.paused) this.input.resume()
  }

  private dispatch(e: LineEvent): void {
    if (typeof e === 'string') this.o.server.handleLine(e)
    else this.o.server.rejectOversize(e.id, e.bytes, this.o.maxMessageBytes)
  }

  private pumpLater(): void {
    if (this.scheduled) return
    this.scheduled = true
    this.o.later(() => {
      this.scheduled = false
      this.pump()
    })
  }

  private holdForStdout(): void {
    this.hold('held-by-stdout', false)
    if (this.stdoutWaiter) return
    this.stdoutWaiter = true
    void this.o.writer.idle().then(() => {
      this.stdoutWaiter = false
      this.pump()
    })
  }

  /**
   * Held: cancellations among the bytes read are taken out of order, and reading goes on up to
   * READ_AHEAD bytes unless the client is not reading our answers (readMore false).
   */
  private hold(state: 'held-by-stdout' | 'held-by-calls', readMore: boolean): void {
    this.current = state
    this.o.reader.takeAhead('notifications/cancelled', (line) => this.o.server.cancelAhead(line))
    if (!readMore || this.o.reader.bufferedBytes > READ_AHEAD) this.pauseInput()
    else if (this.input?.paused && !this.ended) this.input.resume()
  }

  private pauseInput(): void {
    if (this.input && !this.input.paused) this.input.pause()
  }

  private drain(): void {
    if (this.current === 'draining' || this.current === 'done') return
    this.current = 'draining'
    void this.o.server.drain().then(() => {
      this.current = 'done'
      this.o.onDrained()
    })
  }
}
