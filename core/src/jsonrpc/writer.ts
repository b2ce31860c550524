// A line writer for an output stream: the only writer of stdout (one JSON value per line, in
// the order handed over), and of stderr for the log.
//
// Every line is encoded at once into a reusable off-heap block, and the bytes gathered during
// one tick leave as a single write. So an answer's string dies young however long the client
// takes to read it: under a burst, strings queued in the stream would live across scavenges and
// be promoted to V8's old generation, whose garbage is collected late (RSS grows by megabytes).
// `blocked` tells the reader to stop taking requests while the client is not reading.
import type { Writable } from 'node:stream'

/** A line as parts: strings and (shared) buffers, written back to back. */
export type LineParts = string | readonly (string | Buffer)[]

/** A line as one string (for a batch, and for tests). */
export function lineText(line: LineParts): string {
  return typeof line === 'string' ? line : line.map((p) => (typeof p === 'string' ? p : p.toString('utf8'))).join('')
}

export interface LineWriterOptions {
  /**
   * Drop lines (write returns false) while the stream holds more than this many bytes. For logs:
   * nobody may be reading stderr, and a log must neither block nor grow without bound.
   * Unset (JSON-RPC answers): never drop.
   */
  dropBeyondBytes?: number
}

/** Lines are gathered into blocks of this size; a longer line gets a buffer of its own. */
const BLOCK_BYTES = 64 * 1024
/** Blocks kept for reuse once the stream is done with them. */
const SPARE_BLOCKS = 4

/** A block and how many of the writes handed to the stream still point into it. */
interface Block {
  buf: Buffer
  writes: number
  /** No more lines go into it: it is reused once `writes` is back to 0. */
  retired: boolean
  /** Write callback, made once per block so that a write allocates no closure. */
  done: () => void
}

export class LineWriter {
  private block: Block
  /** Bytes of `block` filled, and the first of them not yet handed to the stream. */
  private used = 0
  private flushed = 0
  private readonly spare: Block[] = []
  /** Writes handed to the stream and not yet completed. */
  private outstanding = 0
  private scheduled = false
  private full = false
  private closed = false
  private idleWaiters: (() => void)[] = []
  private readonly flushTick = (): void => {
    this.scheduled = false
    this.flush()
  }

  constructor(
    private readonly out: Writable,
    private readonly opts: LineWriterOptions = {},
  ) {
    this.block = this.newBlock()
    out.on('drain', () => {
      this.full = false
      this.maybeIdle()
    })
    // A closed stdout (the client went away) must not crash the process; what is queued is lost.
    out.on('error', () => {
      this.closed = true
      this.outstanding = 0
      this.notifyIdle()
    })
  }

  /**
   * `line` must be one line without its newline (a serialized JSON value: JSON.stringify
   * guarantees it). False if it was dropped (see LineWriterOptions).
   */
  write(line: LineParts): boolean {
    if (this.closed) return false
    const limit = this.opts.dropBeyondBytes
    if (limit !== undefined && this.out.writableLength + this.used - this.flushed > limit) return false
    if (typeof line === 'string') this.appendString(line)
    else this.appendParts(line)
    if (!this.scheduled) {
      // The lines of this tick (a burst answered at once, calls settling together) leave as one write.
      this.scheduled = true
      process.nextTick(this.flushTick)
    }
    return true
  }

  /** True while the stream holds more than it wants: the client is not reading as fast as we answer. */
  get blocked(): boolean {
    return this.full && !this.closed
  }

  /** Resolves once every line written so far has been handed to the OS (or the stream is gone). */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve()
    return new Promise((resolve) => this.idleWaiters.push(resolve))
  }

  private isIdle(): boolean {
    return this.closed || (!this.scheduled && this.used === this.flushed && this.outstanding === 0)
  }

  private appendString(line: string): void {
    // UTF-8 takes at most 3 bytes per UTF-16 unit: measure only when that bound does not fit.
    let size = line.length * 3 + 1
    if (size > BLOCK_BYTES - this.used) {
      size = Buffer.byteLength(line, 'utf8') + 1
      if (size > BLOCK_BYTES) return this.writeAlone(Buffer.from(`${line}\n`, 'utf8'))
      if (size > BLOCK_BYTES - this.used) this.nextBlock()
    }
    this.used += this.block.buf.write(line, this.used, 'utf8')
    this.block.buf[this.used++] = 0x0a
  }

  private appendParts(parts: readonly (string | Buffer)[]): void {
    let size = 1
    for (const p of parts) size += typeof p === 'string' ? Buffer.byteLength(p, 'utf8') : p.length
    let buf = this.block.buf
    let at = this.used
    if (size > BLOCK_BYTES) {
      buf = Buffer.allocUnsafeSlow(size)
      at = 0
    } else if (size > BLOCK_BYTES - this.used) {
      this.nextBlock()
      buf = this.block.buf
      at = 0
    }
    for (const p of parts) at += typeof p === 'string' ? buf.write(p, at, 'utf8') : p.copy(buf, at)
    buf[at++] = 0x0a
    if (buf === this.block.buf) this.used = at
    else this.writeAlone(buf)
  }

  /** A line longer than a block: what is gathered goes first, then the line, in order. */
  private writeAlone(bytes: Buffer): void {
    this.flush()
    this.outstanding++
    this.full = !this.out.write(bytes, this.settled) || this.full
  }

  private readonly settled = (): void => {
    if (this.closed) return
    this.outstanding--
    this.maybeIdle()
  }

  /** Hands what the current block gathered to the stream. */
  private flush(): void {
    if (this.closed || this.used === this.flushed) return this.maybeIdle()
    const block = this.block
    block.writes++
    this.outstanding++
    const bytes = block.buf.subarray(this.flushed, this.used)
    this.flushed = this.used
    this.full = !this.out.write(bytes, block.done) || this.full
  }

  /** The current block is full: send its rest and continue in a fresh (or reused) one. */
  private nextBlock(): void {
    this.flush()
    const old = this.block
    old.retired = true
    if (old.writes === 0) this.recycle(old)
    this.block = this.spare.pop() ?? this.newBlock()
    this.block.retired = false
    this.used = 0
    this.flushed = 0
  }

  private newBlock(): Block {
    const block: Block = {
      buf: Buffer.allocUnsafeSlow(BLOCK_BYTES),
      writes: 0,
      retired: false,
      done: () => {
        if (this.closed) return
        block.writes--
        this.outstanding--
        if (block.retired && block.writes === 0) this.recycle(block)
        this.maybeIdle()
      },
    }
    return block
  }

  private recycle(block: Block): void {
    if (this.spare.length < SPARE_BLOCKS) this.spare.push(block)
  }

  private maybeIdle(): void {
    if (this.idleWaiters.length > 0 && this.isIdle()) this.notifyIdle()
  }

  private notifyIdle(): void {
    const w = this.idleWaiters
    this.idleWaiters = []
    for (const f of w) f()
  }
}
