// A call's cancellation, with its AbortSignal made only when something asks for it.
//
// Why lazy: on Node 20 every AbortSignal survives the scavenges of V8's young generation and
// is freed only by a full collection (measured: 200,000 `new AbortController().signal` promote
// ~2.6 MB per scavenge; plain objects and EventTargets promote almost nothing). A signal per
// call turned a burst of quick calls into megabytes of old-generation garbage, and RSS with it.
// Quick tools never look at the signal; calls that go upstream do, and make it.

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
