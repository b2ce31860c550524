// The Task Passport lifecycle, with Agentpack's rules (docs/TASK-PASSPORT.md there):
//
//   none → active                  task_start (refused while the current task is active,
//                                  blocked or verifying)
//   active|blocked|verifying → parked               task_park
//   parked → active | verifying    task_switch (verifying when its verdict is final)
//   open → blocked                 CLI `task block`
//   active|blocked|verifying → verifying | active   task_update_verification: a final verdict
//                                  (passed/failed/accepted) → verifying, pending/unknown → active;
//                                  refused while parked; identical repeats are no-ops
//   open → completed               task_finalize (verdict final; `accepted` with next actions
//                                  left needs force) · CLI `task close`
//   active|parked|blocked → abandoned   CLI `task abandon`
//
// Every write runs under the pack lock, re-reads the passport inside it, and appends a
// lifecycle event to tasks/<id>/events.jsonl.
import { refuse } from './errors.ts'
import {
  appendTaskEvent,
  currentPassport,
  lifecyclePayload,
  normalizeWriteScope,
  readCurrentTaskId,
  readPassport,
  taskIdFor,
  unique,
  writeCurrentTaskId,
  writePassport,
} from './passports.ts'
import { isInWriteScope } from './passports.ts'
import { SCHEMA_VERSION } from './pack-files.ts'
import type { Pack } from './store.ts'
import type { PassportLinks, TaskPassport, TaskRisk, TaskStatus, VerificationStatus } from './types.ts'
import { isClosed, isFinalVerdict, VERIFICATION_STATUSES } from './types.ts'

export interface StartOptions {
  title: string
  objective?: string | undefined
  constraints?: string[] | undefined
  writeScope?: string[] | undefined
  nextActions?: string[] | undefined
  tags?: string[] | undefined
  risk?: TaskRisk | undefined
  links?: PassportLinks | undefined
}

export interface UpdateOptions {
  objective?: string | undefined
  constraints?: string[] | undefined
  replaceConstraints?: boolean | undefined
  writeScope?: string[] | undefined
  nextActions?: string[] | undefined
  clearNextActions?: boolean | undefined
  tags?: string[] | undefined
  risk?: TaskRisk | undefined
  links?: PassportLinks | undefined
}

export interface VerifyOptions {
  status?: VerificationStatus | undefined
  evidence?: string[] | undefined
  summary?: string | undefined
}

export interface FinalizeOptions extends VerifyOptions {
  force?: boolean | undefined
}

// Refusals are worded as Agentpack words them: its clients and scripts match these texts.
const NO_CURRENT = 'No current task. Run `agentpack task start <title>` first.'

export async function startTask(pack: Pack, o: StartOptions): Promise<TaskPassport> {
  const r = await pack.redactor()
  const title = r.redact(o.title.trim())
  if (!title) throw refuse('invalid', 'task start requires a title')
  const writeScope = normalizeWriteScope(pack.root, o.writeScope ?? [])
  return pack.write(async () => {
    const current = await currentPassport(pack).catch(() => null)
    if (current && !isClosed(current.status) && current.status !== 'parked')
      throw refuse(
        'conflict',
        `Current task ${current.id} is ${current.status}; park or close it before starting a new task.`,
      )
    const [refs, head] = await Promise.all([pack.git.refs(), pack.git.short()])
    const now = new Date().toISOString()
    const passport: TaskPassport = {
      schemaVersion: SCHEMA_VERSION,
      id: taskIdFor(title),
      title,
      status: 'active',
      createdAt: now,
      updatedAt: now,
      closedAt: null,
      objective: r.redact(o.objective?.trim() ?? '') || title,
      constraints: unique((o.constraints ?? []).map(r.redact)),
      branch: refs.branch,
      baseHead: head,
      currentHead: head,
      worktree: pack.root,
      writeScope,
      risk: o.risk ?? 'unknown',
      verification: { status: 'unknown', evidence: [], summary: '' },
      nextActions: unique((o.nextActions ?? []).map(r.redact)),
      tags: unique(o.tags ?? []),
      ...(hasLinks(o.links) ? { links: cleanLinks(o.links) } : {}),
    }
    await writePassport(pack, passport)
    await writeCurrentTaskId(pack, passport.id)
    await appendTaskEvent(pack, passport.id, 'task-start', {
      title: passport.title,
      status: passport.status,
      writeScope: passport.writeScope,
    })
    return passport
  })
}

