// The repository ledger (`events.jsonl`): decisions, dead ends, evidence, source conclusions,
// and the timeline read back by replay. Everything stored is redacted first.
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { refuse } from './errors.ts'
import { createId, ensureDir, writeNew } from './pack-files.ts'
import { fileRecord, resolveRegularFileWithin, sourceHashes, stateOf } from './sources.ts'
import type { SourceState } from './sources.ts'
import type { Pack } from './store.ts'
import type { PackEvent, SourceRecord } from './types.ts'

export async function recordDecision(
  pack: Pack,
  o: { text: string; files?: string[] | undefined; evidence?: string[] | undefined },
): Promise<PackEvent> {
  const r = await pack.redactor()
  const text = r.redact(o.text.trim())
  if (!text) throw refuse('invalid', 'record_decision needs non-empty text: the decision and why')
  return pack.write(() => pack.appendEvent('decision', { text, files: o.files ?? [], evidence: o.evidence ?? [] }))
}

export async function recordDeadEnd(
  pack: Pack,
  o: { text: string; reason?: string | undefined; files?: string[] | undefined },
): Promise<PackEvent> {
  const r = await pack.redactor()
  const text = r.redact(o.text.trim())
  if (!text) throw refuse('invalid', 'record_dead_end needs non-empty text: the approach that failed')
  return pack.write(() =>
    pack.appendEvent('dead-end', { text, reason: r.redact(o.reason ?? ''), files: o.files ?? [] }),
  )
}

export interface EvidenceOptions {
  kind?: string | undefined
  content?: string | undefined
  path?: string | undefined
  command?: string | undefined
  exitCode?: number | undefined
}

export const MAX_EVIDENCE_BYTES = 256 * 1024

export async function attachEvidence(pack: Pack, o: EvidenceOptions): Promise<PackEvent> {
  const kind = o.kind?.trim() || 'note'
  let body: string
  if (o.path) {
    const { abs } = await resolveRegularFileWithin(pack.root, o.path, 'evidence file')
    const buf = await readFile(abs)
    if (buf.length > MAX_EVIDENCE_BYTES)
      throw refuse(
        'invalid',
        `evidence file "${o.path}" is ${buf.length} bytes; at most ${MAX_EVIDENCE_BYTES} (bundles carry no more)`,
      )
    body = buf.toString('utf8')
  } else body = o.content ?? ''
  if (!body.trim()) throw refuse('invalid', 'attach_evidence needs content or path with something in it')
  if (kind === 'json') {
    try {
      JSON.parse(body)
    } catch {
      throw refuse('invalid', 'attach_evidence kind "json" needs content that parses as JSON')
    }
  }
  const r = await pack.redactor()
  const content = r.redact(body)
  const command = r.redact(o.command ?? '')
  return pack.write(async () => {
    const file = join('evidence', `${createId('ev')}.${kind === 'json' ? 'json' : 'txt'}`)
    await ensureDir(pack.path('evidence'))
    await writeNew(pack.path(file), content)
    return pack.appendEvent('evidence', {
      kind,
      path: file,
      command,
      exitCode: o.exitCode !== undefined && Number.isFinite(o.exitCode) ? o.exitCode : null,
    })
  })
}

export async function recordSource(
  pack: Pack,
  o: { path: string; summary?: string | undefined; snippet?: string | undefined },
): Promise<SourceRecord> {
  const r = await pack.redactor()
  const summary = r.redact(o.summary?.trim() || 'Reviewed source.')
  const snippet = r.redact(o.snippet ?? '')
  return pack.write(async () => {
    const record = await fileRecord(pack.root, o.path, { summary, snippet })
    const file = await pack.sources()
    const i = file.sources.findIndex((s) => s.path === record.path)
    if (i >= 0) file.sources[i] = record
    else file.sources.push(record)
    await pack.writeSources(file)
    await pack.appendEvent('source', { path: record.path, hash: record.hash, summary: record.summary })
    return record
  })
}

/** One record's status, in Agentpack's fields and order (`source_status` with `json` prints these). */
export interface SourceStatus {
  path: string
  status: SourceState
  summary: string
  recordedHash: string
  currentHash: string | null
  recordedAt: string
  /** The file's `git status --short` state (modified, deleted, untracked, …), null when clean. */
  gitStatus: string | null
}

