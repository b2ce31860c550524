// The `agentpack.task-bundle` format (schema 1), as Agentpack writes and validates it: one
// canonical JSON object whose `bundleId` is `sha256:` of the stable-key JSON of everything but
// `bundleId` and `exportedAt`; each evidence item carries its own `contentDigest`.
// A bundle is untrusted input: size first, then shape, digest, ids, paths and counts.
import { refuse } from './errors.ts'
import { TASK_ID } from './passports.ts'
import { sha256 } from './sources.ts'
import { RISKS, TASK_STATUSES, VERIFICATION_STATUSES } from './types.ts'
import type { TaskRisk, TaskStatus, TaskVerification } from './types.ts'

export const BUNDLE_KIND = 'agentpack.task-bundle'
export const BUNDLE_SCHEMA = 1
export const MAX_BUNDLE_BYTES = 2 * 1024 * 1024
export const MAX_SOURCES = 100
export const MAX_EVIDENCE = 50
export const MAX_EVIDENCE_CONTENT_BYTES = 256 * 1024
/** Agentpack's validator accepts only this producer name; ag-mcp says who it is in `version`. */
export const PRODUCER_NAME = 'agentpack-cli'
export const EVENT_ID = /^evt_[A-Za-z0-9][A-Za-z0-9._-]*$/

export interface BundleOrigin {
  projectName: string
  repository?: string
  branch: string | null
  head: string | null
}

export interface BundleTask {
  id: string
  title: string
  objective: string
  constraints: string[]
  writeScope: string[]
  risk: TaskRisk
  tags: string[]
  nextActions: string[]
  originalStatus: TaskStatus
  originVerification: TaskVerification
}

export interface BundleSource {
  path: string
  hash: string
  size: number
  recordedAt: string
  summary: string
  snippet: string
}

export interface BundleEvidence {
  originId: string
  kind: string
  command: string
  exitCode: number | null
  content: string
  contentDigest: string
}

export interface TaskBundle {
  kind: typeof BUNDLE_KIND
  schemaVersion: 1
  bundleId: string
  exportedAt: string
  producer: { name: string; version: string }
  origin: BundleOrigin
  task: BundleTask
  handoffMarkdown: string
  sources: BundleSource[]
  evidence: BundleEvidence[]
}

export type BundlePayload = Omit<TaskBundle, 'bundleId' | 'exportedAt'>

