// Token bucket for tools/call (the spec says servers MUST rate-limit tool invocations).
// Starts full, refills continuously at ratePerSec up to burst; one call takes one token.

export interface TokenBucketOptions {
  ratePerSec: number
  burst: number
  /** Milliseconds on a monotonic clock; defaults to performance.now() (immune to wall-clock jumps). */
  now?: () => number
}

export type TakeResult = { ok: true } | { ok: false; retryAfterMs: number }

export interface TokenBucket {
  take(): TakeResult
}

export function createTokenBucket(o: TokenBucketOptions): TokenBucket {
  if (!(Number.isFinite(o.ratePerSec) && o.ratePerSec > 0))
    throw new RangeError(`ratePerSec must be a positive number, got ${o.ratePerSec}`)
  if (!(Number.isFinite(o.burst) && o.burst >= 1)) throw new RangeError(`burst must be at least 1, got ${o.burst}`)
  const now = o.now ?? (() => performance.now())
  const perMs = o.ratePerSec / 1000
  let tokens = o.burst
  // Read on the first call, not at creation: the first read of `performance` loads perf_hooks,
  // which start-up does not need.
  let last: number | undefined
  return {
    take() {
      const t = now()
      last ??= t
      // a clock that steps back refills nothing (and must not drain the bucket)
      if (t > last) {
        tokens = Math.min(o.burst, tokens + (t - last) * perMs)
        last = t
      }
      if (tokens >= 1) {
        tokens -= 1
        return { ok: true }
      }
      return { ok: false, retryAfterMs: Math.max(1, Math.ceil((1 - tokens) / perMs)) }
    },
  }
}
