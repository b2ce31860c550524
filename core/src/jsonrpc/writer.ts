// The only writer of stdout: one JSON value per line, in the order handed over. It waits for
// 'drain' when the pipe is full instead of buffering without bound, and `blocked` tells the
// reader to stop taking requests until the client has read what is already written.
import type { Writable } from 'node:stream'

/** A line as parts: strings and (shared, never copied) buffers, written back to back. */
export type LineParts = string | readonly (string | Buffer)[]

/** Queued lines are written in corked runs of about this size: few syscalls, bounded buffers. */
const WRITE_BYTES = 256 * 1024
const SCRATCH_BYTES = 64 * 1024

export class LineWriter {
  private queue: LineParts[] = []
  private scratch: Buffer = Buffer.allocUnsafeSlow(SCRATCH_BYTES)
  /** Index of the first unwritten line in `queue` (advanced instead of shifting). */
  private head = 0
  private waitingForDrain = false
  /** Writes are corked until the next tick: not yet handed to the stream. */
  private corked = false
  private closed = false
  private idleWaiters: (() => void)[] = []

  constructor(private readonly out: Writable) {
    out.on('drain', () => {
      this.waitingForDrain = false
      this.flush()
    })
    // A closed stdout (the client went away) must not crash the process; what is queued is lost.
    out.on('error', () => {
      this.closed = true
      this.queue = []
      this.head = 0
      this.notifyIdle()
    })
  }

  /** `line` must be one serialized JSON value without newlines (JSON.stringify guarantees it). */
  write(line: LineParts): void {
    if (this.closed) return
    this.queue.push(line)
    if (!this.waitingForDrain) this.flush()
  }


  /** Lines accepted but not yet handed to the OS pipe. */
  get backlog(): number {
    return this.queue.length - this.head
  }

  /** True while the pipe is full: the client is not reading as fast as we answer. */
  get blocked(): boolean {
    return this.waitingForDrain && !this.closed
  }

  /** Resolves once everything queued has been handed to the stream (or the stream is gone). */
  idle(): Promise<void> {
    if (this.closed || (this.backlog === 0 && !this.waitingForDrain && !this.corked)) return Promise.resolve()
    return new Promise((resolve) => this.idleWaiters.push(resolve))
  }

  private flush(): void {
    if (this.corked) return // the pending uncork flushes again
    if (this.backlog === 0 || this.closed) {
      if (!this.waitingForDrain || this.closed) this.notifyIdle()
      return
    }
    if (this.backlog === 1) {
      // One line (the sequential case): a single write, no cork, no extra tick.
      const line = this.queue[this.head] as LineParts
      this.queue = []
      this.head = 0
      let full: boolean
      if (typeof line === 'string') full = !this.out.write(line + '\n')
      else {
        full = !this.out.write(this.assemble(line))
      }
      if (full) this.waitingForDrain = true
      if (!this.waitingForDrain) this.notifyIdle()
      return
    }
    // Corked: the parts of many lines go out as one writev, and no buffer is copied.
    this.out.cork()
    let bytes = 0
    let full = false
    while (this.backlog > 0 && !full && bytes < WRITE_BYTES) {
      const line = this.queue[this.head++] as LineParts
      if (typeof line === 'string') {
        full = !this.out.write(line + '\n')
        bytes += line.length
      } else {
        for (const part of line) {
          full = !this.out.write(part) || full
          bytes += part.length
        }
        full = !this.out.write('\n') || full
      }
    }
    if (this.head === this.queue.length) {
      this.queue = []
      this.head = 0
    } else if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head) // let written lines be collected
      this.head = 0
    }
    if (full) this.waitingForDrain = true
    // Uncork after the current tick so the corked writes leave together.
    this.corked = true
    process.nextTick(() => {
      this.corked = false
      this.out.uncork()
      if (!this.waitingForDrain) this.flush()
    })
  }

  /**
   * One contiguous buffer for a line made of parts: a single write is much faster than a
   * writev. The scratch buffer is reused while the stream takes each write whole at once
   * (nothing left buffered), so steady traffic allocates nothing; once a write stays
   * queued, that buffer belongs to the stream and a new one is made.
   */
  private assemble(parts: readonly (string | Buffer)[]): Buffer {
    let size = 1
    for (const p of parts) size += typeof p === 'string' ? Buffer.byteLength(p, 'utf8') : p.length
    if (this.scratch.length < size || this.out.writableLength > 0) this.scratch = Buffer.allocUnsafeSlow(Math.max(size, SCRATCH_BYTES))
    let at = 0
    for (const p of parts) at += typeof p === 'string' ? this.scratch.write(p, at, 'utf8') : p.copy(this.scratch, at)
    this.scratch[at++] = 0x0a
    return this.scratch.subarray(0, at)
  }

  private notifyIdle(): void {
    const w = this.idleWaiters
    this.idleWaiters = []
    for (const f of w) f()
  }
}
