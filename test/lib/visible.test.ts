// Hidden characters are named, not removed: what a reviewer reads is what the text holds.
import t from 'tap'
import { showHidden, visibleParts } from '../../lib/visible.ts'

t.test('plain text, tabs and line feeds pass as they are', async (t) => {
  t.same(visibleParts('a\tb\nc'), ['a\tb\nc'])
  t.equal(showHidden('résumé – 日本語 🙂'), 'résumé – 日本語 🙂')
})

t.test('bidi controls, zero-width and control characters become their escapes', async (t) => {
  t.equal(showHidden('a\u202eb'), 'a\\u{202e}b')
  t.equal(showHidden('x\u2066y\u2069'), 'x\\u{2066}y\\u{2069}')
  t.equal(showHidden('to\u200bken'), 'to\\u{200b}ken')
  t.equal(showHidden('\u001b[31mred'), '\\u{1b}[31mred', 'an escape sequence cannot drive a terminal')
  t.equal(showHidden('line\r\nnext'), 'line\\u{d}\nnext')
  t.equal(showHidden('\ufeffbom'), '\\u{feff}bom')
  t.equal(showHidden('a\u2028b'), 'a\\u{2028}b')
  t.equal(showHidden('lone \ud800 half'), 'lone \\u{d800} half')
  t.equal(showHidden('tag\u{e0041}'), 'tag\\u{e0041}')
  t.equal(showHidden('\u0085\u009b'), '\\u{85}\\u{9b}', 'C1 controls')
})

t.test('each hidden character says what it is; bidi controls are marked as such', async (t) => {
  const parts = visibleParts('if (a\u202e) {}')
  t.equal(parts.length, 3)
  t.same(parts[1], { shown: '\\u{202e}', title: 'U+202E RIGHT-TO-LEFT OVERRIDE', bidi: true })
  t.same(visibleParts('\u200b')[0], { shown: '\\u{200b}', title: 'U+200B ZERO WIDTH SPACE', bidi: false })
  t.same(visibleParts('\u0007')[0], { shown: '\\u{7}', title: 'U+0007', bidi: false })
})
