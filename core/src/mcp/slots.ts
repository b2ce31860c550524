// A bound on how many calls run at once. Past it, calls wait their turn, in order, and a call
// cancelled while it waits never runs. A waiting call costs one small queue entry (no
// AbortController yet): memory grows with the queue, not with the work of thousands of calls.

export interface Wait {
  /** Resolves true when the slot is yours (call `release` later), false if cancelled first. */
  ready: Promise<boolean>
  cancel(): void
}

export class Slots {
  private used = 0
  private readonly waiting: ((ok: boolean) => void)[] = []

  constructor(private readonly limit: number) {}

  /** Takes a slot now if one is free. */
  tryAcquire(): boolean {
    if (this.used >= this.limit) return false
    this.used++
    return true
  }

  /** Queues for the next free slot. */
  wait(): Wait {
    let settle!: (ok: boolean) => void
    const ready = new Promise<boolean>((resolve) => (settle = resolve))
    this.waiting.push(settle)
    return {
      ready,
      cancel: () => {
        const i = this.waiting.indexOf(settle)
        if (i !== -1) {
          this.waiting.splice(i, 1)
          settle(false)
        }
      },
    }
  }

  release(): void {
    const next = this.waiting.shift()
    if (next)
      next(true) // the slot passes straight to the next caller
    else this.used--
  }
}
