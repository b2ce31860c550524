import t from 'tap'
import { peekId } from '../../../core/src/jsonrpc/peek-id.ts'

t.test('finds the top-level id wherever it is among the leading keys', async (t) => {
  t.equal(peekId('{"id":1}'), 1)
  t.equal(peekId('{"id":1 ,'), 1)
  t.equal(peekId('{"jsonrpc":"2.0","id":42,"method":"x"'), 42)
  t.equal(peekId(' \t{ "jsonrpc" : "2.0" ,\r\n "id" : -7 ,'), -7)
  t.equal(peekId('{"id":0,'), 0)
  t.equal(peekId('{"id":"abc"'), 'abc')
  t.equal(peekId('{"id":"a\\"b\\u00e9"'), 'a"bé')
  t.equal(peekId('{"id":""}'), '')
  t.equal(peekId('{"method":"m","params":{"id":5,"x":[1,{"id":6}]},"id":9}'), 9, 'nested ids are skipped')
  t.equal(peekId('{"a":"}\\"{","id":3,'), 3, 'braces inside strings are not structure')
  t.equal(peekId('{"a":true,"b":null,"c":1.5e3,"id":4,'), 4, 'scalar values are skipped')
})

t.test('gives up (null) rather than guess', async (t) => {
  t.equal(peekId(''), null)
  t.equal(peekId('[{"id":1}]'), null, 'not an object')
  t.equal(peekId('{"method":"x","params":{"pad":"aaaa'), null, 'the prefix ends before any id')
  t.equal(peekId('{"id":1.5,'), null, 'not an integer')
  t.equal(peekId('{"id":1e3,'), null, 'exponent')
  t.equal(peekId('{"id":1234567890123456789,'), null, 'beyond 15 digits')
  t.equal(peekId('{"id":12'), null, 'a number cut by the prefix end could be longer')
  t.equal(peekId('{"id":null,'), null)
  t.equal(peekId('{"id":true,'), null)
  t.equal(peekId('{"id":{"a":1},'), null)
  t.equal(peekId('{"id":"unterminated'), null)
  t.equal(peekId('{id:1}'), null, 'not JSON')
  t.equal(peekId('{"a" 1,"id":2}'), null, 'malformed before the id')
})
