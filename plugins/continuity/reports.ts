// Read-only views of the passports: task_status (no source scan, no git process), task_list
// (with 1.7's filters), task_handoff and task_audit (both re-check the Source Cache).
import { realpath } from 'node:fs/promises'
import { resolve } from 'node:path'
import { sameHead } from './git.ts'
import { sourceStatuses } from './ledger.ts'
import type { SourceStatus } from './ledger.ts'
import { currentPassport, listTaskIds, readCurrentTaskId, readPassport, scopeOverlaps } from './passports.ts'
import { driftText } from './resume.ts'
import type { Pack } from './store.ts'
import type { TaskPassport, TaskStatus } from './types.ts'
import { isClosed, OPEN_STATUSES } from './types.ts'

const NO_PASSPORT =
  'No current task passport. Run `agentpack task start <title>` before relying on task-scoped handoff.'

export interface StatusView {
  text: string
  passport: TaskPassport | null
  drift: string | null
}

/** The quick view of one passport (the current one unless `id`); `full` adds every list. */
export async function taskStatus(
  pack: Pack,
  o: { id?: string | undefined; full?: boolean | undefined } = {},
): Promise<StatusView> {
  let p: TaskPassport | null
  try {
    p = o.id ? await readPassport(pack, o.id) : await currentPassport(pack)
  } catch (e) {
    if (o.id) throw e
    return {
      text: `Task status\n[warn] Cannot read current task passport: ${messageOf(e)}`,
      passport: null,
      drift: null,
    }
  }
  if (!p) return { text: `Task status\n[warn] ${NO_PASSPORT}`, passport: null, drift: null }
  const refs = await pack.git.refs()
  const drift = driftText(p, refs.branch, refs.oid, refs.available)
  const lines = [
    'Task status',
    `${p.title} [${p.status}]`,
    `ID: ${p.id}`,
    `Branch: ${p.branch ?? '(unknown)'}`,
    `Risk: ${p.risk}`,
    `Verification: ${p.verification.status}`,
    `Next: ${p.nextActions[0] ?? '(none)'}`,
    `Write scope: ${p.writeScope.length ? p.writeScope.join(', ') : '(none)'}`,
    `Drift: ${drift}`,
  ]
  if (o.full)
    lines.push(
      `Objective: ${p.objective || '(none)'}`,
      'Constraints:',
      ...list(p.constraints),
      'Next actions:',
      ...list(p.nextActions),
      `Verification summary: ${p.verification.summary || '(none)'}`,
      `Evidence: ${p.verification.evidence.join(', ') || '(none)'}`,
      `Tags: ${p.tags.join(', ') || '(none)'}`,
      ...(p.links
        ? [
            `Linked: ${Object.entries(p.links)
              .map(([k, v]) => `${k} ${v}`)
              .join(', ')}`,
          ]
        : []),
      ...(p.blockedReason ? [`Blocked: ${p.blockedReason}`] : []),
      `Created: ${p.createdAt}`,
      `Updated: ${p.updatedAt}`,
    )
  return { text: lines.join('\n'), passport: p, drift }
}

export interface ListItem {
  id: string
  title: string
  status: TaskStatus
  branch: string | null
  current: boolean
  updatedAt: string
  writeScope: string[]
}

export interface ListFilters {
  open?: boolean | undefined
  all?: boolean | undefined
  status?: TaskStatus[] | undefined
  scope?: string[] | undefined
  compact?: boolean | undefined
  limit?: number | undefined
}

export const DEFAULT_LIST_LIMIT = 50

