import t from 'tap'
import fc from 'fast-check'
import { boundData, boundText } from '../../../core/src/safety/bound.ts'

const bytes = (s: string): number => Buffer.byteLength(s, 'utf8')
const jsonBytes = (v: unknown): number => bytes(JSON.stringify(v))

t.test('boundText: exact limit, one over, code point boundaries', async (t) => {
  t.same(boundText('abcd', 4), { text: 'abcd', truncated: false, bytes: 4 }, 'exactly the limit')
  t.same(boundText('abcde', 4), { text: 'abcd', truncated: true, bytes: 4 }, 'one byte over')
  t.same(boundText('', 0), { text: '', truncated: false, bytes: 0 })
  t.same(boundText('a', 0), { text: '', truncated: true, bytes: 0 })
  // a 4-byte emoji straddling the limit is dropped whole, never split
  for (let limit = 3; limit <= 7; limit++) {
    const r = boundText('abc😀', limit)
    t.equal(r.text, limit >= 7 ? 'abc😀' : 'abc', `limit ${limit}`)
    t.equal(r.bytes, bytes(r.text))
    t.notOk(/[\ud800-\udbff]$/.test(r.text), 'no dangling high surrogate')
  }
  t.same(boundText('éé', 3), { text: 'é', truncated: true, bytes: 2 }, '2-byte sequence')
  t.same(boundText('€€', 5), { text: '€', truncated: true, bytes: 3 }, '3-byte sequence')
  t.same(
    boundText('a\ud800b', 4),
    { text: 'a\ud800', truncated: true, bytes: 4 },
    'lone surrogate counts 3 like Buffer does',
  )
  t.throws(() => boundText('x', -1), RangeError)
  t.throws(() => boundText('x', 1.5), RangeError)
})

t.test('boundText property: never over, always a prefix on a code point boundary', async (t) => {
  let cut = 0
  let whole = 0
  const property = fc.property(fc.string({ unit: 'binary', maxLength: 200 }), fc.nat(400), (s, max) => {
    const r = boundText(s, max)
    const ok =
      s.startsWith(r.text) && bytes(r.text) <= max && r.bytes === bytes(r.text) && r.truncated === (r.text !== s)
    if (!ok || !r.truncated) {
      whole++
      return ok
    }
    cut++
    const splitPair = /[\ud800-\udbff]$/.test(r.text) && /^[\udc00-\udfff]/.test(s.slice(r.text.length))
    // maximal: the next whole code point would not have fitted
    const next = String.fromCodePoint(s.codePointAt(r.text.length)!)
    return !splitPair && bytes(r.text + next) > max
  })
  t.doesNotThrow(
    () => fc.assert(property, { numRuns: 300 }),
    'within the bound, a prefix of the input ending on a whole code point, and the longest such',
  )
  // The generator reaches both sides of the bound (else the property above proves little).
  t.ok(cut >= 20 && whole >= 20, `${cut} inputs were cut, ${whole} fitted`)
})

t.test('boundText on 100 MB', async (t) => {
  const big = '😀'.repeat(25_000_001) // 100 MB + 4 bytes
  const r = boundText(big, 65536)
  t.equal(r.bytes, 65536)
  t.equal(r.text.length, 32768)
  t.ok(r.truncated)
})

t.test('boundData keeps the shape', async (t) => {
  const value = {
    path: 'a.txt',
    size: 123,
    binary: false,
    content: 'x'.repeat(10_000),
    tags: ['a', 'b'],
    meta: { owner: 'o', note: null },
  }
  const tiny = boundData(value, 60)
  t.ok(
    tiny.truncated && jsonBytes(tiny.value) <= 60,
    'below the size of the bare shape: last resort drops trailing keys',
  )
  t.same(
    Object.keys(tiny.value as object),
    Object.keys(value).slice(0, Object.keys(tiny.value as object).length),
    'a prefix of the keys',
  )
  for (const max of [120, 200, 1000, 5000]) {
    const r = boundData(value, max)
    t.ok(r.truncated)
    t.ok(jsonBytes(r.value) <= max, `≤ ${max}`)
    t.same(Object.keys(r.value as object), Object.keys(value), 'every key kept')
    const v = r.value as typeof value
    t.equal(v.size, 123)
    t.equal(v.path, 'a.txt', 'short strings are not cut before long ones')
    t.ok(value.content.startsWith(v.content))
  }
  const fits = boundData(value, jsonBytes(value))
  t.same(fits, { value, truncated: false }, 'exactly the limit')
  const over = boundData(value, jsonBytes(value) - 1)
  t.ok(over.truncated, 'one byte over')
  t.equal(jsonBytes(over.value), jsonBytes(value) - 1)
})

