// How well a pack record matches a resume query: the query's terms (stopwords dropped), a score
// per source record (its file name weighs most, then its path, summary and snippet) and per
// decision, and a pick that keeps every term represented. Plain functions over plain data: the
// resume (resume.ts) and its Source Cache (source-cache.ts) decide what to print.
import { basename } from 'node:path'
import type { SourceState } from './sources.ts'
import type { PackEvent, SourceRecord } from './types.ts'

/** A recorded source with its state on disk and its score against the query (0 without one). */
export interface ScoredSource {
  source: SourceRecord
  status: SourceState
  score: number
}

const STOPWORDS = new Set(
  'about after agent agents agentpack cache code context contexts current file files from into source sources task tasks that this with work working'.split(
    ' ',
  ),
)

/** The words of a query that count: lower case, three letters or more, no stopword, each once. */
export function queryTerms(query: string): string[] {
  return tokenize(query).filter((t) => !STOPWORDS.has(t))
}

function tokenize(text: string): string[] {
  return [
    ...new Set(
      text
        .toLowerCase()
        .split(/[^a-z0-9]+/u)
        .filter((t) => t.length >= 3),
    ),
  ]
}

/** One term against one field: a whole word scores `exact`, a shared prefix `fuzzy`, a long substring at least 1. */
function fieldScore(term: string, text: string, tokens: readonly string[], exact: number, fuzzy: number): number {
  if (tokens.includes(term)) return exact
  if (term.length >= 4 && tokens.some((t) => t.startsWith(term) || term.startsWith(t))) return fuzzy
  return term.length >= 5 && text.includes(term) ? Math.max(1, fuzzy) : 0
}

/** A source record against the terms: its file name counts most, then its path, summary, snippet. */
export function scoreSource(s: SourceRecord, terms: readonly string[]): number {
  const fields: [string, number, number][] = [
    [basename(s.path), 8, 4],
    [s.path, 6, 3],
    [s.summary ?? '', 3, 1],
    [s.snippet ?? '', 1, 1],
  ]
  let score = 0
  for (const [text, exact, fuzzy] of fields) {
    const lower = text.toLowerCase()
    const tokens = tokenize(text)
    for (const t of terms) score += fieldScore(t, lower, tokens, exact, fuzzy)
  }
  return score
}

/** A ledger event (a decision) against the terms, over its text, summary, reason, kind and files. */
export function scoreEvent(e: PackEvent, terms: readonly string[]): number {
  const text = [str(e['text']), str(e['summary']), str(e['reason']), str(e['kind']), ...strs(e['files'])].join(' ')
  const lower = text.toLowerCase()
  const tokens = tokenize(text)
  return terms.reduce((n, t) => n + fieldScore(t, lower, tokens, 4, 2), 0)
}

/** Up to `limit` entries: first the best one for each term (so every term is represented), then by score. */
export function diverse<T>(
  ranked: readonly T[],
  terms: readonly string[],
  limit: number,
  termScore: (x: T, t: string) => number,
): T[] {
  const chosen: T[] = []
  for (const t of terms) {
    if (chosen.length >= limit) break
    let best: T | undefined
    let bestScore = 0
    for (const x of ranked) {
      if (chosen.includes(x)) continue
      const s = termScore(x, t)
      if (s > bestScore) {
        best = x
        bestScore = s
      }
    }
    if (best !== undefined) chosen.push(best)
  }
  for (const x of ranked) if (chosen.length < limit && !chosen.includes(x)) chosen.push(x)
  return chosen
}

/** The matching sources, best first (ties by path). */
export function rankSources(entries: readonly ScoredSource[]): ScoredSource[] {
  return entries
    .filter((x) => x.score > 0)
    .sort((a, b) => b.score - a.score || a.source.path.localeCompare(b.source.path))
}

/** An event's string field, or '' (ledger events are untyped JSON). */
export function str(v: unknown): string {
  return typeof v === 'string' ? v : ''
}

/** An event's string-list field, its non-strings dropped. */
export function strs(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []
}
