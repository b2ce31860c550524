import t from 'tap'
import { escapeName, sanitizeDeep, sanitizeText, unescapeName } from '../../../core/src/safety/sanitize.ts'

const ESC = '\x1b'

t.test('every escape family is stripped and counted once', async (t) => {
  const cases: Array<[name: string, input: string, text: string, removed: number]> = [
    ['CSI SGR', `a${ESC}[31mred${ESC}[0m b`, 'ared b', 2],
    ['CSI private mode', `${ESC}[?1049hx`, 'x', 1],
    ['CSI with intermediates', `${ESC}[1 qx`, 'x', 1],
    ['CSI cursor up (line overwrite)', `safe${ESC}[1A${ESC}[2Kevil`, 'safeevil', 2],
    ['C1 CSI', `a\u009b31mb`, 'ab', 1],
    ['OSC with BEL', `${ESC}]0;title\x07x`, 'x', 1],
    ['OSC with ST', `${ESC}]8;;http://evil${ESC}\\link${ESC}]8;;${ESC}\\`, 'link', 2],
    ['OSC 52 clipboard', `${ESC}]52;c;ZXZpbA==\x07ok`, 'ok', 1],
    ['C1 OSC with C1 ST', `\u009d0;t\u009cx`, 'x', 1],
    ['DCS', `${ESC}Pq#0;2;0;0;0${ESC}\\x`, 'x', 1],
    ['C1 DCS', `\u0090payload\u009cx`, 'x', 1],
    ['SOS', `${ESC}Xhidden${ESC}\\x`, 'x', 1],
    ['PM', `${ESC}^hidden${ESC}\\x`, 'x', 1],
    ['APC', `${ESC}_hidden${ESC}\\x`, 'x', 1],
    ['C1 SOS/PM/APC', `\u0098a\u009cb\u009eb\u009cc\u009fc\u009cd`, 'bcd', 3],
    ['string ended by CAN', `${ESC}]0;t\x18x`, 'x', 1],
    ['two-char escape', `${ESC}7x${ESC}8`, 'x', 2],
    ['nF escape', `${ESC}(Bx${ESC})0`, 'x', 2],
    ['lone ESC at end', `x${ESC}`, 'x', 1],
    ['ESC before newline keeps the newline', `x${ESC}\ny`, 'x\ny', 1],
    ['ESC ESC', `${ESC}${ESC}[1mx`, 'x', 2],
    ['C0 controls', 'a\x00b\x07c\x08d\x0be\x0cf\x1ag', 'abcdefg', 6],
    ['DEL', 'a\x7fb', 'ab', 1],
    ['other C1', 'a\u0085b\u008db', 'abb', 2],
    ['lone CR', 'abc\rxyz', 'abcxyz', 1],
    ['CRLF is normalized, not counted', 'a\r\nb\r\n', 'a\nb\n', 0],
    ['CR CR LF', 'a\r\r\nb', 'a\nb', 1],
    [
      'bidi overrides and isolates',
      'a\u202eb\u202ac\u202bd\u202ce\u202df\u2066g\u2067h\u2068i\u2069j',
      'abcdefghij',
      9,
    ],
    ['bidi marks', 'a\u200eb\u200fc\u061cd', 'abcd', 3],
    ['zero-width', 'a\u200bb\u200cc\u200dd\u2060e\ufefff', 'abcdef', 5],
    ['tag characters', 'a\u{e0001}\u{e0041}\u{e007f}b', 'ab', 3],
    ['lone surrogates', 'a\ud800b\udc00c', 'abc', 2],
  ]
  for (const [name, input, text, removed] of cases) {
    t.same(sanitizeText(input), { text, removed }, name)
  }
})

t.test('what is kept', async (t) => {
  const keep = 'tab\there\nnewline, ünïcødé, 日本語, emoji 😀, ZWJ-free flags 🇫🇷, math ∑, RTL text שלום'
  t.same(sanitizeText(keep), { text: keep, removed: 0 })
  t.equal(sanitizeText(keep).text, keep, 'unchanged input is returned as is')
  t.same(sanitizeText(''), { text: '', removed: 0 })
  // U+E0000–U+E0FFF are all default-ignorable; their neighbours are ordinary characters
  t.same(sanitizeText('\u{e1000}\u{dffff}'), { text: '\u{e1000}\u{dffff}', removed: 0 })
})