export async function listTasks(
  pack: Pack,
  f: ListFilters = {},
): Promise<{ tasks: ListItem[]; total: number; warnings: string[]; text: string }> {
  const [ids, current] = await Promise.all([listTaskIds(pack), readCurrentTaskId(pack)])
  const warnings: string[] = []
  const passports: TaskPassport[] = []
  await Promise.all(
    ids.map(async (id) => {
      try {
        passports.push(await readPassport(pack, id))
      } catch (e) {
        warnings.push(`Unreadable task passport ${id}: ${messageOf(e)}`)
      }
    }),
  )
  let tasks: ListItem[] = passports
    .sort((a, b) => b.updatedAt.localeCompare(a.updatedAt) || a.id.localeCompare(b.id))
    .map((p) => ({
      id: p.id,
      title: p.title,
      status: p.status,
      branch: p.branch,
      current: p.id === current,
      updatedAt: p.updatedAt,
      writeScope: p.writeScope,
    }))
  if (!f.all) {
    const statuses = f.open ? OPEN_STATUSES : f.status
    if (statuses?.length) tasks = tasks.filter((t) => statuses.includes(t.status))
    if (f.scope?.length) tasks = tasks.filter((t) => scopeOverlaps(t.writeScope, f.scope ?? []))
  }
  const total = tasks.length
  if (!f.all) tasks = tasks.slice(0, f.limit ?? DEFAULT_LIST_LIMIT)
  const warn = warnings.map((w) => `[warn] ${w}`)
  const lines = tasks.map((t) =>
    f.compact
      ? `${t.current ? '*' : '-'} ${t.id} [${t.status}]`
      : [
          t.current ? '*' : '-',
          t.id,
          `[${t.status}]`,
          t.title,
          t.branch ? `(branch: ${t.branch})` : '',
          t.writeScope.length
            ? `(scope: ${t.writeScope.slice(0, 3).join(', ')}${t.writeScope.length > 3 ? ` +${t.writeScope.length - 3} more` : ''})`
            : '',
        ]
          .filter(Boolean)
          .join(' '),
  )
  const more = total > tasks.length ? [`(${total - tasks.length} more; pass limit or all: true)`] : []
  const text =
    ids.length === 0
      ? [...warn, 'No task passports yet. Call `task_start` first.'].join('\n')
      : tasks.length === 0
        ? [...warn, 'No task passports match these filters.'].join('\n')
        : [...warn, ...lines, ...more].join('\n')
  return { tasks, total, warnings, text }
}

export interface AuditIssue {
  level: 'ok' | 'warn'
  message: string
  category?: 'task' | 'metadata'
}

export interface Audit {
  passport: TaskPassport | null
  issues: AuditIssue[]
  text: string
}

export async function auditTask(pack: Pack): Promise<Audit> {
  let p: TaskPassport | null
  try {
    p = await currentPassport(pack)
  } catch (e) {
    const issues: AuditIssue[] = [{ level: 'warn', message: `Cannot read current task passport: ${messageOf(e)}` }]
    return { passport: null, issues, text: formatAudit(issues) }
  }
  if (!p) {
    const issues: AuditIssue[] = [{ level: 'warn', message: NO_PASSPORT }]
    return { passport: null, issues, text: formatAudit(issues) }
  }
  const issues: AuditIssue[] = [{ level: 'ok', message: `Current task: ${p.id} [${p.status}] ${p.title}` }]
  for (const message of await taskWarnings(pack, p)) issues.push({ level: 'warn', message })
  const stale = (await sourceStatuses(pack)).filter((s) => s.status !== 'unchanged')
  issues.push(
    stale.length
      ? {
          level: 'warn',
          category: 'metadata',
          message: `Source cache metadata has ${stale.length} changed or missing record(s): ${stale.map((s) => s.path).join(', ')}. Refresh only records whose durable conclusions changed.`,
        }
      : { level: 'ok', category: 'metadata', message: 'No changed or missing recorded source conclusions.' },
  )
  if (issues.filter((i) => i.category !== 'metadata').every((i) => i.level === 'ok'))
    issues.push({ level: 'ok', message: 'No action-required task warnings.' })
  return { passport: p, issues, text: formatAudit(issues) }
}

export interface Handoff {
  text: string
  passport: TaskPassport | null
}

/**
 * The compact handoff. `runNotes` gives the notes of the AGWP run a passport names, as lines
 * (another group contributes them, through the core; none when it is not enabled).
 */
export async function taskHandoff(
  pack: Pack,
  runNotes: (run: string) => Promise<readonly string[]> = async () => [],
): Promise<Handoff> {
  let p: TaskPassport | null
  try {
    p = await currentPassport(pack)
  } catch (e) {
    return { text: `Task handoff\n[warn] Cannot read current task passport: ${messageOf(e)}`, passport: null }
  }
  if (!p) return { text: `Task handoff\n[warn] ${NO_PASSPORT}`, passport: null }
  const run = p.links?.agwpRun
  const notes = run ? await runNotes(run) : []
  return { text: await formatHandoff(pack, p, notes), passport: p }
}

