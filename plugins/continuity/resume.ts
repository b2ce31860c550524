// The budgeted markdown resume behind load_context, resume, the resource
// agentpack://resume/latest and each checkpoint's resume.md. Sections and their order follow
// Agentpack; git state costs one `git status` (plus one `git log` only when ahead of upstream).
//
// With a query, the Source Cache keeps matching records whole (summary, snippet) and shrinks
// the rest to stubs (path, status, topic, guidance), stale stubs first; a quick budget also
// gets a "Relevant Context" digest of the best-matching decisions and sources.
import { homedir } from 'node:os'
import { isAbsolute, relative } from 'node:path'
import { estimateTokens, packSections } from './budget.ts'
import type { Section } from './budget.ts'
import { throwIfAborted } from './errors.ts'
import { sameHead, abbreviate } from './git.ts'
import { label } from './ledger.ts'
import { currentPassport } from './passports.ts'
import { diverse, queryTerms, rankSources, scoreEvent, scoreSource, str, strs } from './relevance.ts'
import type { ScoredSource } from './relevance.ts'
import { guidance, oneLine, sourceLines, topic } from './source-cache.ts'
import { resolveRegularFileWithin, readHead, sourceStates } from './sources.ts'
import type { SourceState } from './sources.ts'
import type { Pack } from './store.ts'
import type { PackEvent, PackState, TaskPassport } from './types.ts'
import { isClosed } from './types.ts'

const COMPACT_BUDGET = 1200
const RELEVANT_DECISIONS = 4
const RELEVANT_SOURCES = 4
const METADATA_RESERVE = 48

const GUIDANCE: Record<string, string> = {
  'Source Cache': 'rerun with a larger budget, use a narrower query, or call `source_status` for stale details.',
  Decisions: 'rerun with a larger budget or a query that names the decision topic.',
  'Dead Ends': 'rerun with a larger budget when avoiding prior failed approaches matters.',
  Evidence: 'rerun with a larger budget when verification details matter.',
  'Recent Timeline': 'use `agentpack replay` for full chronology.',
}

export interface ResumeResult {
  markdown: string
  estimatedTokens: number
  budget: number
  omittedSections: string[]
  truncatedSections: string[]
  truncated: boolean
}

export async function buildResume(
  pack: Pack,
  o: { budget: number; query?: string | undefined },
): Promise<ResumeResult> {
  const budget = Math.max(0, Math.trunc(o.budget))
  const query = o.query?.trim() ?? ''
  const terms = queryTerms(query)
  const [state, { sources }, events, passport, git] = await Promise.all([
    pack.state(),
    pack.sources(),
    pack.events(),
    currentPassport(pack).catch(() => null),
    gitSection(pack),
  ])
  throwIfAborted(pack.signal)
  const states = await sourceStates(pack.root, sources)
  const entries: ScoredSource[] = sources.map((s, i) => ({
    source: s,
    status: states[i] as SourceState,
    score: terms.length ? scoreSource(s, terms) : 0,
  }))
  const relevant = budget > 0 && budget <= COMPACT_BUDGET ? relevantContext(entries, events, terms) : []
  const header = [
    '# Agentpack Resume',
    `Pack root: ${displayRoot(pack.root)}`,
    `Generated: ${new Date().toISOString()}`,
    budget ? `Budget: ~${budget} tokens` : 'Budget: unbounded',
    query ? `Query: ${query}` : null,
  ]
    .filter((l) => l !== null)
    .join('\n')
  const sections: Section[] = [
    { title: 'Current State', required: true, text: section('Current State', currentState(state, passport)) },
    { title: 'Git State', required: true, text: section('Git State', git.lines) },
  ]
  if (relevant.length)
    sections.push({ title: 'Relevant Context', required: true, text: section('Relevant Context', relevant) })
  if (passport)
    sections.push({
      title: 'Current Task Passport',
      required: true,
      text: section('Current Task Passport', passportLines(passport, git.branch, git.oid, git.available)),
    })
  sections.push(
    {
      title: 'Source Cache',
      required: !!query && budget > COMPACT_BUDGET,
      text: section('Source Cache', sourceLines(entries, query, terms)),
    },
    { title: 'Decisions', text: section('Decisions', eventLines(events, 'decision')) },
    { title: 'Dead Ends', text: section('Dead Ends', eventLines(events, 'dead-end')) },
    { title: 'Evidence', text: section('Evidence', await evidenceLines(pack, events)) },
    { title: 'Recent Timeline', text: section('Recent Timeline', timeline(events)) },
  )
  const r = await pack.redactor()
  const packed = budget
    ? packSections(header, sections, Math.max(1, budget - METADATA_RESERVE), GUIDANCE)
    : { markdown: [header, ...sections.map((s) => s.text)].join('\n\n'), omitted: [], truncated: [] }
  let markdown = r.redact(withUsage(packed.markdown, budget, packed.omitted, packed.truncated))
  if (budget && estimateTokens(markdown) > budget) markdown = markdown.slice(0, budget * 4)
  return {
    markdown,
    estimatedTokens: estimateTokens(markdown),
    budget,
    omittedSections: packed.omitted,
    truncatedSections: packed.truncated,
    truncated: packed.omitted.length + packed.truncated.length > 0,
  }
}

