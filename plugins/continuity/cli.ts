// `ag-mcp continuity …`: the human side of the pack, as Agentpack's CLI is. Closing a task
// without a verdict (`task close`), blocking and abandoning stay here, deliberately out of
// the MCP tools. Everything printed goes through `io.out`, which the binary sanitises (pack
// text was written by agents and must not drive the terminal).
import { resolve } from 'node:path'
import { UsageError, parseFlags } from '../../lib/cli/flags.ts'
import { CONTINUITY_FLAGS } from './cli-words.ts'
import type { CommandContext } from '../../core/src/plugin-api.ts'
import { PRESET_NAMES, resolveBudget } from './budget.ts'
import type { Preset } from './budget.ts'
import { importBundle } from './bundle-import.ts'
import { exportBundle } from './bundle-export.ts'
import { inspectBundle, planImport } from './bundles.ts'
import { createCheckpoint, diffCheckpoints } from './checkpoints.ts'
import { formatGate, gateFindings } from './gate.ts'
import {
  attachEvidence,
  formatSourceStatuses,
  gitStatuses,
  recordDeadEnd,
  recordDecision,
  recordSource,
  replay,
  sourceStatuses,
} from './ledger.ts'
import type { SourceStatus } from './ledger.ts'
import {
  abandonTask,
  blockTask,
  closeTask,
  finalizeAdvisories,
  finalizeTask,
  parkTask,
  startTask,
  switchTask,
  updateTask,
  updateVerification,
} from './lifecycle.ts'
import { currentPassport, readPassport } from './passports.ts'
import { auditTask, listTasks, messageOf, taskHandoff, taskStatus } from './reports.ts'
import { buildResume } from './resume.ts'
import { findPackRoot, initPack, Pack } from './store.ts'
import type { TaskRisk, TaskStatus, VerificationStatus } from './types.ts'
import { RISKS, TASK_STATUSES, VERIFICATION_STATUSES } from './types.ts'

/** What a command gets from the binary (its output sanitised there); scrub replaces token shapes. */
export type CliIo = Pick<CommandContext, 'out' | 'err' | 'cwd' | 'env' | 'version'> &
  Partial<Pick<CommandContext, 'scrub'>>

export const CLI_USAGE = `Usage: ag-mcp continuity [--root DIR] <command>

  init                                   create .agentpack/ here (as \`agentpack init\`; its ignore lines go to .git/info/exclude)
  task start <title> [--objective T] [--constraint T]... [--write-scope P]... [--next T]... [--tag T]... [--risk R]
  task status [ID] [--full]              task list [--open|--status S|--scope P|--all] [--limit N] [--compact] [--json]
  task passport [ID]                     the full passport JSON
  task update [--objective T] [--constraint T]... [--replace-constraints] [--write-scope P]... [--next T]... [--clear-next-actions] [--tag T]... [--risk R]
  task verify --status S [--evidence ID]... [--summary T]
  task finalize [--status S] [--evidence ID]... [--summary T] [--force]
  task park | task switch <ID> [--park-current] | task handoff | task audit
  task block --reason T | task close | task abandon     (human only: no MCP tool does these)
  decision <text> [--file P]... [--evidence ID]...      dead-end <text> [--reason T] [--file P]...
  evidence [--kind K] (--content T | --path P) [--command C] [--exit-code N]
  source add <path> [--summary T] [--snippet T]         source status [--changed] [--missing]
  checkpoint [--summary T] [--status T] [--next T]...   diff [FROM] [TO]     replay [--limit N]
  resume [--preset quick|chat|agent|deep] [--budget N] [--query T]
  bundle export --output P [--task ID] [--source P]... [--no-evidence]
  bundle inspect P | bundle plan P [--as-new] | bundle import P [--write] [--as-new]`

interface Parsed {
  positionals: string[]
  options: Map<string, string[]>
  flags: Set<string>
}

