// The resume's Source Cache section: every recorded source in full without a query; with one,
// the matching records in full (best first) and the rest as stubs (path, status, topic,
// guidance), stale stubs first, with a line saying what was left out and how to see it.
import { rankSources } from './relevance.ts'
import type { ScoredSource } from './relevance.ts'
import type { SourceState } from './sources.ts'

const MATCHED_SOURCES_SHOWN = 8
const STUBS_SHOWN = 12

export function sourceLines(entries: readonly ScoredSource[], query: string, terms: readonly string[]): string[] {
  if (!entries.length)
    return [
      '- No inspected sources recorded yet.',
      '- Use `agentpack source add <file> --summary <text>` after reading important files.',
    ]
  if (!terms.length) return entries.map((x) => full(x))
  const matched = rankSources(entries)
  const unrelated = entries.filter((x) => x.score === 0)
  const stale = unrelated
    .filter((x) => x.status !== 'unchanged')
    .sort((a, b) => a.source.path.localeCompare(b.source.path))
  const stubs = [...stale, ...unrelated.filter((x) => x.status === 'unchanged')]
  const shownStubs = stubs.slice(0, STUBS_SHOWN)
  const shownMatched = matched.slice(0, MATCHED_SOURCES_SHOWN)
  const hiddenMatched = matched.length - shownMatched.length
  const hiddenStubs = stubs.length - shownStubs.length
  const staleNote = stale.length
    ? `- Query-unrelated stale stubs: ${stale.length} changed/missing; call \`source_status\` for full stale details.`
    : null
  if (!matched.length)
    return [
      hiddenStubs > 0
        ? `- Query filter: no source summaries matched \`${query}\`; showing ${shownStubs.length} of ${entries.length} compact source stub(s), omitting ${hiddenStubs}.`
        : `- Query filter: no source summaries matched \`${query}\`; showing compact stubs for all ${entries.length} recorded source(s).`,
      staleNote,
      hiddenStubs > 0
        ? '- Omitted source stubs are query-unrelated; rerun without `--query` or call `source_status` for full Source Cache details.'
        : null,
      '- Rerun without `--query` when you need the full Source Cache.',
      ...shownStubs.map(stub),
    ].filter((l): l is string => l !== null)
  const staleMatched = matched.filter((x) => x.status !== 'unchanged').length
  const staleShown = shownMatched.filter((x) => x.status !== 'unchanged').length
  const hidden = hiddenMatched > 0 || hiddenStubs > 0
  return [
    hidden
      ? `- Query filter: full summaries for ${shownMatched.length} of ${matched.length} query-relevant source(s), compact stubs for ${shownStubs.length} of ${unrelated.length} query-unrelated source(s).`
      : `- Query filter: full summaries for ${matched.length} query-relevant source(s), compact stubs for ${unrelated.length} query-unrelated source(s).`,
    // The stale-source line Agentpack adds for matched records that changed or went missing.
    staleMatched > 0
      ? hiddenMatched > 0
        ? `- Query-relevant stale source records shown in full: ${staleShown} of ${staleMatched} changed/missing.`
        : `- Query-relevant stale source records shown in full: ${staleMatched} changed/missing.`
      : null,
    staleNote,
    hidden
      ? `- Source entries omitted for compactness: ${hiddenMatched} query-relevant, ${hiddenStubs} query-unrelated; rerun with a narrower query or larger budget for details.`
      : null,
    '- Compact stubs keep path/status/topic/guidance; full summaries require `source_status` or an unfiltered resume.',
    ...shownMatched.map((x) => full(x)),
    ...shownStubs.map(stub),
  ].filter((l): l is string => l !== null)
}

function full(x: ScoredSource): string {
  return [
    `- ${x.source.path}`,
    `  - status: ${x.status}`,
    `  - summary: ${x.source.summary || 'No summary recorded.'}`,
    x.source.snippet ? `  - snippet: ${x.source.snippet}` : null,
    `  - meaning: ${x.status === 'unchanged' ? 'Matches recorded source hash. Summary is current for this file content.' : 'Does not match recorded source hash.'}`,
    `  - guidance: ${guidance(x.status)}`,
  ]
    .filter((l) => l !== null)
    .join('\n')
}

function stub(x: ScoredSource): string {
  return x.status === 'unchanged'
    ? `- ${x.source.path}\n  - status: ${x.status}; topic: ${topic(x.source.summary)}; guidance: ${guidance(x.status)}`
    : `- ${x.source.path}\n  - status: ${x.status}; topic: ${topic(x.source.summary, 60)} (recorded); guidance: call \`source_status\` before relying`
}

export function guidance(s: SourceState): string {
  return s === 'unchanged'
    ? 'Do not re-open unless needed or unless hash changed.'
    : 'Re-open before relying on prior conclusions.'
}

export function topic(summary: string, max = 80): string {
  const s = (summary ?? '').replace(/\s+/g, ' ').trim()
  if (!s) return 'No summary recorded.'
  return oneLine(/^(.+?[.!?])(?:\s|$)/u.exec(s)?.[1] ?? s, max)
}

export function oneLine(v: string, max: number): string {
  const s = v.replace(/\s+/g, ' ').trim()
  return s.length <= max ? s : `${s.slice(0, Math.max(0, max - 1)).trimEnd()}...`
}