export async function sourceStatuses(pack: Pack, only: readonly SourceState[] = []): Promise<SourceStatus[]> {
  const { sources } = await pack.sources()
  const [hashes, git] = await Promise.all([sourceHashes(pack.root, sources), gitStatuses(pack)])
  const all = sources.map((s, i) => {
    const currentHash = hashes[i] ?? null
    return {
      path: s.path,
      status: stateOf(s, currentHash),
      summary: s.summary ?? '',
      recordedHash: s.hash,
      currentHash,
      recordedAt: s.recordedAt,
      gitStatus: git.get(s.path) ?? null,
    }
  })
  return only.length === 0 ? all : all.filter((s) => only.includes(s.status))
}

/** Each changed path's state from `git status --short`, labelled as Agentpack labels them. */
export async function gitStatuses(pack: Pack): Promise<Map<string, string>> {
  const out = new Map<string, string>()
  if (!(await pack.git.refs()).available) return out
  for (const line of (await pack.git.status()).lines) {
    if (line.length < 4) continue
    const code = line.slice(0, 2)
    const raw = line.slice(3).trim()
    out.set(raw.includes(' -> ') ? (raw.split(' -> ').pop() ?? raw) : raw, gitLabel(code))
  }
  return out
}

function gitLabel(code: string): string {
  if (code.includes('?')) return 'untracked'
  if (code.includes('D')) return 'deleted'
  if (code.includes('R')) return 'renamed'
  if (code.includes('A')) return 'added'
  if (code.includes('M')) return 'modified'
  return 'changed'
}

const HASH_STATUS: Record<SourceState, string> = {
  unchanged: 'matches recorded hash',
  changed: 'differs from recorded hash',
  missing: 'file missing',
}
const MEANING: Record<SourceState, string> = {
  unchanged: 'recorded summary is valid for the current file content',
  changed: 'recorded summary may be stale because file content changed',
  missing: 'recorded file is missing; prior summary may only be useful as history',
}

/** Agentpack's source status text: per record its hash, git and meaning lines; then the git changes no record covers. */
export function formatSourceStatuses(
  statuses: readonly SourceStatus[],
  all: readonly SourceStatus[],
  only: readonly SourceState[],
  git: ReadonlyMap<string, string>,
): string {
  const unrecorded = [...git].filter(([path]) => !all.some((s) => s.path === path)).map(([p, st]) => `- ${st} ${p}`)
  if (all.length === 0) {
    const head =
      'No source records yet. Use `agentpack source add <file> --summary <text>` after inspecting important files.'
    return git.size ? [head, '', 'Git changes not recorded as Agentpack sources:', ...unrecorded].join('\n') : head
  }
  if (statuses.length === 0) return `No ${only.length ? only.join(' or ') : 'matching'} source records.`
  const blocks = [
    'Agentpack source status tracks recorded source conclusions, not the full git working tree.',
    ...statuses.map((s) =>
      [
        `${s.status.toUpperCase()} ${s.path}`,
        `  summary: ${s.summary || 'No summary recorded.'}`,
        `  recorded: ${s.recordedAt}`,
        `  hash: ${HASH_STATUS[s.status]}`,
        `  git: ${s.gitStatus || 'clean'}`,
        `  meaning: ${MEANING[s.status]}`,
        `  guidance: ${s.status === 'unchanged' ? 'do not re-open unless needed' : 're-open before relying on prior conclusions'}`,
      ].join('\n'),
    ),
  ]
  if (unrecorded.length) blocks.push(['Git changes not recorded as Agentpack sources:', ...unrecorded].join('\n'))
  return blocks.join('\n\n')
}

export function label(e: PackEvent): string {
  for (const k of ['text', 'summary', 'kind', 'path', 'checkpointId']) {
    const v = e[k]
    if (typeof v === 'string' && v) return v
  }
  return ''
}

export async function replay(pack: Pack, limit = 30): Promise<{ text: string; events: PackEvent[] }> {
  const events = (await pack.events()).slice(-Math.max(1, Math.trunc(limit)))
  if (events.length === 0) return { text: 'No Agentpack events yet.', events }
  return { text: events.map((e) => `${e.ts} [${e.type}] ${label(e)}`.trim()).join('\n'), events }
}