/** The words, by lib/cli's parser: an unknown flag is named with the nearest. */
export function parseCliArgs(argv: readonly string[]): Parsed {
  const { values, positionals, rest, help } = parseFlags(argv, CONTINUITY_FLAGS, { help: true })
  const p: Parsed = { positionals: [...positionals, ...rest], options: new Map(), flags: new Set() }
  if (help) p.flags.add('help')
  for (const [name, v] of Object.entries(values))
    if (Array.isArray(v)) p.options.set(name, [...(v as readonly string[])])
    else if (v === true) p.flags.add(name)
  return p
}

/** Runs one command; returns the exit code (0 ok, 1 refused, 2 usage). */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  let args: Parsed
  try {
    args = parseCliArgs(argv)
  } catch (e) {
    io.err(`ag-mcp continuity: ${messageOf(e)}\n${CLI_USAGE}`)
    return 2
  }
  if (args.flags.has('help') || args.positionals.length === 0) {
    io.out(CLI_USAGE)
    return args.flags.has('help') ? 0 : 2
  }
  const rootOpt = args.options.get('root')?.at(-1)
  args.options.delete('root')
  try {
    const start = resolve(io.cwd, rootOpt ?? io.env['AGENTPACK_ROOT'] ?? '.')
    if (args.positionals[0] === 'init') {
      const r = await initPack(rootOpt ? start : await findPackRoot(start))
      io.out(`Initialized ${r.dir}`)
      // What it wrote besides the pack, said plainly: Agentpack's .gitignore lines, in .git/info/exclude.
      if (!r.git) io.out('Not in a git repository: nothing to keep out of git.')
      else if (r.excluded.length > 0)
        io.out(`Added to .git/info/exclude (no tracked file changed): ${r.excluded.join(', ')}`)
      else
        io.out('.git/info/exclude already lists what Agentpack keeps out of git; no file outside .agentpack/ changed.')
      return 0
    }
    const pack = new Pack(await findPackRoot(start), { shapes: io.scrub, env: io.env })
    await pack.requireInitialized()
    io.out(await dispatch(pack, args, io))
    return 0
  } catch (e) {
    if (e instanceof UsageError) {
      io.err(`ag-mcp continuity: ${e.message}\n${CLI_USAGE}`)
      return 2
    }
    io.err(`ag-mcp continuity: ${messageOf(e)}`)
    return 1
  }
}

/** What a command gets: the pack, its words after its name, and its flags by kind. */
interface Call {
  pack: Pack
  words: string[]
  one(name: string): string | undefined
  many(name: string): string[]
  flag(name: string): boolean
  text(from: readonly string[]): string
  io: CliIo
}

/** The commands whose name has two words (`task start`). */
const GROUPS = ['task', 'source', 'bundle']

async function dispatch(pack: Pack, a: Parsed, io: CliIo): Promise<string> {
  const [cmd = '', ...after] = a.positionals
  const grouped = GROUPS.includes(cmd) && after.length > 0
  const name = grouped ? `${cmd} ${after[0]}` : cmd
  const run = COMMANDS[name]
  // lib/cli refused any other name, with the nearest, before this module loaded.
  if (run === undefined) throw new UsageError(`unknown command: ${name}`)
  return run({
    pack,
    words: grouped ? after.slice(1) : after,
    one: (k) => a.options.get(k)?.at(-1),
    many: (k) => a.options.get(k) ?? [],
    flag: (k) => a.flags.has(k),
    text: (from) => from.join(' ').trim(),
    io,
  })
}

