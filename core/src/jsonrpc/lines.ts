// Newline-delimited messages out of a byte stream, taken one at a time.
//
// Chunks are kept as they were read and a line becomes a string only when it is taken: lines
// waiting their turn (a client that pipelines thousands of requests) cost no heap objects, so
// they cannot be promoted to V8's old generation while they wait. A line is never buffered
// beyond `maxBytes`: an oversized one is reported (with whatever request id its first bytes
// reveal) and the rest of it is skipped as it streams past.
import { peekId } from './peek-id.ts'

/** A line over the size limit: its length, and the request id its first bytes reveal. */
export interface Oversize {
  kind: 'oversize'
  bytes: number
  id: string | number | null
}

/** A complete line (CRLF stripped, never blank), or an oversize report. */
export type LineEvent = string | Oversize

const NL = 0x0a
const CR = 0x0d
const SPACE = 0x20
/** How much of an oversized line is kept to find its id. */
const PEEK_BYTES = 4096

export class LineReader {
  /** Chunks read and not fully taken; `pos` is the first untaken byte of the first one. */
  private chunks: Buffer[] = []
  private pos = 0
  /** A line that began in an earlier chunk: its parts so far. */
  private parts: Buffer[] = []
  private size = 0
  private discarding = false
  private discarded = 0
  private peek: Buffer | undefined
  private ended = false

  constructor(private readonly maxBytes: number) {}

  push(chunk: Buffer): void {
    if (chunk.length > 0) this.chunks.push(chunk)
  }

  /** End of input: a last line without a newline still counts. */
  end(): void {
    this.ended = true
  }

  /** Bytes read and not yet taken (they may hold no complete line). */
  get buffered(): boolean {
    return this.chunks.length > 0
  }

  /** The next line or oversize report, or undefined until more input (or end()) completes one. */
  next(): LineEvent | undefined {
    while (this.chunks.length > 0) {
      const chunk = this.chunks[0] as Buffer
      const start = this.pos
      const nl = chunk.indexOf(NL, start)
      const end = nl === -1 ? chunk.length : nl
      this.advance(chunk, nl === -1 ? end : nl + 1)
      if (nl !== -1 && this.size === 0 && !this.discarding) {
        // The whole line lies in this chunk: no copy.
        if (end - start > this.maxBytes) return oversize(end - start, chunk.subarray(start, start + PEEK_BYTES))
        const line = text(chunk, start, end)
        if (line !== undefined) return line
        continue
      }
      this.take(chunk, start, end)
      if (nl === -1) continue
      const e = this.finishLine()
      if (e !== undefined) return e
    }
    if (this.ended && (this.size > 0 || this.discarding)) return this.finishLine()
    return undefined
  }

  /**
   * Takes, ahead of their turn, the complete lines not yet taken that contain `needle` (ASCII):
   * each is passed to `take` and blanked, so next() skips it. A line that began in an earlier
   * chunk is left in its place.
   */
  takeAhead(needle: string, take: (line: string) => void): void {
    for (let c = 0; c < this.chunks.length; c++) {
      const chunk = this.chunks[c] as Buffer
      const from = c === 0 ? this.pos : 0
      const continued = c > 0 || this.size > 0 || this.discarding
      for (let hit = chunk.indexOf(needle, from, 'latin1'); hit !== -1; ) {
        const nl = chunk.indexOf(NL, hit)
        if (nl === -1) break // completed by a later chunk: it is taken in order
        const start = Math.max(from, chunk.lastIndexOf(NL, hit) + 1)
        if (!(start === from && continued) && nl - start <= this.maxBytes) {
          const line = text(chunk, start, nl)
          chunk.fill(SPACE, start, nl)
          if (line !== undefined) take(line)
        }
        hit = chunk.indexOf(needle, nl, 'latin1')
      }
    }
  }

  private advance(chunk: Buffer, to: number): void {
    if (to < chunk.length) this.pos = to
    else {
      this.chunks.shift()
      this.pos = 0
    }
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
      this.peek = Buffer.concat([...this.parts, chunk.subarray(start, Math.min(end, start + PEEK_BYTES))]).subarray(0, PEEK_BYTES)
      this.discarding = true
      this.discarded = this.size + n
      this.parts = []
      this.size = 0
      return
    }
    this.parts.push(chunk.subarray(start, end))
    this.size += n
  }

  private finishLine(): LineEvent | undefined {
    if (this.discarding) {
      const e = oversize(this.discarded, this.peek ?? Buffer.alloc(0))
      this.discarding = false
      this.discarded = 0
      this.peek = undefined
      return e
    }
    const buf = this.parts.length === 1 ? (this.parts[0] as Buffer) : Buffer.concat(this.parts, this.size)
    this.parts = []
    this.size = 0
    return text(buf, 0, buf.length)
  }
}

/** The line's text, CRLF tolerated; undefined for a blank line (ignored). */
function text(buf: Buffer, start: number, end: number): string | undefined {
  if (end > start && buf[end - 1] === CR) end--
  let i = start
  while (i < end && (buf[i] === SPACE || buf[i] === 0x09 || buf[i] === CR)) i++
  if (i === end) return undefined
  return buf.toString('utf8', start, end)
}

function oversize(bytes: number, head: Buffer): Oversize {
  return { kind: 'oversize', bytes, id: peekId(head.toString('utf8')) }
}
