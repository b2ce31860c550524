// Newline-delimited messages out of a byte stream, taken one at a time.
//
// Bytes read are copied into one buffer the reader owns and reuses, and a line becomes a
// string only when it is taken. So lines waiting their turn (a client that pipelines thousands
// of requests) cost no heap objects, and the stream's chunks die young: a chunk kept until its
// last line was taken would live through several scavenges, and its 64 KiB would be freed only
// by a full collection. A line is never buffered beyond `maxBytes`: an oversized one is
// reported (with whatever request id its first bytes reveal) and the rest of it is skipped as
// it streams past.
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
/**
 * The owned buffer's usual size: room for what the stdio loop reads ahead (128 KiB) plus a
 * chunk, so steady traffic never reallocates it (each replaced buffer would be old-generation
 * garbage holding its bytes until a full GC). Grown for a long line, back to this afterwards.
 */
const BUFFER_BYTES = 256 * 1024
const EMPTY = Buffer.alloc(0)

export class LineReader {
  /** Allocated on the first chunk (BUFFER_BYTES), grown for a long line. */
  private buf = EMPTY
  /** buf[0, filled): newline searches must not see the stale bytes past `filled`. */
  private view = this.buf.subarray(0, 0)
  /** Untaken bytes are buf[start, filled); buf[start, scanned) holds no newline. */
  private start = 0
  private filled = 0
  private scanned = 0
  /** Where the line not yet ended begins (just past the last newline read). */
  private tail = 0
  /** Oversized lines (their bytes not kept), each reported when `start` reaches `at`. */
  private oversized: { at: number; event: Oversize }[] = []
  /** Lines taken ahead (takeAhead), each with what to do once reading reaches its place. */
  private passed: { at: number; fn: () => void }[] = []
  /** The oversized line being skipped: its bytes so far and its first bytes. */
  private skipping: { bytes: number; head: Buffer } | undefined
  private ended = false

  constructor(private readonly maxBytes: number) {}

  push(chunk: Buffer): void {
    let from = 0
    if (this.skipping) {
      const nl = chunk.indexOf(NL)
      if (nl === -1) {
        this.skipping.bytes += chunk.length
        return
      }
      this.skipping.bytes += nl
      this.endSkip()
      from = nl + 1
    }
    if (from === chunk.length) return
    this.append(chunk, from)
    const last = chunk.lastIndexOf(NL)
    if (last >= from) this.tail = this.filled - (chunk.length - last) + 1
    if (this.filled - this.tail > this.maxBytes) {
      // The unended line is already too long: keep its first bytes for the id, skip the rest.
      this.skipping = {
        bytes: this.filled - this.tail,
        head: Buffer.from(this.buf.subarray(this.tail, Math.min(this.filled, this.tail + PEEK_BYTES))),
      }
      this.filled = this.tail
      this.scanned = Math.min(this.scanned, this.filled)
      this.view = this.buf.subarray(0, this.filled)
    }
  }

  /** End of input: a last line without a newline still counts. */
  end(): void {
    this.ended = true
  }

  /** Bytes read and not yet taken (they may hold no complete line). */
  get buffered(): boolean {
    return this.filled > this.start || this.oversized.length > 0
  }

  /** How many bytes are kept, waiting to be taken. */
  get bufferedBytes(): number {
    return this.filled - this.start
  }

  /** The next line or oversize report, or undefined until more input (or end()) completes one. */
  next(): LineEvent | undefined {
    const e = this.take()
    if (this.passed.length > 0) this.firePassed()
    // Nothing kept: start over at the front (and shrink a buffer grown for a long line).
    if (this.start === this.filled && this.oversized.length === 0 && this.passed.length === 0) this.reset()
    return e
  }