t.test('every default-ignorable and format code point goes, counted once (issue 10)', async (t) => {
  const named: Array<[string, string]> = [
    ['soft hyphen', '\u00ad'],
    ['combining grapheme joiner', '\u034f'],
    ['Mongolian vowel separator', '\u180e'],
    ['Hangul fillers', '\u115f\u1160\u3164\uffa0'],
    ['variation selectors', '\ufe00\ufe0f\u{e0100}\u{e01ef}'],
    ['interlinear annotation marks', '\ufff9\ufffa\ufffb'],
    ['Arabic number signs', '\u0600\u0605'],
    ['emoji ZWJ and presentation selector', '\u200d\ufe0f'],
  ]
  for (const [name, chars] of named)
    t.same(sanitizeText(`a${chars}b`), { text: 'ab', removed: [...chars].length }, name)
  t.same(
    sanitizeText('a\u2028b\u2029c'),
    { text: 'a\nb\nc', removed: 2 },
    'line and paragraph separators become line breaks',
  )
  t.same(
    sanitizeText('family 👨\u200d👩\u200d👧'),
    { text: 'family 👨👩👧', removed: 2 },
    'an emoji ZWJ sequence shows as its parts',
  )
  // The whole set, as the running Node's Unicode data defines it; the rest sampled.
  const IGNORABLE = /^[\p{Default_Ignorable_Code_Point}\p{Cf}]$/u
  let members = 0
  const wrong: string[] = []
  for (let cp = 0xa0; cp <= 0x10ffff; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue
    const ch = String.fromCodePoint(cp)
    const member = IGNORABLE.test(ch)
    if (!member && cp % 97 !== 0) continue
    const r = sanitizeText(`a${ch}b`)
    if (member) {
      members++
      if (r.text !== 'ab' || r.removed !== 1) wrong.push(`U+${cp.toString(16)} kept`)
    } else if (cp !== 0x2028 && cp !== 0x2029 && (r.text !== `a${ch}b` || r.removed !== 0))
      wrong.push(`U+${cp.toString(16)} removed`)
  }
  t.same(wrong, [], 'each member removed and counted once, the others kept')
  t.ok(members > 4000, `${members} code points in the set`)
})

t.test('unterminated and interrupted sequences lose at most the rest of their line', async (t) => {
  t.same(sanitizeText(`keep${ESC}]0;title never ends\nnext line`), { text: 'keep\nnext line', removed: 1 })
  t.same(sanitizeText(`keep${ESC}Pdcs body\nnext`), { text: 'keep\nnext', removed: 1 })
  t.same(sanitizeText(`keep\u009dosc body`), { text: 'keep', removed: 1 }, 'to the end of input')
  t.same(
    sanitizeText(`a${ESC}]0;x${ESC}[31mb`),
    { text: 'ab', removed: 2 },
    'a new ESC interrupts the string and starts its own sequence',
  )
  t.same(sanitizeText(`a${ESC}]0;x\u009b1mb`), { text: 'ab', removed: 2 }, 'so does a C1 introducer')
  t.same(
    sanitizeText(`a${ESC}[12\nb`),
    { text: 'a\nb', removed: 1 },
    'a CSI stops before a character it cannot contain',
  )
  t.same(sanitizeText(`a${ESC}[12é`), { text: 'aé', removed: 1 })
  t.same(sanitizeText(`a${ESC}[`), { text: 'a', removed: 1 })
})

// A quadratic pass over these 3 million escapes would not end before tap's test timeout.
t.test('linear on hostile input', async (t) => {
  const many = `${ESC}]`.repeat(1_000_000) + `${ESC}[`.repeat(1_000_000) + '\u202e'.repeat(1_000_000)
  const r = sanitizeText(many)
  t.equal(r.text, '')
  t.equal(r.removed, 3_000_000)
})

t.test('100 MB input', async (t) => {
  const line = 'const x = "some ordinary source text";\n'
  const clean = line.repeat(Math.ceil(100_000_000 / line.length))
  const dirty = `${ESC}[31m${clean}\u202e${ESC}]0;x\x07`
  const r = sanitizeText(dirty)
  t.equal(r.removed, 3)
  t.equal(r.text.length, clean.length)
})

