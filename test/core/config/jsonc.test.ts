// The config loader's JSONC: comments and trailing commas are blanked, strings are left alone,
// and a malformed file is named by line and column.
import t from 'tap'
import fc from 'fast-check'
import { JsoncError, parseJsonc } from '../../../core/src/config/jsonc.ts'

t.test('comments and trailing commas, never inside strings', async (t) => {
  t.same(
    parseJsonc(
      '\uFEFF// head\n{\n  "a": 1, // one\n  /* block\n  over lines */ "b": "x // y /* z */",\n  "c": ["\\"//", 2,],\n}\n',
    ),
    { a: 1, b: 'x // y /* z */', c: ['"//', 2] },
  )
  t.same(parseJsonc('{"url": "https://example.com/a"} // after'), { url: 'https://example.com/a' })
})

t.test('JSON values round-trip, whatever their strings hold', async (t) => {
  fc.assert(
    fc.property(fc.jsonValue(), (v) => {
      const text = JSON.stringify(v, null, 2)
      t.same(parseJsonc(text), JSON.parse(text))
      return true
    }),
    { numRuns: 200 },
  )
})

t.test('a malformed file: the problem, its line and column', async (t) => {
  const cases: [string, number, number, RegExp][] = [
    ['{\n  // a comment\n  "a": 1\n  "b": 2\n}', 4, 3, /Expected ',' or '}' after property value/],
    ['{\n  "a": nope\n}', 2, 9, /Unexpected token 'o'/], // 'n' may start null
    ['{\n  "a": 1 /* never closed\n}', 2, 10, /a \/\* comment is never closed/],
    ['{\n  "a": [,]\n}', 2, 9, /Unexpected token ','/],
    ['{\n  "a": 1,,\n}', 2, 10, /Expected double-quoted property name/],
    ['', 1, 1, /the file ends too early/],
  ]
  for (const [text, line, column, reason] of cases) {
    try {
      parseJsonc(text)
      t.fail(`accepted: ${JSON.stringify(text)}`)
    } catch (e) {
      t.ok(e instanceof JsoncError, JSON.stringify(text))
      t.match(e, { line, column, reason }, JSON.stringify(text))
    }
  }
})
