// The review page's own highlighter and patch parser, as pure functions (no DOM needed).
import t from 'tap'
import { parsePatch } from '../../../server/web/patch.ts'
import { languageOf, START, tokenize } from '../../../server/web/highlight.ts'
import { splitReasoning } from '../../../server/web/reasoning.ts'

const classes = (line: string, lang: string | undefined, state = START) =>
  tokenize(line, lang, state).tokens.filter(([c]) => c !== '')

t.test('languages by file name', async (t) => {
  t.equal(languageOf('src/a.ts'), 'js')
  t.equal(languageOf('x/y/Dockerfile'), 'docker')
  t.equal(languageOf('Makefile'), 'sh')
  t.equal(languageOf('README.MD'), 'md')
  t.equal(languageOf('LICENSE'), undefined, 'no extension: plain')
  t.equal(languageOf('.gitignore'), undefined)
})

t.test('tokens: keywords, strings, numbers, comments; the text is kept whole', async (t) => {
  const line = "const x = 'a // not a comment' + 42 // a comment"
  const toks = tokenize(line, 'js', START).tokens
  t.equal(toks.map(([, s]) => s).join(''), line, 'tokens cover the line exactly')
  t.same(classes(line, 'js'), [
    ['kw', 'const'],
    ['str', "'a // not a comment'"],
    ['num', '42'],
    ['com', '// a comment'],
  ])
  t.same(classes('def f(): return None', 'py'), [
    ['kw', 'def'],
    ['kw', 'return'],
    ['lit', 'None'],
  ])
  t.same(
    classes('SELECT id FROM t', 'sql'),
    [
      ['kw', 'SELECT'],
      ['kw', 'FROM'],
    ],
    'SQL keywords in any case',
  )
  t.same(classes('"key": true,', 'json'), [
    ['attr', '"key"'],
    ['lit', 'true'],
  ])
  t.same(classes('plain text', undefined), [], 'an unknown language is plain')
})

t.test('a block comment or multi-line string carries over to the next lines', async (t) => {
  const a = tokenize('x = 1 /* open', 'js', START)
  t.same(a.state, { close: '*/', cls: 'com' })
  const b = tokenize('still inside', 'js', a.state)
  t.same(b.tokens, [['com', 'still inside']])
  const c = tokenize('done */ y', 'js', b.state)
  t.same(c.tokens[0], ['com', 'done */'])
  t.same(c.state, START)
  const py = tokenize('s = """doc', 'py', START)
  t.same(py.state, { close: '"""', cls: 'str' })
  t.same(tokenize('"unterminated', 'js', START).state, START, 'a one-line string ends with its line')
  const esc = tokenize('"a \\" b" + c', 'js', START)
  t.same(esc.tokens[0], ['str', '"a \\" b"'], 'escaped quotes stay inside')
})

t.test('a patch becomes numbered rows; headers keep only what a reviewer needs', async (t) => {
  const rows = parsePatch(
    'diff --git a/f b/f\nindex 1..2 100644\n--- a/f\n+++ b/f\n@@ -3,3 +3,3 @@ ctx\n a\n-b\n+c\n d\n\\ No newline at end of file\n',
  )
  t.same(rows, [
    { kind: 'hunk', text: '@@ -3,3 +3,3 @@ ctx' },
    { kind: 'ctx', old: 3, new: 3, text: 'a' },
    { kind: 'del', old: 4, text: 'b' },
    { kind: 'add', new: 4, text: 'c' },
    { kind: 'ctx', old: 5, new: 5, text: 'd' },
    { kind: 'note', text: '\\ No newline at end of file' },
  ])
  t.same(parsePatch('diff --git a/x b/x\nold mode 100644\nnew mode 100755\n'), [
    { kind: 'note', text: 'old mode 100644' },
    { kind: 'note', text: 'new mode 100755' },
  ])
})

t.test('reasoning: the agent’s words, the AGIT thought log, a pasted handoff', async (t) => {
  const r = splitReasoning(
    'Because.\n\nTask handoff\nObjective: ship\nNext: test\n\nIntent: x.\n\nAGIT thoughts (2):\n[10:00:01] user/intent: add it\n[10:00:02] ai/reasoning: first line\nsecond line',
  )
  t.equal(r.text, 'Because.\n\nIntent: x.')
  t.equal(r.handoff, 'Task handoff\nObjective: ship\nNext: test')
  t.same(r.thoughts, [
    { time: '10:00:01', role: 'user', category: 'intent', content: 'add it' },
    { time: '10:00:02', role: 'ai', category: 'reasoning', content: 'first line\nsecond line' },
  ])
  t.same(splitReasoning('just words'), { text: 'just words', thoughts: [], handoff: undefined })
})
