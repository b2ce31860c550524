// The repository ledger (`events.jsonl`): decisions, dead ends, evidence, source conclusions,
// and the timeline read back by replay. Everything stored is redacted first.
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { refuse } from './errors.ts'
import { createId, ensureDir, writeNew } from './pack-files.ts'
import { fileRecord, resolveRegularFileWithin, sourceStates } from './sources.ts'
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

export interface SourceStatus {
  path: string
  status: SourceState
  summary: string
  recordedHash: string
  recordedAt: string
}

export async function sourceStatuses(pack: Pack, only: readonly SourceState[] = []): Promise<SourceStatus[]> {
  const { sources } = await pack.sources()
  const states = await sourceStates(pack.root, sources)
  const all = sources.map((s, i) => ({
    path: s.path,
    status: states[i] as SourceState,
    summary: s.summary ?? '',
    recordedHash: s.hash,
    recordedAt: s.recordedAt,
  }))
  return only.length === 0 ? all : all.filter((s) => only.includes(s.status))
}

export function formatSourceStatuses(
  statuses: readonly SourceStatus[],
  total: number,
  only: readonly SourceState[],
): string {
  if (total === 0) return 'No source records yet. Use record_source after inspecting an important file.'
  if (statuses.length === 0) return `No ${only.join(' or ')} source records (of ${total}).`
  return [
    'Source status tracks recorded source conclusions, not the whole work tree.',
    ...statuses.map((s) =>
      [
        `${s.status.toUpperCase()} ${s.path}`,
        `  summary: ${s.summary || 'No summary recorded.'}`,
        `  recorded: ${s.recordedAt}`,
        `  guidance: ${s.status === 'unchanged' ? 'do not re-open unless needed' : 're-open before relying on prior conclusions'}`,
      ].join('\n'),
    ),
  ].join('\n\n')
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