function withUsage(markdown: string, budget: number, omitted: string[], truncated: string[]): string {
  const lines = markdown.split('\n')
  const at = lines.findIndex((l) => l.startsWith('Budget: '))
  if (at < 0) return markdown
  const details = [
    truncated.length ? `truncated ${truncated.join(', ')}` : '',
    omitted.length ? `omitted ${omitted.join(', ')}` : '',
  ].filter(Boolean)
  const status = !budget ? 'unbounded' : details.length ? `limited; ${details.join('; ')}` : 'within target'
  // The estimate includes its own two lines (they are short and bounded).
  const draft = (n: number) => [
    budget
      ? `Estimated usage: ~${n} tokens (${Math.round((n / budget) * 100)}% of target)`
      : `Estimated usage: ~${n} tokens`,
    `Budget status: ${status}`,
  ]
  let n = estimateTokens(markdown)
  for (let i = 0; i < 3; i++) n = estimateTokens([...lines, ...draft(n)].join('\n'))
  lines.splice(at + 1, 0, ...draft(n))
  return lines.join('\n')
}

function section(title: string, lines: readonly (string | null)[]): string {
  const body = lines
    .filter((l): l is string => l !== null)
    .join('\n')
    .trimEnd()
  return `## ${title}\n${body || '- No entries yet.'}`
}

function displayRoot(root: string): string {
  const rel = relative(homedir(), root)
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? `~/${rel}` : root
}

interface GitView {
  available: boolean
  branch: string | null
  oid: string | null
  lines: string[]
}

async function gitSection(pack: Pack): Promise<GitView> {
  const refs = await pack.git.refs()
  if (!refs.available) return { available: false, branch: null, oid: null, lines: ['- Git repository not detected.'] }
  const st = await pack.git.status()
  const ahead = st.upstream && st.ahead ? await pack.git.aheadCommits(st.upstream) : []
  // `git diff --shortstat` (insertions and deletions, as Agentpack prints them), only when a
  // tracked file changed: an untouched or untracked-only tree needs no second process.
  const diffStat = st.lines.some((l) => !l.startsWith('??')) ? await pack.git.shortstat() : ''
  const lines = [
    `- Branch: ${refs.branch ?? 'unknown'}`,
    `- Commit: ${abbreviate(refs.oid, null) ?? 'unknown'}`,
    st.upstream
      ? `- Upstream: ${st.upstream} (${st.ahead ?? 0} ahead, ${st.behind ?? 0} behind)`
      : '- Upstream: not set',
    ahead.length ? '- Local commits ahead of upstream:' : null,
    ...ahead.map((c) => `  - ${c}`),
    st.ahead && ahead.length && st.ahead > ahead.length ? `  - ...and ${st.ahead - ahead.length} more` : null,
    '- Changed files:',
    ...(st.lines.length ? st.lines.map((l) => `  - ${l}`) : ['  - None']),
    diffStat ? `- Current diff: ${diffStat}` : '- Current diff: none',
  ].filter((l): l is string => l !== null)
  return { available: true, branch: refs.branch, oid: refs.oid, lines }
}

