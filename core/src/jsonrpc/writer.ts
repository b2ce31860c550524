// The only writer of stdout: one JSON value per line, in the order handed over, and it waits
// for 'drain' when the pipe is full instead of buffering without bound.
import type { Writable } from 'node:stream'

export class LineWriter {
  private queue: string[] = []
  private blocked = false
  private idleWaiters: (() => void)[] = []

  constructor(private readonly out: Writable) {
    out.on('drain', () => {
      this.blocked = false
      this.flush()
    })
    // A closed stdout (the client went away) must not crash the process.
    out.on('error', () => {
      this.queue = []
      this.blocked = true
      this.notifyIdle()
    })
  }

  /** `line` must be one serialized JSON value without newlines (JSON.stringify guarantees it). */
  write(line: string): void {
    this.queue.push(line + '\n')
    if (!this.blocked) this.flush()
  }

  /** Lines accepted but not yet handed to the OS pipe. */
  get backlog(): number {
    return this.queue.length
  }

  /** Resolves once everything queued has been handed to the stream. */
  idle(): Promise<void> {
    if (this.queue.length === 0 && !this.blocked) return Promise.resolve()
    return new Promise((resolve) => this.idleWaiters.push(resolve))
  }

  private flush(): void {
    while (this.queue.length > 0 && !this.blocked) {
      // Coalesce small lines into one write: far fewer syscalls when requests are pipelined.
      let batch = this.queue.length === 1 ? (this.queue[0] as string) : this.queue.join('')
      this.queue = []
      if (!this.out.write(batch)) this.blocked = true
      batch = ''
    }
    if (this.queue.length === 0 && !this.blocked) this.notifyIdle()
  }

  private notifyIdle(): void {
    const w = this.idleWaiters
    this.idleWaiters = []
    for (const f of w) f()
  }
}