/** Each command's code by name; it answers the line to print. */
const COMMANDS: Readonly<Record<string, (c: Call) => Promise<string>>> = {
  'task start': async ({ pack, words, one, many, text }) => {
    const p = await startTask(pack, {
      title: text(words),
      objective: one('objective'),
      constraints: many('constraint'),
      writeScope: many('write-scope'),
      nextActions: many('next'),
      tags: many('tag'),
      risk: risk(one('risk')),
    })
    return `Started task ${p.id}`
  },
  'task status': async ({ pack, words, flag }) => (await taskStatus(pack, { id: words[0], full: flag('full') })).text,
  'task list': async ({ pack, one, many, flag }) => {
    const l = await listTasks(pack, {
      open: flag('open'),
      all: flag('all'),
      status: many('status').map(taskStatusName),
      scope: many('scope'),
      compact: flag('compact'),
      limit: one('limit') === undefined ? undefined : positive(one('limit') as string, '--limit'),
    })
    return flag('json') ? JSON.stringify(l.tasks, null, 2) : l.text
  },
  'task passport': async ({ pack, words }) => {
    const p = words[0] ? await readPassport(pack, words[0]) : await currentPassport(pack)
    if (!p) throw new Error('there is no current task; pass an id')
    return JSON.stringify(p, null, 2)
  },
  'task update': async ({ pack, one, many, flag }) => {
    const p = await updateTask(pack, {
      objective: one('objective'),
      constraints: many('constraint'),
      replaceConstraints: flag('replace-constraints'),
      writeScope: many('write-scope'),
      nextActions: many('next'),
      clearNextActions: flag('clear-next-actions'),
      tags: many('tag'),
      risk: risk(one('risk')),
    })
    return `Updated task ${p.id}`
  },
  'task verify': async ({ pack, one, many }) => {
    const r = await updateVerification(pack, {
      status: verdict(one('status')),
      evidence: many('evidence'),
      summary: one('summary'),
    })
    return `${r.changed ? 'Updated' : 'Verification unchanged for'} task ${r.passport.id} (${r.passport.verification.status})`
  },
  'task finalize': async ({ pack, one, many, flag }) => {
    const p = await finalizeTask(pack, {
      status: verdict(one('status')),
      evidence: many('evidence'),
      summary: one('summary'),
      force: flag('force'),
    })
    const adv = await finalizeAdvisories(pack, p)
    return `Finalized task ${p.id} (${p.verification.status})${adv.length ? `\nAdvisories:\n${adv.map((x) => `- ${x}`).join('\n')}` : ''}`
  },
  'task park': async ({ pack }) => `Parked task ${(await parkTask(pack)).id}`,
  'task switch': async ({ pack, words, flag }) => {
    if (!words[0]) throw new UsageError('task switch needs a task id')
    const p = await switchTask(pack, words[0], { parkCurrent: flag('park-current') })
    return `Switched to task ${p.id} (${p.status})`
  },
  'task block': async ({ pack, words, one, text }) => {
    const reason = one('reason') ?? text(words)
    if (!reason) throw new UsageError('task block needs --reason')
    return `Blocked task ${(await blockTask(pack, reason)).id}`
  },
  'task close': async ({ pack }) => `Closed task ${(await closeTask(pack)).id}`,
  'task abandon': async ({ pack }) => `Abandoned task ${(await abandonTask(pack)).id}`,
  'task handoff': async ({ pack }) => (await taskHandoff(pack)).text,
  'task audit': async ({ pack }) => (await auditTask(pack)).text,
  decision: async ({ pack, words, many, text }) =>
    `Recorded decision ${(await recordDecision(pack, { text: text(words), files: many('file'), evidence: many('evidence') })).id}`,
  'dead-end': async ({ pack, words, one, many, text }) =>
    `Recorded dead end ${(await recordDeadEnd(pack, { text: text(words), reason: one('reason'), files: many('file') })).id}`,
  evidence: async ({ pack, one }) => {
    const code = one('exit-code')
    const e = await attachEvidence(pack, {
      kind: one('kind'),
      content: one('content'),
      path: one('path'),
      command: one('command'),
      exitCode: code === undefined ? undefined : Number(code),
    })
    return `Attached evidence ${e.id}`
  },
  'source add': async ({ pack, words, one }) => {
    if (!words[0]) throw new UsageError('source add needs a path')
    const s = await recordSource(pack, { path: words[0], summary: one('summary'), snippet: one('snippet') })
    return `Recorded source ${s.path} (${s.hash.slice(0, 12)})`
  },
  'source status': async ({ pack, flag }) => {
    const only = [...(flag('changed') ? ['changed' as const] : []), ...(flag('missing') ? ['missing' as const] : [])]
    const [all, git]: [SourceStatus[], Map<string, string>] = await Promise.all([
      sourceStatuses(pack),
      gitStatuses(pack),
    ])
    return formatSourceStatuses(
      only.length ? all.filter((s) => only.includes(s.status as 'changed')) : all,
      all,
      only,
      git,
    )
  },
  checkpoint: async ({ pack, one, many }) =>
    `Created checkpoint ${(await createCheckpoint(pack, { summary: one('summary'), status: one('status'), nextActions: many('next') })).id}`,
  diff: async ({ pack, words }) => diffCheckpoints(pack, words[0], words[1]),
  replay: async ({ pack, one }) =>
    (await replay(pack, one('limit') === undefined ? 30 : positive(one('limit') as string, '--limit'))).text,
  resume: async ({ pack, one }) => {
    const preset = one('preset')
    if (preset !== undefined && !PRESET_NAMES.includes(preset as Preset))
      throw new UsageError(`unknown preset ${preset}; one of ${PRESET_NAMES.join(', ')}`)
    const config = await pack.config()
    const budget = resolveBudget(
      {
        budget: one('budget') === undefined ? undefined : positive(one('budget') as string, '--budget'),
        preset: preset as Preset | undefined,
      },
      config.defaultBudget || undefined,
    )
    const r = await buildResume(pack, { budget, query: one('query') })
    return r.markdown + formatGate(await gateFindings(pack))
  },
  'bundle export': async ({ pack, one, many, flag, io }) => {
    const out = one('output')
    if (!out) throw new UsageError('bundle export needs --output')
    const r = await exportBundle(pack, {
      outputPath: out,
      taskId: one('task'),
      sources: many('source'),
      includeEvidence: !flag('no-evidence'),
      producerVersion: `ag-mcp-${io.version}`,
    })
    return `Exported bundle ${r.bundleId}\nTask: ${r.taskId}\nPath: ${r.outputPath}\nIncluded: ${r.sources} source(s), ${r.evidence} evidence item(s), ${r.bytes} bytes`
  },
  'bundle inspect': async ({ pack, words }) =>
    JSON.stringify(await inspectBundle(pack, need(words[0], 'bundle inspect needs a path')), null, 2),
  'bundle plan': async ({ pack, words, flag }) => {
    return JSON.stringify(
      await planImport(pack, need(words[0], 'bundle plan needs a path'), { asNew: flag('as-new') }),
      null,
      2,
    )
  },
  'bundle import': async ({ pack, words, flag }) => {
    const path = need(words[0], 'bundle import needs a path')
    const r = flag('write')
      ? await importBundle(pack, path, { asNew: flag('as-new') })
      : await planImport(pack, path, { asNew: flag('as-new') })
    return JSON.stringify(r, null, 2)
  },
}

function need(v: string | undefined, why: string): string {
  if (!v) throw new UsageError(why)
  return v
}

function positive(v: string, name: string): number {
  const n = Number(v)
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`${name} needs a positive whole number, not ${v}`)
  return n
}

function risk(v: string | undefined): TaskRisk | undefined {
  if (v === undefined) return undefined
  if (!RISKS.includes(v as TaskRisk)) throw new UsageError(`--risk must be one of ${RISKS.join(', ')}`)
  return v as TaskRisk
}

function verdict(v: string | undefined): VerificationStatus | undefined {
  if (v === undefined) return undefined
  if (!VERIFICATION_STATUSES.includes(v as VerificationStatus))
    throw new UsageError(`--status must be one of ${VERIFICATION_STATUSES.join(', ')}`)
  return v as VerificationStatus
}

function taskStatusName(v: string): TaskStatus {
  if (!TASK_STATUSES.includes(v as TaskStatus))
    throw new UsageError(`--status must be one of ${TASK_STATUSES.join(', ')}`)
  return v as TaskStatus
}