export async function switchTask(
  pack: Pack,
  id: string,
  o: { parkCurrent?: boolean | undefined } = {},
): Promise<TaskPassport> {
  return pack.write(async () => {
    const target = await readPassport(pack, id)
    if (isClosed(target.status)) throw refuse('conflict', `Cannot switch to closed task ${id}`)
    const currentId = await readCurrentTaskId(pack)
    if (currentId && currentId !== id) {
      const current = await readPassport(pack, currentId)
      if (!isClosed(current.status) && current.status !== 'parked') {
        if (!o.parkCurrent)
          throw refuse(
            'conflict',
            `Cannot switch tasks while current task ${currentId} is ${current.status}; park or finalize it first.`,
          )
        await patch(pack, current, { status: 'parked' }, 'task-park')
      }
    }
    const previousStatus = target.status
    let passport = target
    if (previousStatus === 'parked') {
      passport = {
        ...target,
        // A parked task can wait on an outside outcome after a final verdict: it comes back
        // frozen (verifying) until verification is explicitly returned to pending.
        status: isFinalVerdict(target.verification.status) ? 'verifying' : 'active',
        currentHead: await pack.git.short(),
        updatedAt: new Date().toISOString(),
      }
      await writePassport(pack, passport)
    }
    await writeCurrentTaskId(pack, passport.id)
    await appendTaskEvent(pack, passport.id, 'task-switch', { previousStatus, status: passport.status })
    return passport
  })
}

export function parkTask(pack: Pack): Promise<TaskPassport> {
  return patchCurrent(pack, 'task-park', () => ({ status: 'parked' }))
}

/** CLI only, as in Agentpack. */
export async function blockTask(pack: Pack, reason: string): Promise<TaskPassport> {
  const why = await pack.redact(reason.trim())
  return patchCurrent(pack, 'task-block', () => ({ status: 'blocked', blockedReason: why }))
}

/** CLI only: a task stopped for good. */
export function abandonTask(pack: Pack): Promise<TaskPassport> {
  return patchCurrent(pack, 'task-abandon', (p) => {
    if (p.status === 'verifying')
      throw refuse(
        'conflict',
        `task ${p.id} is verifying (a final verdict is recorded): finalize it, or set verification to pending before abandoning it`,
      )
    return { status: 'abandoned', closedAt: new Date().toISOString() }
  })
}

/** CLI only: closes without a verdict, deliberately a human act. */
export function closeTask(pack: Pack): Promise<TaskPassport> {
  return patchCurrent(pack, 'task-close', () => ({ status: 'completed', closedAt: new Date().toISOString() }))
}

export async function updateTask(pack: Pack, o: UpdateOptions): Promise<TaskPassport> {
  const r = await pack.redactor()
  const objective = r.redact(o.objective?.trim() ?? '')
  const constraints = unique((o.constraints ?? []).map(r.redact))
  const writeScope = normalizeWriteScope(pack.root, o.writeScope ?? [])
  const nextActions = unique((o.nextActions ?? []).map(r.redact))
  const tags = unique(o.tags ?? [])
  const links = hasLinks(o.links) ? cleanLinks(o.links) : undefined
  const something =
    objective ||
    o.risk !== undefined ||
    constraints.length ||
    o.replaceConstraints ||
    writeScope.length ||
    nextActions.length ||
    o.clearNextActions ||
    tags.length ||
    links
  if (!something) throw refuse('invalid', 'task update requires at least one non-empty field')
  return patchCurrent(pack, 'task-update', (p) => {
    const next: Partial<TaskPassport> = {}
    if (objective) next.objective = objective
    if (o.replaceConstraints) next.constraints = constraints
    else if (constraints.length) next.constraints = unique([...p.constraints, ...constraints])
    if (writeScope.length) next.writeScope = unique([...p.writeScope, ...writeScope])
    if (o.clearNextActions) next.nextActions = nextActions
    else if (nextActions.length) next.nextActions = unique([...p.nextActions, ...nextActions])
    if (tags.length) next.tags = unique([...p.tags, ...tags])
    if (o.risk) next.risk = o.risk
    if (links) next.links = { ...p.links, ...links }
    if (!changes(p, next)) throw refuse('conflict', 'task update did not change the current task')
    return next
  })
}

export interface VerifyResult {
  passport: TaskPassport
  changed: boolean
}

export async function updateVerification(pack: Pack, o: VerifyOptions): Promise<VerifyResult> {
  const summary = o.summary === undefined ? undefined : await pack.redact(o.summary.trim())
  const status = o.status ?? 'pending'
  if (!VERIFICATION_STATUSES.includes(status)) throw refuse('invalid', `Unknown verification status: ${status}`)
  return pack.write(async () => {
    const id = await readCurrentTaskId(pack)
    if (!id) throw refuse('conflict', NO_CURRENT)
    const existing = await readPassport(pack, id)
    if (isClosed(existing.status)) throw refuse('conflict', `Cannot update closed task ${id}`)
    if (existing.status === 'parked')
      throw refuse(
        'conflict',
        `Current task is parked; resume it first with \`agentpack task switch ${id}\` before updating verification.`,
      )
    const verification = {
      status,
      evidence: unique([...existing.verification.evidence, ...(o.evidence ?? [])]),
      summary: summary ?? existing.verification.summary,
    }
    const nextStatus: TaskStatus = isFinalVerdict(status) ? 'verifying' : 'active'
    if (
      existing.status === nextStatus &&
      existing.verification.status === verification.status &&
      existing.verification.summary === verification.summary &&
      sameList(existing.verification.evidence, verification.evidence)
    )
      return { passport: existing, changed: false }
    const passport: TaskPassport = {
      ...existing,
      status: nextStatus,
      verification,
      currentHead: await pack.git.short(),
      updatedAt: new Date().toISOString(),
    }
    // A verify-driven unblock resolves the block: its reason must not linger.
    if (existing.status === 'blocked') delete passport.blockedReason
    await writePassport(pack, passport)
    await appendTaskEvent(pack, passport.id, 'task-verify', lifecyclePayload(passport))
    return { passport, changed: true }
  })
}

