// The calls in flight (tools/call, resources/read), by id: how many run at once, their
// cancellation, and the ids cancelled before their request was read. Cancellation is handled
// here and only here: a `notifications/cancelled` read in order or ahead, and shutdown.
import type { RequestId } from '../jsonrpc/message.ts'
import type { LineParts } from '../jsonrpc/writer.ts'
import { IdTable } from './id-table.ts'
import { LazyAbort } from './lazy-abort.ts'
import { Slots } from './slots.ts'
import type { Wait } from './slots.ts'

const CANCELLED = 'cancelled by the client'
const NOTHING = (): void => {}

/** What the calls need of the server: the work, and the lines it answers with. */
export interface CallHost {
  /** The call's answer (a result or an error line); `cancel` aborts it. */
  work(
    id: RequestId,
    method: string,
    params: Record<string, unknown> | undefined,
    cancel: LazyAbort,
  ): Promise<LineParts>
  /** The answer when the call threw (a cancellation between its slot and its start). */
  failed(id: RequestId, method: string, error: unknown): LineParts
  /** The answer when the call never started (shutdown while it waited for a slot). */
  notStarted(id: RequestId): LineParts
  /** Told each time a call finishes (the reader may take more requests). */
  settled?: (() => void) | undefined
}

/** One call in flight. A class, not closures: a burst of calls makes one small object each. */
class Call {
  reason: Error | undefined = undefined
  /** While it waits for a slot. */
  wait: Wait | undefined = undefined
  /** Once it runs. */
  cancel: LazyAbort | undefined = undefined
  finish: () => void = NOTHING
  readonly done = new Promise<void>((r) => (this.finish = r))

  /** Aborts it if it runs, takes it off the queue if it waits for a slot. */
  abort(reason: Error): void {
    this.reason ??= reason
    this.wait?.cancel()
    this.cancel?.abort(reason)
  }

  /** Cancelled by the client: then nothing is answered. */
  get cancelled(): boolean {
    return this.reason?.message === CANCELLED
  }
}

export class InFlightCalls {
  private readonly calls = new IdTable<Call>()
  /** Ids cancelled before their request was read (see cancelAhead). */
  private readonly cancelledAhead = new Set<RequestId>()
  private readonly slots: Slots

  constructor(
    maxConcurrent: number,
    private readonly host: CallHost,
  ) {
    this.slots = new Slots(maxConcurrent)
  }

  get size(): number {
    return this.calls.size
  }

  has(id: RequestId): boolean {
    return this.calls.has(id)
  }

  /** The client cancelled `id`: aborts it if it is in flight; says whether it was. */
  cancel(id: RequestId): boolean {
    const call = this.calls.get(id)
    call?.abort(new Error(CANCELLED))
    return call !== undefined
  }

  /**
   * A cancel read ahead of its place: aborts the call if it is in flight, and otherwise makes
   * the request it names, once dispatched, go unanswered. The function returned is called when
   * reading reaches the cancel's own place: a request not ahead of it by then must not be
   * suppressed later because its id is reused.
   */
  cancelAhead(id: RequestId): () => void {
    if (this.cancel(id)) return NOTHING
    this.cancelledAhead.add(id)
    if (this.cancelledAhead.size > 1024)
      this.cancelledAhead.delete(this.cancelledAhead.values().next().value as RequestId)
    return () => void this.cancelledAhead.delete(id)
  }

  /** The request `id` was cancelled ahead of it (it goes unanswered); forgets the cancel. */
  takeCancelledAhead(id: RequestId): boolean {
    return this.cancelledAhead.delete(id)
  }

  /** Runs a call when a slot is free, and answers it unless the client cancelled it. */
  async run(
    id: RequestId,
    method: string,
    params: Record<string, unknown> | undefined,
    reply: (line: LineParts) => void,
  ): Promise<void> {
    const call = new Call()
    this.calls.set(id, call)
    try {
      if (!this.slots.tryAcquire()) {
        call.wait = this.slots.wait()
        const started = await call.wait.ready
        call.wait = undefined
        if (!started) {
          if (!call.cancelled) reply(this.host.notStarted(id))
          return
        }
      }
      try {
        if (call.reason) throw call.reason // cancelled between getting the slot and starting
        call.cancel = new LazyAbort()
        const line = await this.host.work(id, method, params, call.cancel)
        if (!call.cancelled) reply(line)
      } catch (e) {
        if (!call.cancelled) reply(this.host.failed(id, method, e))
      } finally {
        this.slots.release()
      }
    } finally {
      this.calls.delete(id)
      call.finish()
      this.host.settled?.()
    }
  }

  /** Resolves when every call in flight has answered (or been cancelled). */
  async drain(): Promise<void> {
    while (this.calls.size > 0) await Promise.all(this.calls.values().map((c) => c.done))
  }

  /** Aborts everything still running or waiting (shutdown deadline passed). */
  abortAll(reason: string): void {
    for (const c of this.calls.values()) c.abort(new Error(reason))
  }
}