function currentState(state: PackState, p: TaskPassport | null): string[] {
  const actions = p ? p.nextActions : state.nextActions
  const out = [
    `Goal: ${state.goal ?? 'Not set'}`,
    p ? `Status: ${p.status} (current Task Passport)` : `Status: ${state.currentStatus || 'Not set'}`,
    state.currentCheckpoint
      ? `${p ? 'Latest repo checkpoint' : 'Current checkpoint'}: ${state.currentCheckpoint}`
      : null,
    '',
    p
      ? isClosed(p.status)
        ? 'Task next actions (historical; task is closed):'
        : 'Task next actions:'
      : 'Next actions:',
    ...(actions.length ? actions.map((a) => `- ${a}`) : ['- Not set']),
  ]
  return out.filter((l): l is string => l !== null)
}

export function driftText(p: TaskPassport, branch: string | null, oid: string | null, available: boolean): string {
  if (!available) return 'git unavailable'
  const issues: string[] = []
  if (p.branch && branch && p.branch !== branch) issues.push(`branch ${p.branch} -> ${branch}`)
  if (!sameHead(p.currentHead, oid)) issues.push(`HEAD ${p.currentHead} -> ${abbreviate(oid, p.currentHead)}`)
  return issues.length ? issues.join('; ') : 'none'
}

function passportLines(p: TaskPassport, branch: string | null, oid: string | null, available: boolean): string[] {
  const label = isClosed(p.status) ? 'Task next actions (historical; task is closed)' : 'Task next actions'
  const drift = driftText(p, branch, oid, available)
  const links = p.links ? Object.entries(p.links).map(([k, v]) => `${k} ${v}`) : []
  return [
    `- ID: ${p.id}`,
    `- Title: ${p.title}`,
    `- Status: ${p.status}`,
    `- Objective: ${p.objective || 'Not set'}`,
    p.constraints.length ? '- Constraints:' : null,
    ...p.constraints.map((c) => `  - ${c}`),
    `- Risk: ${p.risk}`,
    `- Worktree: ${displayRoot(p.worktree)}`,
    `- Branch: ${p.branch ?? 'unknown'}`,
    p.writeScope.length ? '- Write scope:' : '- Write scope: Not set',
    ...p.writeScope.map((w) => `  - ${w}`),
    `- Verification: ${p.verification.status}${p.verification.summary ? ` - ${p.verification.summary}` : ''}`,
    p.verification.evidence.length ? `- Verification evidence: ${p.verification.evidence.join(', ')}` : null,
    links.length ? `- Linked: ${links.join(', ')}` : null,
    p.nextActions.length ? `- ${label}:` : `- ${label}: Not set`,
    ...p.nextActions.map((a) => `  - ${a}`),
    !available
      ? '- Drift: Git repository not detected; verify task state manually.'
      : drift === 'none'
        ? '- Drift: none detected.'
        : `- Drift: ${drift}. Verify task state before continuing.`,
  ].filter((l): l is string => l !== null)
}

function relevantContext(
  entries: readonly ScoredSource[],
  events: readonly PackEvent[],
  terms: readonly string[],
): string[] {
  if (!terms.length) return []
  const decisions = events
    .filter((e) => e.type === 'decision')
    .map((e) => ({ e, score: scoreEvent(e, terms) }))
    .filter((x) => x.score > 0)
    .sort((a, b) => b.score - a.score || b.e.ts.localeCompare(a.e.ts))
  const pickedDecisions = diverse(decisions, terms, RELEVANT_DECISIONS, (x, t) => scoreEvent(x.e, [t]))
  const matched = rankSources(entries)
  const pickedSources = diverse(matched, terms, RELEVANT_SOURCES, (x, t) => scoreSource(x.source, [t]))
  return [
    pickedDecisions.length ? '- Query-relevant decisions:' : null,
    ...pickedDecisions.map(({ e }) => {
      const files = strs(e['files'])
      return `  - ${e.ts}: ${oneLine(label(e), 140)}${files.length ? ` Files: ${files.slice(0, 3).join(', ')}.` : ''}`
    }),
    pickedSources.length ? '- Query-relevant source records:' : null,
    ...pickedSources.map(
      (x) =>
        `  - ${x.source.path}: status ${x.status}; topic ${topic(x.source.summary, 100)}; guidance ${guidance(x.status)}`,
    ),
    pickedDecisions.length || pickedSources.length
      ? '- Bulk details remain in Source Cache, Decisions, Evidence, and Recent Timeline when budget allows.'
      : null,
  ].filter((l): l is string => l !== null)
}

