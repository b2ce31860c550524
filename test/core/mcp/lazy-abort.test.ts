import t from 'tap'
import { CallRequest, LazyAbort } from '../../../core/src/mcp/lazy-abort.ts'

t.test('no AbortSignal exists until something reads it', async (t) => {
  const c = new LazyAbort()
  t.equal((c as unknown as { controller: unknown }).controller, undefined)
  t.notOk(c.aborted)
  const s = c.signal
  t.notOk(s.aborted)
  t.equal(c.signal, s, 'the same signal every time')
})

t.test('aborted before the signal is read: the signal is born aborted, with the reason', async (t) => {
  const c = new LazyAbort()
  const why = new Error('cancelled by the client')
  c.abort(why)
  t.ok(c.aborted)
  t.equal((c as unknown as { controller: unknown }).controller, undefined, 'still no signal')
  t.ok(c.signal.aborted)
  t.equal(c.signal.reason, why)
})

t.test('aborted after the signal is read: listeners hear it once; a second abort changes nothing', async (t) => {
  const c = new LazyAbort()
  let heard = 0
  c.signal.addEventListener('abort', () => heard++)
  const first = new Error('first')
  c.abort(first)
  c.abort(new Error('second'))
  t.equal(heard, 1)
  t.equal(c.signal.reason, first)
})

t.test('CallRequest reads the signal through, so it is made on demand', async (t) => {
  const c = new LazyAbort()
  const r = new CallRequest(c, true, 7)
  t.same({ structured: r.structured, requestId: r.requestId }, { structured: true, requestId: 7 })
  t.equal((c as unknown as { controller: unknown }).controller, undefined)
  t.equal(r.signal, c.signal)
})
