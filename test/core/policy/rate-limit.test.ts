import t from 'tap'
import { createTokenBucket } from '../../../core/src/policy/rate-limit.ts'

t.test('burst, refill, retry hint', async (t) => {
  let now = 1000
  const b = createTokenBucket({ ratePerSec: 2, burst: 3, now: () => now })
  t.same([b.take(), b.take(), b.take()], [{ ok: true }, { ok: true }, { ok: true }], 'starts full')
  t.same(b.take(), { ok: false, retryAfterMs: 500 })
  now += 250
  t.same(b.take(), { ok: false, retryAfterMs: 250 }, 'refusals take nothing')
  now += 250
  t.same(b.take(), { ok: true })
  now += 60_000
  t.same(
    [b.take(), b.take(), b.take(), b.take()].map((r) => r.ok),
    [true, true, true, false],
    'refill caps at burst',
  )
})

t.test('a clock stepping back neither refills nor drains', async (t) => {
  let now = 10_000
  const b = createTokenBucket({ ratePerSec: 1, burst: 1, now: () => now })
  t.same(b.take(), { ok: true })
  now -= 5000
  t.equal(b.take().ok, false)
  now += 5000 + 1000
  t.same(b.take(), { ok: true })
})

t.test('fractional rates and the default clock', async (t) => {
  let now = 0
  const slow = createTokenBucket({ ratePerSec: 0.5, burst: 1, now: () => now })
  t.same(slow.take(), { ok: true })
  t.same(slow.take(), { ok: false, retryAfterMs: 2000 })
  now = 1999
  t.same(slow.take(), { ok: false, retryAfterMs: 1 })
  const real = createTokenBucket({ ratePerSec: 1000, burst: 2 })
  t.equal(real.take().ok, true)
})

t.test('invalid settings', async (t) => {
  for (const o of [
    { ratePerSec: 0, burst: 1 },
    { ratePerSec: -1, burst: 1 },
    { ratePerSec: Infinity, burst: 1 },
    { ratePerSec: NaN, burst: 1 },
    { ratePerSec: 1, burst: 0 },
  ]) {
    t.throws(() => createTokenBucket(o), RangeError, JSON.stringify(o))
  }
})