t.test('sanitizeDeep', async (t) => {
  const input = {
    [`key${ESC}[1m`]: ['a\u202eb', { nested: `${ESC}]0;x\x07v`, n: 1, b: true, z: null }],
    plain: 'ok',
  }
  const frozen = structuredClone(input)
  const r = sanitizeDeep(input)
  t.same(r.value, { key: ['ab', { nested: 'v', n: 1, b: true, z: null }], plain: 'ok' })
  t.equal(r.removed, 3)
  t.same(input, frozen, 'input not mutated')
  t.not(r.value, input)

  const collide = sanitizeDeep({ 'path\u200b': 'evil', path: 'safe' })
  t.same(collide.value, { path: 'safe' }, 'a key that needed no sanitizing wins a collision')
  t.equal(collide.removed, 2, 'the hidden char and the dropped entry')

  const proto = sanitizeDeep(JSON.parse('{"__proto__": {"polluted": "a\\u202e"}}'))
  t.same(Object.keys(proto.value as object), ['__proto__'], '__proto__ stays an own key')
  t.equal(({} as { polluted?: unknown }).polluted, undefined, 'no prototype pollution')
  t.equal(Object.getPrototypeOf(proto.value), Object.prototype)

  t.same(sanitizeDeep('x\x00'), { value: 'x', removed: 1 })
  t.same(sanitizeDeep(42), { value: 42, removed: 0 })
  const cyclic: Record<string, unknown> = {}
  cyclic['self'] = cyclic
  t.throws(() => sanitizeDeep(cyclic), TypeError)
  let deep: unknown = 'x'
  for (let i = 0; i < 10_000; i++) deep = [deep]
  t.throws(() => sanitizeDeep(deep), /nested deeper/)
  const shared = { s: 'a\u200b' }
  t.same(
    sanitizeDeep([shared, shared]),
    { value: [{ s: 'a' }, { s: 'a' }], removed: 2 },
    'shared (acyclic) references are fine',
  )
})

t.test('names are escaped, not cleaned, and the escape comes back (issue 10)', async (t) => {
  const cases: Array<[string, string, number]> = [
    ['plain/name.txt', 'plain/name.txt', 0],
    ['evil\u202egnp.txt', 'evil\\u{202e}gnp.txt', 1],
    ['a\x1b[2Jb', 'a\\u{1b}[2Jb', 1],
    ['tab\tand\nnewline', 'tab\\u{9}and\\u{a}newline', 2],
    ['back\\slash', 'back\\u{5c}slash', 0],
    ['tag\u{e0041}s', 'tag\\u{e0041}s', 1],
    ['lone\ud800', 'lone\\u{d800}', 1],
    ['emoji 😀 stays', 'emoji 😀 stays', 0],
  ]
  for (const [name, shown, count] of cases) {
    t.same(escapeName(name), { text: shown, removed: count }, JSON.stringify(name))
    t.equal(unescapeName(shown), name, `${shown} comes back`)
  }
  t.equal(
    unescapeName('literal \\u{5c}u{41}'),
    'literal \\u{41}',
    'an escaped backslash keeps a literal escape literal',
  )
  t.equal(unescapeName('no escapes'), 'no escapes')
  const deep = sanitizeDeep({
    entries: [{ name: 'x\u200by', path: 'd/x\u200by', note: 'x\u200by' }],
    paths: ['a\u202eb'],
  })
  t.same(
    deep.value,
    { entries: [{ name: 'x\\u{200b}y', path: 'd/x\\u{200b}y', note: 'xy' }], paths: ['a\\u{202e}b'] },
    'under name keys escaped, elsewhere removed',
  )
  t.equal(deep.removed, 4)
})

t.test('only path-like values are escaped; an author or a title is cleaned (issue 27)', async (t) => {
  const deep = sanitizeDeep({
    author: { name: 'Mal\x1b[32mlory\u202e', email: 'm@x' },
    repos: [{ name: 'de\u200bmo' }],
    entries: [{ name: 'a\x1b[1mb', path: 'd/a\x1b[1mb' }],
  })
  t.same(deep.value, {
    author: { name: 'Mallory', email: 'm@x' },
    repos: [{ name: 'demo' }],
    entries: [{ name: 'a\\u{1b}[1mb', path: 'd/a\\u{1b}[1mb' }],
  })
})

t.test('an escape copied from the JSON text, its backslash doubled, comes back too (issue 27)', async (t) => {
  for (const name of ['evil\u202egnp.txt', 'a\x1b[2Jb', 'back\\slash', 'literal \\u{41}']) {
    const shown = escapeName(name).text
    const inText = JSON.stringify(shown).slice(1, -1)
    t.not(inText, shown, `${shown} shows as ${inText} in the JSON text`)
    t.equal(unescapeName(inText), name, `${inText} comes back`)
  }
})
