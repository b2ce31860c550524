// Splits a byte stream into newline-delimited messages without ever buffering more than
// `maxBytes` of one line: an oversized line is reported (with whatever request id its first
// bytes reveal) and the rest of it is skipped as it streams past.
import { peekId } from './peek-id.ts'

export type LineEvent =
  | { kind: 'line'; text: string }
  | { kind: 'oversize'; bytes: number; id: string | number | null }

const NL = 0x0a
const CR = 0x0d
/** How much of an oversized line is kept to find its id. */
const PEEK_BYTES = 4096

export class LineSplitter {
  private parts: Buffer[] = []
  private size = 0
  private discarding = false
  private discarded = 0
  private peek: Buffer | undefined

  constructor(private readonly maxBytes: number) {}

  /** Feeds one chunk; calls `emit` for every complete line or oversize report, in order. */
  push(chunk: Buffer, emit: (e: LineEvent) => void): void {
    let start = 0
    while (start < chunk.length) {
      const nl = chunk.indexOf(NL, start)
      const end = nl === -1 ? chunk.length : nl
      this.take(chunk, start, end)
      if (nl === -1) return
      this.finishLine(emit)
      start = nl + 1
    }
  }

  /** At end of input: a last line without a newline still counts. */
  end(emit: (e: LineEvent) => void): void {
    if (this.size > 0 || this.discarding) this.finishLine(emit)
  }

  private take(chunk: Buffer, start: number, end: number): void {
    const n = end - start
    if (n === 0) return
    if (this.discarding) {
      this.discarded += n
      return
    }
    if (this.size + n > this.maxBytes) {
      // Keep only a prefix to recover the id, then stop buffering this line.
      const head = Buffer.concat([...this.parts, chunk.subarray(start, Math.min(end, start + PEEK_BYTES))])
      this.peek = head.subarray(0, PEEK_BYTES)
      this.discarding = true
      this.discarded = this.size + n
      this.parts = []
      this.size = 0
      return
    }
    this.parts.push(chunk.subarray(start, end))
    this.size += n
  }

  private finishLine(emit: (e: LineEvent) => void): void {
    if (this.discarding) {
      const id = this.peek ? peekId(this.peek.toString('utf8')) : null
      const bytes = this.discarded
      this.discarding = false
      this.discarded = 0
      this.peek = undefined
      emit({ kind: 'oversize', bytes, id })
      return
    }
    const buf = this.parts.length === 1 ? (this.parts[0] as Buffer) : Buffer.concat(this.parts, this.size)
    this.parts = []
    this.size = 0
    let len = buf.length
    if (len > 0 && buf[len - 1] === CR) len-- // CRLF tolerated
    const text = buf.toString('utf8', 0, len)
    if (text.trim() === '') return // blank lines are ignored
    emit({ kind: 'line', text })
  }
}
