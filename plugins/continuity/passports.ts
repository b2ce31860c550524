// Task Passport files: `tasks/current` (the pointer), `tasks/<id>/passport.json` and
// `tasks/<id>/events.jsonl` (lifecycle events), read and validated as Agentpack does (a
// schemaVersion other than 1 is a hard failure: a newer pack is never half-understood).
import { readdir, stat } from 'node:fs/promises'
import { isAbsolute, relative, resolve } from 'node:path'
import { refuse } from './errors.ts'
import {
  appendLines,
  createId,
  ensureDir,
  isMissing,
  readJson,
  readText,
  SCHEMA_VERSION,
  writeFilePrivate,
  writeJson,
} from './pack-files.ts'
import type { Pack } from './store.ts'
import type { PackEvent, TaskPassport } from './types.ts'
import { RISKS, TASK_STATUSES, VERIFICATION_STATUSES } from './types.ts'

export const TASK_ID = /^task_[A-Za-z0-9][A-Za-z0-9._-]*$/

export function checkTaskId(id: string): void {
  if (!TASK_ID.test(id)) throw refuse('invalid', `Invalid task id: ${id || '(empty)'}`)
}

export async function readCurrentTaskId(pack: Pack): Promise<string | null> {
  const text = await readText(pack.path('tasks', 'current'))
  return text?.trim() || null
}

export async function writeCurrentTaskId(pack: Pack, id: string): Promise<void> {
  await ensureDir(pack.path('tasks'))
  await writeFilePrivate(pack.path('tasks', 'current'), `${id}\n`)
}

export async function passportExists(pack: Pack, id: string): Promise<boolean> {
  return stat(pack.path('tasks', id, 'passport.json')).then(
    (s) => s.isFile(),
    () => false,
  )
}

export async function readPassport(pack: Pack, id: string): Promise<TaskPassport> {
  checkTaskId(id)
  const value = await readJson<unknown>(pack.path('tasks', id, 'passport.json'), null).catch(() => {
    throw refuse('invalid', `task passport ${id} is not valid JSON`)
  })
  if (!value) throw refuse('not_found', `Task passport not found: ${id}`)
  return validatePassport(value, id)
}

export async function currentPassport(pack: Pack): Promise<TaskPassport | null> {
  const id = await readCurrentTaskId(pack)
  return id ? readPassport(pack, id) : null
}

export async function listTaskIds(pack: Pack): Promise<string[]> {
  const entries = await readdir(pack.path('tasks'), { withFileTypes: true }).catch((e: unknown) =>
    isMissing(e) ? [] : Promise.reject(e),
  )
  const ids: string[] = []
  await Promise.all(
    entries
      .filter((e) => e.isDirectory())
      .map(async (e) => {
        if (await passportExists(pack, e.name)) ids.push(e.name)
      }),
  )
  return ids.sort()
}

/** Writes the passport (and the task folder Agentpack expects); caller holds the lock. */
export async function writePassport(pack: Pack, p: TaskPassport): Promise<void> {
  const dir = pack.path('tasks', p.id)
  for (const sub of ['checkpoints', 'evidence', 'exports']) await ensureDir(pack.path('tasks', p.id, sub))
  if ((await readText(pack.path('tasks', p.id, 'events.jsonl'))) === undefined)
    await writeFilePrivate(pack.path('tasks', p.id, 'events.jsonl'), '')
  await writeJson(`${dir}/passport.json`, p)
}

export async function appendTaskEvent(
  pack: Pack,
  id: string,
  type: string,
  payload: Record<string, unknown>,
): Promise<PackEvent> {
  const event: PackEvent = { id: createId('evt'), ts: new Date().toISOString(), type, ...payload }
  await appendLines(pack.path('tasks', id, 'events.jsonl'), [JSON.stringify(event)])
  return event
}

/** The lifecycle event payload Agentpack writes for every passport patch. */
export function lifecyclePayload(p: TaskPassport): Record<string, unknown> {
  return {
    status: p.status,
    objective: p.objective,
    writeScope: p.writeScope,
    nextActions: p.nextActions,
    risk: p.risk,
    reason: p.blockedReason ?? '',
    verificationStatus: p.verification.status,
    evidence: p.verification.evidence,
  }
}