function eventLines(events: readonly PackEvent[], type: string): string[] {
  const picked = events.filter((e) => e.type === type).slice(-20)
  if (!picked.length) return ['- No entries yet.']
  return picked.map((e) => {
    const files = strs(e['files'])
    const reason = str(e['reason'])
    return `- ${e.ts}: ${str(e['text']) || str(e['summary']) || 'No text.'}${reason ? ` Reason: ${reason}.` : ''}${files.length ? ` Files: ${files.join(', ')}.` : ''}`
  })
}

async function evidenceLines(pack: Pack, events: readonly PackEvent[]): Promise<string[]> {
  const picked = events.filter((e) => e.type === 'evidence').slice(-20)
  if (!picked.length) return ['- No evidence attached yet.']
  return Promise.all(
    picked.map(async (e) => {
      const path = str(e['path'])
      const preview = path ? await evidencePreview(pack, path) : str(e['content'])
      return [
        `- ${e.ts}: ${str(e['kind']) || 'note'}`,
        str(e['command']) ? `  - command: ${str(e['command'])}` : null,
        e['exitCode'] !== undefined && e['exitCode'] !== null ? `  - exit code: ${String(e['exitCode'])}` : null,
        path ? `  - path: ${path}` : null,
        preview ? `  - preview: ${preview}` : null,
      ]
        .filter((l) => l !== null)
        .join('\n')
    }),
  )
}

async function evidencePreview(pack: Pack, path: string): Promise<string> {
  try {
    const { abs } = await resolveRegularFileWithin(pack.path(), path, 'evidence preview path')
    return (await readHead(abs, 4096)).slice(0, 360).replace(/\s+/g, ' ').trim()
  } catch {
    return '[unsafe or unreadable evidence path omitted]'
  }
}

function timeline(events: readonly PackEvent[]): string[] {
  if (!events.length) return ['- No events yet.']
  const counts = new Map<string, number>()
  for (const e of events) counts.set(e.type, (counts.get(e.type) ?? 0) + 1)
  const countText = [...counts.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([t, n]) => `${t}: ${n}`)
    .join(', ')
  const checkpoints = events.filter((e) => e.type === 'checkpoint').slice(-3)
  const recent = events.filter((e) => e.type !== 'source' && e.type !== 'checkpoint').slice(-8)
  const sourcePaths: string[] = []
  for (const e of [...events].reverse()) {
    const p = e.type === 'source' ? str(e['path']) : ''
    if (p && !sourcePaths.includes(p)) sourcePaths.push(p)
    if (sourcePaths.length >= 8) break
  }
  return [
    `- Total events: ${events.length} (${countText}).`,
    '- Source details are in Source Cache; evidence details are in Evidence.',
    sourcePaths.length ? `- Recent source records: ${sourcePaths.reverse().join(', ')}` : null,
    checkpoints.length ? 'Recent checkpoints:' : null,
    ...checkpoints.map((e) => `  - ${e.ts}: ${oneLine(label(e) || 'No label', 140)}`),
    recent.length ? 'Recent non-source events:' : null,
    ...recent.map((e) => `  - ${e.ts} [${e.type}] ${oneLine(label(e) || 'No label', 140)}`),
    '- Full chronology: `agentpack replay`.',
  ].filter((l): l is string => l !== null)
}
