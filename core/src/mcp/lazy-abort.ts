// A call's cancellation, with its AbortSignal made only when something asks for it.
//
// Why lazy: on Node 20 every AbortSignal survives the scavenges of V8's young generation and
// is freed only by a full collection (measured: 200,000 `new AbortController().signal` promote
// ~2.6 MB per scavenge; plain objects and EventTargets promote almost nothing). A signal per
// call turned a burst of quick calls into megabytes of old-generation garbage, and RSS with it.
// Quick tools never look at the signal; calls that go upstream do, and make it.
//
// The objects that expose `signal` lazily are class instances with the getter on the
// prototype (CallRequest here, ToolCall in host/): a `{ get signal() {…} }` literal per call
// gets a fresh map, descriptor array and accessor pair in the old generation each time.
import type { CallOptions } from './pipeline-api.ts'
import type { RequestId } from '../jsonrpc/message.ts'

export class LazyAbort {
  private controller: AbortController | undefined
  private why: Error | undefined

  get aborted(): boolean {
    return this.why !== undefined
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController()
      if (this.why) this.controller.abort(this.why)
    }
    return this.controller.signal
  }

  abort(reason: Error): void {
    if (this.why) return
    this.why = reason
    this.controller?.abort(reason)
  }
}

/** The options a call hands the host: its signal made on first access. */
export class CallRequest implements CallOptions {
  constructor(
    private readonly cancel: LazyAbort,
    readonly structured: boolean,
    readonly requestId: RequestId,
  ) {}

  get signal(): AbortSignal {
    return this.cancel.signal
  }
}