  private take(): LineEvent | undefined {
    for (;;) {
      const o = this.oversized[0]
      if (o !== undefined && o.at === this.start) {
        this.oversized.shift()
        return o.event
      }
      const nl = this.scanned < this.tail ? this.view.indexOf(NL, this.scanned) : -1
      if (nl === -1) break
      const from = this.start
      this.start = this.scanned = nl + 1
      if (nl - from > this.maxBytes)
        return oversize(nl - from, this.buf.subarray(from, Math.min(nl, from + PEEK_BYTES)))
      const line = text(this.buf, from, nl)
      if (line !== undefined) return line
      if (this.passed.length > 0) this.firePassed()
    }
    this.scanned = this.tail
    if (this.ended) {
      if (this.skipping) {
        this.endSkip()
        return this.take()
      }
      if (this.start < this.filled) {
        // A last line without a newline.
        const from = this.start
        this.start = this.scanned = this.tail = this.filled
        return this.filled - from > this.maxBytes
          ? oversize(this.filled - from, this.buf.subarray(from, Math.min(this.filled, from + PEEK_BYTES)))
          : text(this.buf, from, this.filled)
      }
    }
    return undefined
  }

  private firePassed(): void {
    while (this.passed.length > 0 && (this.passed[0] as { at: number }).at <= this.start)
      (this.passed.shift() as { fn: () => void }).fn()
  }

  /**
   * Offers, ahead of their turn, the complete lines not yet taken that contain `needle` (ASCII).
   * `take` returns undefined to leave a line in its place, or a function: the line is then
   * blanked (next() skips it), and the function runs once reading reaches the line's place.
   */
  takeAhead(needle: string, take: (line: string) => (() => void) | undefined): void {
    for (let hit = this.view.indexOf(needle, this.start, 'latin1'); hit !== -1 && hit < this.tail; ) {
      const nl = this.view.indexOf(NL, hit)
      const from = Math.max(this.start, this.view.lastIndexOf(NL, hit) + 1)
      const line = nl - from <= this.maxBytes ? text(this.buf, from, nl) : undefined
      const passed = line !== undefined ? take(line) : undefined
      if (passed) {
        this.buf.fill(SPACE, from, nl)
        let i = this.passed.length
        while (i > 0 && (this.passed[i - 1] as { at: number }).at > nl) i--
        this.passed.splice(i, 0, { at: nl + 1, fn: passed })
      }
      hit = this.view.indexOf(needle, nl, 'latin1')
    }
  }

  private endSkip(): void {
    const s = this.skipping as { bytes: number; head: Buffer }
    this.skipping = undefined
    this.oversized.push({ at: this.filled, event: oversize(s.bytes, s.head) })
  }

  /** Copies chunk[from…] after what is kept, moving that to the front or growing as needed. */
  private append(chunk: Buffer, from: number): void {
    const n = chunk.length - from
    if (this.filled + n > this.buf.length) {
      const kept = this.filled - this.start
      const target =
        kept + n > this.buf.length
          ? Buffer.allocUnsafeSlow(Math.max(kept + n, this.buf.length * 2, BUFFER_BYTES))
          : this.buf.length > 4 * BUFFER_BYTES && kept + n <= BUFFER_BYTES
            ? Buffer.allocUnsafeSlow(BUFFER_BYTES) // the long line is gone: back to the usual size
            : this.buf
      this.buf.copy(target, 0, this.start, this.filled)
      this.buf = target
      this.shift(this.start)
    }
    chunk.copy(this.buf, this.filled, from)
    this.filled += n
    this.view = this.buf.subarray(0, this.filled)
  }

  /** Positions after the kept bytes moved `by` towards the front. */
  private shift(by: number): void {
    this.start -= by
    this.filled -= by
    this.scanned -= by
    this.tail -= by
    for (const o of this.oversized) o.at -= by
    for (const p of this.passed) p.at -= by
  }

  /** Nothing kept: start over at the front, in a buffer of the usual size. */
  private reset(): void {
    this.start = this.filled = this.scanned = this.tail = 0
    if (this.buf.length > BUFFER_BYTES) this.buf = Buffer.allocUnsafeSlow(BUFFER_BYTES)
    this.view = this.buf.subarray(0, 0)
  }
}

/** The line's text, CRLF tolerated; undefined for a blank line (only whitespace: ignored). */
function text(buf: Buffer, start: number, end: number): string | undefined {
  if (end > start && buf[end - 1] === CR) end--
  if (end === start) return undefined
  const s = buf.toString('utf8', start, end)
  // A line starting with a visible ASCII character is not blank: no trim on the common path.
  const c = buf[start] as number
  return c > 0x20 && c < 0x7f ? s : s.trim() === '' ? undefined : s
}

function oversize(bytes: number, head: Buffer): Oversize {
  return { kind: 'oversize', bytes, id: peekId(head.toString('utf8')) }
}