export function validatePassport(value: unknown, id: string): TaskPassport {
  const bad = (why: string) => refuse('invalid', `task passport ${id} is invalid: ${why}`)
  if (!isRecord(value)) throw bad('not a JSON object')
  if (value['schemaVersion'] !== SCHEMA_VERSION)
    throw bad(`schemaVersion ${String(value['schemaVersion'])} (this reader knows ${SCHEMA_VERSION})`)
  if (value['id'] !== id) throw bad(`its id field says ${String(value['id'])}`)
  const v = value['verification']
  const checks: [boolean, string][] = [
    [typeof value['title'] === 'string', 'title'],
    [TASK_STATUSES.includes(value['status'] as never), 'status'],
    [typeof value['createdAt'] === 'string' && typeof value['updatedAt'] === 'string', 'createdAt/updatedAt'],
    [nullableString(value['closedAt']), 'closedAt'],
    [typeof value['objective'] === 'string', 'objective'],
    [strings(value['constraints']), 'constraints'],
    [
      nullableString(value['branch']) && nullableString(value['baseHead']) && nullableString(value['currentHead']),
      'branch/heads',
    ],
    [typeof value['worktree'] === 'string', 'worktree'],
    [strings(value['writeScope']), 'writeScope'],
    [RISKS.includes(value['risk'] as never), 'risk'],
    [
      isRecord(v) &&
        VERIFICATION_STATUSES.includes(v['status'] as never) &&
        strings(v['evidence']) &&
        typeof v['summary'] === 'string',
      'verification',
    ],
    [strings(value['nextActions']), 'nextActions'],
    [strings(value['tags']), 'tags'],
    [value['blockedReason'] === undefined || typeof value['blockedReason'] === 'string', 'blockedReason'],
    [value['links'] === undefined || isRecord(value['links']), 'links'],
  ]
  for (const [ok, field] of checks) if (!ok) throw bad(field)
  // A legacy `roles` field is dropped (as Agentpack does) so it never propagates on write.
  const { roles: _roles, ...rest } = value
  return rest as unknown as TaskPassport
}

/** Repo-relative write scope entries; anything resolving outside the root is refused. */
export function normalizeWriteScope(root: string, scope: readonly string[]): string[] {
  return unique(
    scope.map((item) => {
      const abs = resolve(root, item)
      const rel = relative(root, abs)
      if (rel.startsWith('..') || isAbsolute(rel))
        throw refuse('invalid', `Refusing write scope outside project root: ${item}`)
      return rel.split('\\').join('/') || '.'
    }),
  )
}

export function normalizeScopePath(p: string): string {
  let r = p.trim()
  while (r.startsWith('./')) r = r.slice(2)
  return r.replace(/\/+$/, '') || '.'
}

export function isInWriteScope(file: string, scope: readonly string[]): boolean {
  return scope.some((raw) => {
    const e = normalizeScopePath(raw)
    return e === '.' || file === e || file.startsWith(`${e}/`)
  })
}

export function scopeOverlaps(scope: readonly string[], filters: readonly string[]): boolean {
  return scope.some((entry) =>
    filters.some((filter) => {
      const s = normalizeScopePath(entry)
      const t = normalizeScopePath(filter)
      return s === '.' || t === '.' || s === t || t.startsWith(`${s}/`) || s.startsWith(`${t}/`)
    }),
  )
}

export function unique(values: readonly string[]): string[] {
  return [...new Set(values.map((v) => v.trim()).filter(Boolean))]
}

export function taskIdFor(title: string): string {
  const slug =
    title
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-+|-+$/g, '')
      .slice(0, 40) || 'task'
  return `${createId('task')}_${slug}`
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}
function strings(v: unknown): boolean {
  return Array.isArray(v) && v.every((x) => typeof x === 'string')
}
function nullableString(v: unknown): boolean {
  return v === null || typeof v === 'string'
}
