// plugins/continuity/relevance.ts: how a resume query scores source records and decisions, in
// isolation (the resume tests check what is printed from these scores).
import t from 'tap'
import {
  diverse,
  queryTerms,
  rankSources,
  scoreEvent,
  scoreSource,
  str,
  strs,
} from '../../../plugins/continuity/relevance.ts'
import type { ScoredSource } from '../../../plugins/continuity/relevance.ts'
import type { PackEvent, SourceRecord } from '../../../plugins/continuity/types.ts'

function source(path: string, summary = '', snippet = ''): SourceRecord {
  return { path, hash: 'h', size: 1, mtimeMs: 0, recordedAt: '2026-01-01T00:00:00Z', summary, snippet }
}

function decision(id: string, text: string, extra: Record<string, unknown> = {}): PackEvent {
  return { id, ts: `2026-01-0${id}T00:00:00Z`, type: 'decision', text, ...extra }
}

t.test('query terms: lower case, three letters or more, each once, stopwords dropped', async (t) => {
  t.same(queryTerms('Auth TOKEN refresh, auth in the source files of db'), ['auth', 'token', 'refresh', 'the'])
  t.same(queryTerms('  '), [])
  t.same(queryTerms('context files task'), [], 'every word a stopword')
})

t.test('a source scores most by its file name, then path, summary, snippet', async (t) => {
  const name = scoreSource(source('src/auth.ts'), ['auth'])
  const dir = scoreSource(source('auth/index.ts'), ['auth'])
  const summary = scoreSource(source('src/x.ts', 'handles auth'), ['auth'])
  const snippet = scoreSource(source('src/x.ts', '', 'auth()'), ['auth'])
  t.ok(name > dir, `file name ${name} > directory ${dir}`)
  t.ok(dir > summary, `path ${dir} > summary ${summary}`)
  t.ok(summary > snippet, `summary ${summary} > snippet ${snippet}`)
  t.ok(snippet > 0)
  t.equal(scoreSource(source('src/x.ts', 'nothing here'), ['auth']), 0)
})

t.test('a shared prefix scores less than the whole word; a long substring still counts', async (t) => {
  const whole = scoreSource(source('x.ts', 'token'), ['token'])
  const prefix = scoreSource(source('x.ts', 'tokens'), ['token'])
  t.ok(whole > prefix && prefix > 0, `whole ${whole} > prefix ${prefix} > 0`)
  t.ok(scoreSource(source('x.ts', 'retokenized'), ['token']) > 0, 'inside a longer word')
  t.equal(scoreSource(source('x.ts', 'retokenized'), ['tok']), 0, 'a short term must match a word')
})

t.test('a decision scores over its text, reason and files; a non-string field is ignored', async (t) => {
  t.ok(scoreEvent(decision('1', 'use sqlite'), ['sqlite']) > 0)
  t.ok(scoreEvent(decision('1', 'x', { reason: 'sqlite is small' }), ['sqlite']) > 0)
  t.ok(scoreEvent(decision('1', 'x', { files: ['db/sqlite.ts', 7] }), ['sqlite']) > 0)
  t.equal(scoreEvent(decision('1', 'x', { reason: 42 }), ['sqlite']), 0)
})

t.test('diverse: the best for each term first, then the rest by rank, up to the limit', async (t) => {
  const ranked = ['aa', 'ab', 'b', 'c']
  const score = (x: string, term: string) => (x.startsWith(term) ? x.length : 0)
  t.same(diverse(ranked, ['a', 'b', 'c'], 3, score), ['aa', 'b', 'c'], 'each term represented')
  t.same(diverse(ranked, ['c'], 2, score), ['c', 'aa'], 'then filled in rank order')
  t.same(diverse(ranked, ['a', 'b'], 1, score), ['aa'], 'never over the limit')
  t.same(diverse(ranked, ['z'], 2, score), ['aa', 'ab'], 'a term matching nothing picks nothing')
})

t.test('rankSources keeps the matches, best first, ties by path', async (t) => {
  const e = (path: string, score: number): ScoredSource => ({ source: source(path), status: 'unchanged', score })
  t.same(
    rankSources([e('b', 2), e('z', 0), e('a', 2), e('c', 5)]).map((x) => x.source.path),
    ['c', 'a', 'b'],
  )
})

t.test('str and strs read untyped event fields', async (t) => {
  t.equal(str('x'), 'x')
  t.equal(str(3), '')
  t.same(strs(['a', 1, 'b', null]), ['a', 'b'])
  t.same(strs('a'), [])
})