t.test('boundData: longest strings first, then array tails', async (t) => {
  const r = boundData({ a: 'a'.repeat(100), b: 'b'.repeat(50), c: 'c'.repeat(10) }, 120)
  const v = r.value as Record<string, string>
  t.equal(v['c'], 'c'.repeat(10))
  t.equal(v['a']!.length, v['b']!.length, 'the long ones meet at one level')
  t.ok(jsonBytes(v) <= 120)

  const log = { entries: Array.from({ length: 1000 }, (_, i) => ({ id: i, msg: `entry ${i}` })) }
  const b = boundData(log, 2000)
  const kept = (b.value as typeof log).entries
  t.ok(kept.length > 10 && kept.length < 1000)
  t.same(kept, log.entries.slice(0, kept.length), 'a prefix of whole entries, not entries cut to nothing')
  t.ok(jsonBytes(b.value) <= 2000)
  t.same(boundData(log, 2000), b, 'deterministic')
})

t.test('boundData edge values', async (t) => {
  t.same(
    boundData({ u: undefined, f: () => 1, n: NaN, d: new Date(0) }, 1000).value,
    { n: null, d: '1970-01-01T00:00:00.000Z' },
    'JSON semantics',
  )
  t.same(boundData([undefined], 100).value, [null])
  t.same(boundData('😀😀', 6), { value: '😀', truncated: true })
  t.same(boundData('\n\n\n', 6), { value: '\n\n', truncated: true }, 'escapes are counted as JSON text')
  t.same(boundData('a\ud800', 7), { value: 'a', truncated: true }, 'a lone surrogate is 6 bytes of JSON')
  const proto = JSON.parse('{"__proto__": "x"}') as unknown
  t.same(Object.keys(boundData(proto, 100).value as object), ['__proto__'])
  const manyKeys = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`key${i}`, i]))
  const r = boundData(manyKeys, 50)
  t.ok(r.truncated && jsonBytes(r.value) <= 50, 'last resort: trailing entries dropped')
  t.throws(() => boundData('abc', 1), RangeError)
  t.throws(() => boundData(1n, 100), TypeError)
})

t.test('boundData on a 100 MB string and a wide array', async (t) => {
  const r = boundData({ content: 'é'.repeat(50_000_000), lines: Array.from({ length: 200_000 }, (_, i) => i) }, 65536)
  t.ok(jsonBytes(r.value) <= 65536)
  t.ok(r.truncated)
})

t.test('boundData property: never over, keys kept, deterministic', async (t) => {
  const seen = { refused: 0, whole: 0, cut: 0 }
  const property = fc.property(fc.jsonValue({ maxDepth: 4 }), fc.integer({ min: 4, max: 600 }), (value, max) => {
    let r: ReturnType<typeof boundData>
    try {
      r = boundData(value, max)
    } catch (e) {
      seen.refused++
      return e instanceof RangeError
    }
    const size = jsonBytes(r.value)
    if (size > max) return false
    if (!r.truncated) {
      seen.whole++
      return JSON.stringify(r.value) === JSON.stringify(value)
    }
    seen.cut++
    return JSON.stringify(boundData(value, max)) === JSON.stringify(r)
  })
  t.doesNotThrow(
    () => fc.assert(property, { numRuns: 300 }),
    'never over the bound; unchanged when it fits; the same answer twice when cut; only RangeError refused',
  )
  t.ok(seen.whole >= 20 && seen.cut >= 20, `the generator reaches both sides: ${JSON.stringify(seen)}`)
})
