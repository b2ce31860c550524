import t from 'tap'
import { classify, INVALID_PARAMS, INVALID_REQUEST, isRequestId } from '../../../core/src/jsonrpc/message.ts'

t.test('requests and notifications', async (t) => {
  t.same(classify({ jsonrpc: '2.0', id: 1, method: 'ping' }), {
    kind: 'request',
    id: 1,
    method: 'ping',
    params: undefined,
  })
  t.same(classify({ jsonrpc: '2.0', id: 'a', method: 'x', params: { b: 1 } }), {
    kind: 'request',
    id: 'a',
    method: 'x',
    params: { b: 1 },
  })
  t.same(
    classify({ jsonrpc: '2.0', id: 0, method: 'x' }),
    { kind: 'request', id: 0, method: 'x', params: undefined },
    'id 0 is an id',
  )
  t.same(
    classify({ jsonrpc: '2.0', id: '', method: 'x' }),
    { kind: 'request', id: '', method: 'x', params: undefined },
    'id "" is an id',
  )
  t.same(classify({ jsonrpc: '2.0', method: 'n', params: {} }), { kind: 'notification', method: 'n', params: {} })
  t.same(
    classify({ jsonrpc: '2.0', method: 'n', params: [1] }),
    { kind: 'notification', method: 'n', params: undefined },
    'bad params on a notification: nothing to answer',
  )
})

t.test('responses from the client are recognised (and never answered)', async (t) => {
  t.same(classify({ jsonrpc: '2.0', id: 1, result: {} }), { kind: 'response' })
  t.same(classify({ jsonrpc: '2.0', id: 1, error: { code: 1, message: 'x' } }), { kind: 'response' })
})

t.test('invalid messages carry the id when it can be told, else null', async (t) => {
  const inv = (v: unknown) => classify(v) as { kind: string; id: unknown; code: number }
  for (const v of [1, 'x', null, true, [], [1]]) {
    t.match(inv(v), { kind: 'invalid', id: null, code: INVALID_REQUEST }, `non-object ${JSON.stringify(v)}`)
  }
  t.match(inv({ id: 3, method: 'ping' }), { kind: 'invalid', id: 3, code: INVALID_REQUEST }, 'jsonrpc missing')
  t.match(
    inv({ jsonrpc: '1.0', id: 'q', method: 'ping' }),
    { kind: 'invalid', id: 'q', code: INVALID_REQUEST },
    'jsonrpc wrong',
  )
  t.match(
    inv({ jsonrpc: 2, id: 3, method: 'ping' }),
    { kind: 'invalid', id: 3, code: INVALID_REQUEST },
    'jsonrpc a number',
  )
  t.match(inv({ jsonrpc: '2.0', id: 4 }), { kind: 'invalid', id: 4, code: INVALID_REQUEST }, 'method missing')
  t.match(
    inv({ jsonrpc: '2.0', id: 5, method: 7 }),
    { kind: 'invalid', id: 5, code: INVALID_REQUEST },
    'method not a string',
  )
  t.match(
    inv({ jsonrpc: '2.0', id: 6, method: 'x', params: 'p' }),
    { kind: 'invalid', id: 6, code: INVALID_PARAMS },
    'params not an object',
  )
  t.match(
    inv({ jsonrpc: '2.0', id: 6, method: 'x', params: null }),
    { kind: 'invalid', id: 6, code: INVALID_PARAMS },
    'params null',
  )
  for (const id of [null, 1.5, true, {}, [], Number.MAX_SAFE_INTEGER + 2, Infinity]) {
    t.match(
      inv({ jsonrpc: '2.0', id, method: 'x' }),
      { kind: 'invalid', id: null, code: INVALID_REQUEST },
      `bad id ${String(id)}`,
    )
  }
})

t.test('isRequestId', async (t) => {
  for (const ok of [0, -1, 1, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, '', 'x'])
    t.ok(isRequestId(ok), JSON.stringify(ok))
  for (const bad of [1.5, NaN, Infinity, 2 ** 53, null, undefined, true, {}, []]) t.notOk(isRequestId(bad), String(bad))
})