/** JSON with object keys sorted (Agentpack sorts with localeCompare; so must the digest). */
export function stableStringify(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value)
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(',')}]`
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => a.localeCompare(b))
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableStringify(v)}`).join(',')}}`
}

export function digestPayload(payload: BundlePayload): string {
  return `sha256:${sha256(stableStringify(payload))}`
}

export function evidenceDigest(content: string): string {
  return `sha256:${sha256(content)}`
}

/** Parses and validates bundle text; returns the bundle and its warnings, or refuses. */
export function parseBundle(text: string): { bundle: TaskBundle; warnings: string[] } {
  if (Buffer.byteLength(text, 'utf8') > MAX_BUNDLE_BYTES) throw invalid(`the bundle is over ${MAX_BUNDLE_BYTES} bytes`)
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    throw invalid('the bundle is not valid JSON')
  }
  const bundle = checkShape(parsed)
  const { bundleId: _id, exportedAt: _at, ...payload } = bundle
  const digest = digestPayload(payload)
  if (digest !== bundle.bundleId)
    throw invalid(`digest mismatch: the content hashes to ${digest}, the bundle claims ${bundle.bundleId}`)
  return { bundle, warnings: checkRecords(bundle) }
}

function invalid(why: string) {
  return refuse('invalid', `invalid task bundle: ${why}; nothing was read into the pack`)
}

function checkShape(v: unknown): TaskBundle {
  if (!isRecord(v)) throw invalid('not a JSON object')
  if (v['kind'] !== BUNDLE_KIND) throw invalid(`kind must be "${BUNDLE_KIND}"`)
  if (v['schemaVersion'] !== BUNDLE_SCHEMA) throw invalid(`unsupported schemaVersion ${String(v['schemaVersion'])}`)
  if (typeof v['bundleId'] !== 'string' || !/^sha256:[0-9a-f]{64}$/.test(v['bundleId']))
    throw invalid('bundleId must be sha256:<64 hex>')
  if (typeof v['exportedAt'] !== 'string') throw invalid('exportedAt is missing')
  const producer = v['producer']
  if (!isRecord(producer) || producer['name'] !== PRODUCER_NAME || typeof producer['version'] !== 'string')
    throw invalid('producer is invalid')
  const o = v['origin']
  if (
    !isRecord(o) ||
    typeof o['projectName'] !== 'string' ||
    !(o['repository'] === undefined || typeof o['repository'] === 'string') ||
    !nullableString(o['branch']) ||
    !nullableString(o['head'])
  )
    throw invalid('origin is invalid')
  const t = v['task']
  const ver = isRecord(t) ? t['originVerification'] : undefined
  if (
    !isRecord(t) ||
    typeof t['id'] !== 'string' ||
    typeof t['title'] !== 'string' ||
    typeof t['objective'] !== 'string' ||
    !strings(t['constraints']) ||
    !strings(t['writeScope']) ||
    !RISKS.includes(t['risk'] as never) ||
    !strings(t['tags']) ||
    !strings(t['nextActions']) ||
    !TASK_STATUSES.includes(t['originalStatus'] as never) ||
    !isRecord(ver) ||
    !VERIFICATION_STATUSES.includes(ver['status'] as never) ||
    !strings(ver['evidence']) ||
    typeof ver['summary'] !== 'string'
  )
    throw invalid('task is invalid')
  if (typeof v['handoffMarkdown'] !== 'string') throw invalid('handoffMarkdown must be a string')
  const sources = v['sources']
  const evidence = v['evidence']
  if (!Array.isArray(sources) || sources.length > MAX_SOURCES)
    throw invalid(`sources must be an array of at most ${MAX_SOURCES}`)
  if (!Array.isArray(evidence) || evidence.length > MAX_EVIDENCE)
    throw invalid(`evidence must be an array of at most ${MAX_EVIDENCE}`)
  for (const s of sources)
    if (
      !isRecord(s) ||
      typeof s['path'] !== 'string' ||
      typeof s['hash'] !== 'string' ||
      typeof s['size'] !== 'number' ||
      typeof s['recordedAt'] !== 'string' ||
      typeof s['summary'] !== 'string' ||
      typeof s['snippet'] !== 'string'
    )
      throw invalid('a source entry is invalid')
  for (const e of evidence)
    if (
      !isRecord(e) ||
      typeof e['originId'] !== 'string' ||
      typeof e['kind'] !== 'string' ||
      typeof e['command'] !== 'string' ||
      !(typeof e['exitCode'] === 'number' || e['exitCode'] === null) ||
      typeof e['content'] !== 'string' ||
      typeof e['contentDigest'] !== 'string'
    )
      throw invalid('an evidence entry is invalid')
  return v as unknown as TaskBundle
}

function checkRecords(b: TaskBundle): string[] {
  if (!TASK_ID.test(b.task.id)) throw invalid(`task id "${b.task.id}" is not a task id`)
  const paths = new Set<string>()
  for (const s of b.sources) {
    checkRelativePath(s.path, 'source')
    if (paths.has(s.path)) throw invalid(`source path ${s.path} appears twice`)
    paths.add(s.path)
    if (!/^[0-9a-f]{64}$/.test(s.hash) || !Number.isSafeInteger(s.size) || s.size < 0)
      throw invalid(`source ${s.path} has bad metadata`)
  }
  for (const w of b.task.writeScope) checkRelativePath(w, 'write scope', true)
  const ids = new Set<string>()
  for (const e of b.evidence) {
    if (!EVENT_ID.test(e.originId)) throw invalid(`evidence id "${e.originId}" is not an event id`)
    if (ids.has(e.originId)) throw invalid(`evidence id ${e.originId} appears twice`)
    ids.add(e.originId)
    if (e.contentDigest !== evidenceDigest(e.content))
      throw invalid(`evidence ${e.originId} does not match its contentDigest`)
    if (Buffer.byteLength(e.content, 'utf8') > MAX_EVIDENCE_CONTENT_BYTES)
      throw invalid(`evidence ${e.originId} is over ${MAX_EVIDENCE_CONTENT_BYTES} bytes`)
    if (e.kind === 'json') {
      try {
        JSON.parse(e.content)
      } catch {
        throw invalid(`evidence ${e.originId} is kind json but does not parse`)
      }
    }
  }
  return b.task.originVerification.evidence.some((id) => !ids.has(id))
    ? ['verification references evidence not included in this bundle']
    : []
}

/** Relative POSIX paths only: no backslash, drive letter, leading `/`, `..` or `.` segment. */
export function checkRelativePath(p: string, label: string, allowDot = false): void {
  if (allowDot && p === '.') return
  const segments = p.split('/')
  if (
    !p ||
    p.includes('\\') ||
    p.includes('\0') ||
    /^[A-Za-z]:/.test(p) ||
    p.startsWith('/') ||
    segments.some((s) => s === '..' || s === '.' || s === '')
  )
    throw invalid(
      `${label} path "${p}" must be a plain relative path (no "..", ".", "/" prefix, backslash or drive letter)`,
    )
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}
function strings(v: unknown): v is string[] {
  return Array.isArray(v) && v.every((x) => typeof x === 'string')
}
function nullableString(v: unknown): boolean {
  return v === null || typeof v === 'string'
}
