// The only writer of stdout: one JSON value per line, in the order handed over. It waits for
// 'drain' when the pipe is full instead of buffering without bound, and `blocked` tells the
// reader to stop taking requests until the client has read what is already written.
import type { Writable } from 'node:stream'

/** A line as parts: strings and (shared, never copied) buffers, written back to back. */
export type LineParts = string | readonly (string | Buffer)[]

/** Queued lines are written in corked runs of about this size: few syscalls, bounded buffers. */
const WRITE_BYTES = 256 * 1024
const NEWLINE = Buffer.from('\n')

export class LineWriter {
  private queue: LineParts[] = []
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
        // Parts go out as one writev (corked and uncorked at once), shared buffers uncopied.
        this.out.cork()
        full = false
        // All Buffers (small strings come from Node's pool): the writev fast path.
        for (const part of line) full = !this.out.write(typeof part === 'string' ? Buffer.from(part) : part) || full
        full = !this.out.write(NEWLINE) || full
        this.out.uncork()
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

  private notifyIdle(): void {
    const w = this.idleWaiters
    this.idleWaiters = []
    for (const f of w) f()
  }
}
