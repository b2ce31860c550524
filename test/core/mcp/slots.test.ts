import t from 'tap'
import { Slots } from '../../../core/src/mcp/slots.ts'

t.test('at most `limit` run; the rest wait in order and start as slots free', async (t) => {
  const s = new Slots(2)
  t.equal(s.tryAcquire(), true)
  t.equal(s.tryAcquire(), true)
  t.equal(s.tryAcquire(), false, 'the third must wait')
  const order: number[] = []
  const third = s.wait().ready.then((ok) => (order.push(3), ok))
  const fourth = s.wait().ready.then((ok) => (order.push(4), ok))
  await new Promise((r) => setImmediate(r))
  t.same(order, [], 'both wait while two slots are held')
  s.release()
  t.equal(await third, true)
  t.same(order, [3])
  s.release()
  t.equal(await fourth, true)
  t.same(order, [3, 4])
  s.release()
  s.release()
  t.equal(s.tryAcquire(), true, 'released slots are free again')
})

t.test('a waiter cancelled before its turn never runs and takes no slot', async (t) => {
  const s = new Slots(1)
  t.equal(s.tryAcquire(), true)
  const cancelled = s.wait()
  const later = s.wait()
  cancelled.cancel()
  t.equal(await cancelled.ready, false)
  s.release()
  t.equal(await later.ready, true, 'the slot went to the next live waiter')
  cancelled.cancel()
  s.release()
  t.equal(s.tryAcquire(), true, 'a second cancel changes nothing')
  t.equal(s.tryAcquire(), false)
})
