// The warn layer of Agentpack's task gate, shown by load_context, resume and task_status:
// lifecycle findings any client sees without hooks. Reads refs only (no git process).
import { readPassport, readCurrentTaskId } from './passports.ts'
import type { Pack } from './store.ts'
import type { TaskPassport, TaskStatus } from './types.ts'

export interface GateFinding {
  code: 'no-active-task' | 'task-not-active' | 'branch-drift' | 'passport-unreadable' | 'config-unreadable'
  level: 'warn'
  message: string
}

export async function gateFindings(pack: Pack, known?: TaskPassport | null): Promise<GateFinding[]> {
  const config = await pack.config().catch(() => undefined)
  if (config === undefined)
    return [
      {
        code: 'config-unreadable',
        level: 'warn',
        message: 'Cannot read .agentpack/config.json; the task gate cannot be evaluated.',
      },
    ]
  if (config.gateMode === 'off') return []
  let passport: TaskPassport | null | undefined = known
  if (passport === undefined) {
    try {
      const id = await readCurrentTaskId(pack)
      passport = id ? await readPassport(pack, id) : null
    } catch (e) {
      const why = e instanceof Error ? e.message : String((e as { message?: unknown }).message ?? e)
      return [{ code: 'passport-unreadable', level: 'warn', message: `Cannot read current task passport: ${why}` }]
    }
  }
  if (!passport)
    return [
      {
        code: 'no-active-task',
        level: 'warn',
        message: 'No current task passport. Start one with `agentpack task start <title>` before editing code.',
      },
    ]
  const out: GateFinding[] = []
  if (passport.status !== 'active')
    out.push({ code: 'task-not-active', level: 'warn', message: notActive(passport.status) })
  if (passport.branch) {
    const refs = await pack.git.refs()
    if (refs.available && refs.branch && refs.branch !== passport.branch)
      out.push({
        code: 'branch-drift',
        level: 'warn',
        message: `Branch drift: task ${passport.id} was started on ${passport.branch}, current branch is ${refs.branch}.`,
      })
  }
  return out
}

export function formatGate(findings: readonly GateFinding[]): string {
  return findings.length === 0
    ? ''
    : `\n\n## Gate Warnings\n${findings.map((f) => `- [${f.level}] ${f.message}`).join('\n')}`
}

function notActive(s: TaskStatus): string {
  switch (s) {
    case 'verifying':
      return 'Current task is verifying: a final verdict is recorded and code changes are frozen. Finalize the task; to commit already-verified changes, set verification to pending, commit, then re-record the verdict. Park the task for unrelated work.'
    case 'parked':
      return 'Current task is parked. Switch to it, or start the task this work belongs to.'
    case 'blocked':
      return 'Current task is blocked. Resolve or park it before editing code.'
    default:
      return 'Current task is closed. Start or switch to an open task before editing code.'
  }
}