export async function finalizeTask(pack: Pack, o: FinalizeOptions): Promise<TaskPassport> {
  const summary = o.summary === undefined ? undefined : await pack.redact(o.summary.trim())
  return patchCurrent(pack, 'task-finalize', (p) => {
    const verdict = o.status ?? p.verification.status
    if (!isFinalVerdict(verdict))
      throw refuse(
        'conflict',
        'task finalize requires verification status passed, failed, or accepted; run `agentpack task verify --status passed|failed|accepted` first or pass `--status`.',
      )
    if (verdict === 'accepted' && p.nextActions.length > 0 && !o.force)
      throw refuse(
        'conflict',
        'task finalize --status accepted refuses to close a task that still has next actions. Use `agentpack task park` for deferred work, clear or complete the next actions, or pass `--force` if this task is genuinely accepted as-is.',
      )
    return {
      status: 'completed',
      closedAt: new Date().toISOString(),
      verification: {
        status: verdict,
        evidence: unique([...p.verification.evidence, ...(o.evidence ?? [])]),
        summary: summary ?? p.verification.summary,
      },
    }
  })
}

/** Non-blocking hygiene notes at closure (never a gate). */
export async function finalizeAdvisories(pack: Pack, p: TaskPassport): Promise<string[]> {
  const out: string[] = []
  if (p.writeScope.length > 0) {
    const dirty = (await pack.git.dirtyFiles()).filter((f) => isInWriteScope(f, p.writeScope))
    if (dirty.length > 0) {
      const more = dirty.length > 5 ? ` (+${dirty.length - 5} more)` : ''
      out.push(
        `Uncommitted changes remain inside the task write scope: ${dirty.slice(0, 5).join(', ')}${more}. Commit them first, or park the task until they are committed.`,
      )
    }
  }
  if (p.nextActions.length > 0)
    out.push(
      `Closed with ${p.nextActions.length} remaining next action(s); they will read as historical. Update them with \`task update --clear-next-actions\` first when they are stale.`,
    )
  const checkpoints = await pack.listCheckpoints()
  const latest = checkpoints[checkpoints.length - 1] ?? ''
  if (latest < p.createdAt.replace(/[:.]/g, '-'))
    out.push('No repo checkpoint since this task started. Record durable findings with `checkpoint` before moving on.')
  return out
}

type Patch = Partial<TaskPassport>

async function patchCurrent(pack: Pack, eventType: string, make: (p: TaskPassport) => Patch): Promise<TaskPassport> {
  return pack.write(async () => {
    const id = await readCurrentTaskId(pack)
    if (!id) throw refuse('conflict', NO_CURRENT)
    const existing = await readPassport(pack, id)
    if (isClosed(existing.status)) throw refuse('conflict', `Cannot update closed task ${id}`)
    return patch(pack, existing, make(existing), eventType)
  })
}

async function patch(pack: Pack, existing: TaskPassport, next: Patch, eventType: string): Promise<TaskPassport> {
  const now = new Date().toISOString()
  const passport: TaskPassport = { ...existing, ...next, currentHead: await pack.git.short(), updatedAt: now }
  if (isClosed(passport.status)) passport.closedAt = passport.closedAt ?? now
  await writePassport(pack, passport)
  await appendTaskEvent(pack, passport.id, eventType, lifecyclePayload(passport))
  return passport
}

function changes(p: TaskPassport, next: Patch): boolean {
  return (
    (next.objective !== undefined && next.objective !== p.objective) ||
    (next.risk !== undefined && next.risk !== p.risk) ||
    (next.constraints !== undefined && !sameList(next.constraints, p.constraints)) ||
    (next.writeScope !== undefined && !sameList(next.writeScope, p.writeScope)) ||
    (next.nextActions !== undefined && !sameList(next.nextActions, p.nextActions)) ||
    (next.tags !== undefined && !sameList(next.tags, p.tags)) ||
    (next.links !== undefined && JSON.stringify(next.links) !== JSON.stringify(p.links ?? {}))
  )
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i])
}

function hasLinks(l: PassportLinks | undefined): l is PassportLinks {
  return !!l && Object.values(l).some((v) => typeof v === 'string' && v.trim() !== '')
}

function cleanLinks(l: PassportLinks): PassportLinks {
  const out: PassportLinks = {}
  if (l.agwpTask?.trim()) out.agwpTask = l.agwpTask.trim()
  if (l.agwpRun?.trim()) out.agwpRun = l.agwpRun.trim()
  if (l.agwpProposal?.trim()) out.agwpProposal = l.agwpProposal.trim()
  return out
}