/**
 * `sources`: the records whose staleness the handoff reports; every record unless given. A
 * bundle's handoff gives none, as Agentpack's does, so the same task exports the same bundle id.
 */
export async function formatHandoff(
  pack: Pack,
  p: TaskPassport,
  notes: readonly string[] = [],
  sources?: readonly SourceStatus[],
): Promise<string> {
  const refs = await pack.git.refs()
  const task = await taskWarnings(pack, p)
  const stale = (sources ?? (await sourceStatuses(pack))).filter((s) => s.status !== 'unchanged')
  const v = p.verification
  return [
    'Task handoff',
    `${p.title} [${p.status}]`,
    `ID: ${p.id}`,
    `Objective: ${p.objective || '(none)'}`,
    `Branch: ${p.branch ?? '(unknown)'}`,
    `HEAD: ${p.currentHead ?? '(unknown)'}`,
    `Risk: ${p.risk}`,
    `Verification: ${v.status}${v.summary ? ` - ${v.summary}` : ''}`,
    `Evidence: ${v.evidence.length ? v.evidence.join(', ') : '(none)'}`,
    'Constraints:',
    ...list(p.constraints),
    'Write scope:',
    ...list(p.writeScope),
    'Next actions:',
    ...list(p.nextActions),
    ...(p.links
      ? [
          `Linked: ${Object.entries(p.links)
            .map(([k, val]) => `${k} ${val}`)
            .join(', ')}`,
        ]
      : []),
    ...(notes.length ? ['Run notes:', ...notes.map((n) => `- ${n}`)] : []),
    `Drift: ${driftText(p, refs.branch, refs.oid, refs.available)}`,
    `Audit: ${task.length ? task.join(' | ') : 'No action-required task warnings.'}`,
    `Metadata: ${
      stale.length
        ? `Source cache metadata has ${stale.length} changed or missing record(s): ${stale.map((s) => s.path).join(', ')}. Refresh only records whose durable conclusions changed.`
        : 'No source-cache metadata warnings.'
    }`,
  ].join('\n')
}

async function taskWarnings(pack: Pack, p: TaskPassport): Promise<string[]> {
  const out: string[] = []
  const refs = await pack.git.refs()
  if (isClosed(p.status)) out.push('Task is closed. Start or switch to an open task before continuing work.')
  if (!p.nextActions.length) out.push('Task has no next actions.')
  if (p.verification.status === 'unknown' || p.verification.status === 'pending')
    out.push(`Verification is ${p.verification.status}. Attach evidence or close the loop before handoff.`)
  if (!p.writeScope.length) out.push('Task has no write scope; future agents may not know the intended blast radius.')
  if (refs.available) {
    if (p.branch && refs.branch && p.branch !== refs.branch)
      out.push(`Branch drift: passport branch is ${p.branch}, current branch is ${refs.branch}.`)
    if (!sameHead(p.currentHead, refs.oid))
      out.push(
        `HEAD drift: passport head is ${p.currentHead}, current head is ${refs.oid?.slice(0, p.currentHead?.length ?? 7)}.`,
      )
  } else out.push('Git repository not detected; branch/head drift cannot be checked.')
  if (!(await samePath(pack.root, p.worktree)))
    out.push('Worktree path differs from the current pack root; verify this passport belongs to this workspace.')
  return out
}

function formatAudit(issues: readonly AuditIssue[]): string {
  const task = issues.filter((i) => i.category !== 'metadata')
  const meta = issues.filter((i) => i.category === 'metadata')
  return [
    'Task audit',
    ...task.map((i) => `[${i.level}] ${i.message}`),
    ...(meta.length ? ['', 'Metadata', ...meta.map((i) => `[${i.level}] ${i.message}`)] : []),
  ].join('\n')
}

function list(items: readonly string[]): string[] {
  return items.length ? items.map((i) => `- ${i}`) : ['- (none)']
}

async function samePath(a: string, b: string): Promise<boolean> {
  try {
    return (await realpath(a)) === (await realpath(b))
  } catch {
    return resolve(a) === resolve(b)
  }
}

export function messageOf(e: unknown): string {
  if (e instanceof Error) return e.message
  if (e && typeof e === 'object' && typeof (e as { message?: unknown }).message === 'string')
    return (e as { message: string }).message
  return String(e)
}
