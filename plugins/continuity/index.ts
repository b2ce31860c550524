// The continuity plugin: Agentpack's task passports, ledger, resume, checkpoints and bundles in
// the repository's .agentpack/ (a local plugin). Handlers turn validated arguments into calls of
// the plain modules beside this file and return plain data; the core validates, polices
// (--write-path on bundle_export's outputPath), sanitizes, scrubs, bounds and fences.
import { realpath } from 'node:fs/promises'
import { join } from 'node:path'
import { definePlugin } from '../../core/src/plugin-api.ts'
import type { Handlers, ToolContext } from '../../core/src/plugin-api.ts'
import type { PluginTools } from '../../generated/types/tools.ts'
import { PRESET_NAMES, resolveBudget } from './budget.ts'
import { importBundle } from './bundle-import.ts'
import type { ImportResult } from './bundle-import.ts'
import { exportBundle } from './bundle-export.ts'
import { CONTINUITY_COMMANDS, CONTINUITY_FLAGS } from './cli-words.ts'
import { inspectBundle, planImport } from './bundles.ts'
import type { ImportPlan, InspectResult } from './bundles.ts'
import { createCheckpoint, diffCheckpoints } from './checkpoints.ts'
import { refuse } from './errors.ts'
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
import {
  finalizeAdvisories,
  finalizeTask,
  parkTask,
  startTask,
  switchTask,
  updateTask,
  updateVerification,
} from './lifecycle.ts'
import { releasePreflight } from './release.ts'
import { auditTask, listTasks, taskHandoff, taskStatus } from './reports.ts'
import { buildResume } from './resume.ts'
import { Pack } from './store.ts'
import { RISKS, VERIFICATION_STATUSES } from './types.ts'
import type { PassportLinks } from './types.ts'

interface State {
  /**
   * The pack root, which is also the root the core checks written paths under: --continuity-root,
   * else the nearest ancestor of the working directory holding .agentpack/ up to the git top
   * level, else the git top level (the option's `marker`, resolved by the core).
   */
  root: string
  scrub: (s: string) => string
  /** --continuity-exports-in-pack: bundle_export writes under .agentpack/exports/. */
  exportsInPack: boolean
  /** --continuity-bundle-dir, real paths. */
  bundleDirs: readonly string[]
}

type Ctx = ToolContext<State>

const pack = (ctx: Ctx) =>
  new Pack(ctx.state.root, { signal: ctx.signal, shapes: ctx.state.scrub, bundleDirs: ctx.state.bundleDirs })

async function resume(ctx: Ctx, a: { query?: string; budget?: number; preset?: 'quick' | 'chat' | 'agent' | 'deep' }) {
  const p = pack(ctx)
  await p.requireInitialized()
  const config = await p.config()
  const budget = resolveBudget({ budget: a.budget, preset: a.preset }, config.defaultBudget || undefined)
  const r = await buildResume(p, { budget, query: a.query })
  const gate = await gateFindings(p)
  return {
    text: r.markdown + formatGate(gate),
    estimatedTokens: r.estimatedTokens,
    budget: r.budget,
    omittedSections: r.omittedSections,
    truncatedSections: r.truncatedSections,
    gateWarnings: gate.map((g) => g.message),
  }
}

/**
 * The notes of an AGWP run, asked of whichever enabled group answers task_handoff's `run_notes`
 * (manifests/continuity.json): the core checked the answer against the ask's value schema.
 */
async function runNotes(ctx: Ctx, run: string): Promise<string[]> {
  const answer = (await ctx.attachment('run_notes', { run })) as
    | { notes: { author: string; createdAt: string; body: string }[] }
    | undefined
  return (answer?.notes ?? []).map((n) => `${n.createdAt} ${n.author}: ${n.body.trimEnd().replace(/\n/g, '\n  ')}`)
}

function links(a: { agwpTask?: string; agwpRun?: string; agwpProposal?: string }): PassportLinks | undefined {
  const l: PassportLinks = {}
  if (a.agwpTask) l.agwpTask = a.agwpTask
  if (a.agwpRun) l.agwpRun = a.agwpRun
  if (a.agwpProposal) l.agwpProposal = a.agwpProposal
  return Object.keys(l).length ? l : undefined
}

const handlers: Handlers<PluginTools['continuity'], State> = {
  load_context: (a, ctx) => resume(ctx, a),
  resume: (a, ctx) => resume(ctx, a),
  record_decision: async (a, ctx) => {
    const e = await recordDecision(pack(ctx), { text: a.text, files: a.files, evidence: a.evidence })
    return { text: `Recorded decision ${e.id}.`, id: e.id, ts: e.ts }
  },
  record_dead_end: async (a, ctx) => {
    const e = await recordDeadEnd(pack(ctx), { text: a.text, reason: a.reason, files: a.files })
    return { text: `Recorded dead end ${e.id}.`, id: e.id, ts: e.ts }
  },
  attach_evidence: async (a, ctx) => {
    const e = await attachEvidence(pack(ctx), a)
    return { text: `Attached evidence ${e.id}.`, id: e.id, path: String(e['path']) }
  },
  record_source: async (a, ctx) => {
    const s = await recordSource(pack(ctx), a)
    return { text: `Recorded source ${s.path} (${s.hash.slice(0, 12)}).`, source: s }
  },
  source_status: async (a, ctx) => {
    const p = pack(ctx)
    await p.requireInitialized()
    const only = [...(a.changed ? (['changed'] as const) : []), ...(a.missing ? (['missing'] as const) : [])]
    const [all, git] = await Promise.all([sourceStatuses(p), gitStatuses(p)])
    const sources = only.length ? all.filter((s) => (only as readonly string[]).includes(s.status)) : all
    const text = a.json ? json(sources) : formatSourceStatuses(sources, all, only, git)
    return { text: await p.redact(text), sources, total: all.length }
  },
  task_audit: async (a, ctx) => {
    const p = pack(ctx)
    await p.requireInitialized()
    const r = await auditTask(p)
    const text = a.json ? json({ passport: r.passport, issues: r.issues }) : r.text
    return { text: await p.redact(text), issues: r.issues, passport: r.passport }
  },
  release_preflight: async (_a, ctx) => {
    const p = pack(ctx)
    const r = await releasePreflight(p)
    return { text: await p.redact(r.text), ok: r.ok }
  },
  task_handoff: async (_a, ctx) => {
    const p = pack(ctx)
    await p.requireInitialized()
    const h = await taskHandoff(p, (run) => runNotes(ctx, run))
    return { text: h.text, passport: h.passport }
  },
  task_start: async (a, ctx) => {
    const passport = await startTask(pack(ctx), { ...a, links: links(a) })
    return { text: `Started task ${passport.id}.`, passport }
  },
  task_status: async (a, ctx) => {
    const p = pack(ctx)
    await p.requireInitialized()
    const s = await taskStatus(p, { id: a.id, full: a.full })
    const gate = a.id ? [] : await gateFindings(p, s.passport)
    return {
      text: s.text + formatGate(gate),
      passport: s.passport,
      drift: s.drift,
      gateWarnings: gate.map((g) => g.message),
    }
  },
  passport_list: async (a, ctx) => {
    const p = pack(ctx)
    await p.requireInitialized()
    const l = await listTasks(p, a)
    // Agentpack's JSON text is the array alone; its warnings travel in the result's _meta.
    const warned = a.json && l.warnings.length ? { jsonWarnings: l.warnings } : {}
    const text = await p.redact(a.json ? json(l.tasks) : l.text)
    return { text, tasks: l.tasks, total: l.total, warnings: l.warnings, ...warned }
  },
  task_switch: async (a, ctx) => {
    const id = a.id.trim()
    if (!id) throw refuse('invalid', 'task_switch requires a task id')
    const passport = await switchTask(pack(ctx), id, { parkCurrent: a.parkCurrent })
    return { text: `Switched to task ${passport.id} (${passport.status}).`, passport }
  },
  task_park: async (_a, ctx) => {
    const passport = await parkTask(pack(ctx))
    return { text: `Parked task ${passport.id}.`, passport }
  },
  task_update: async (a, ctx) => {
    const passport = await updateTask(pack(ctx), { ...a, links: links(a) })
    return { text: `Updated task ${passport.id}.`, passport }
  },
  task_update_verification: async (a, ctx) => {
    const r = await updateVerification(pack(ctx), a)
    const verb = r.changed ? 'Updated verification for' : 'Verification unchanged for'
    return {
      text: `${verb} task ${r.passport.id} (${r.passport.verification.status}).`,
      changed: r.changed,
      passport: r.passport,
    }
  },
  task_finalize: async (a, ctx) => {
    const p = pack(ctx)
    const passport = await finalizeTask(p, a)
    const advisories = await finalizeAdvisories(p, passport)
    const adv = advisories.length ? `\n\nAdvisories:\n${advisories.map((x) => `- ${x}`).join('\n')}` : ''
    return { text: `Finalized task ${passport.id} (${passport.verification.status}).${adv}`, passport, advisories }
  },
  checkpoint: async (a, ctx) => {
    const c = await createCheckpoint(pack(ctx), a)
    return { text: `Created checkpoint ${c.id}.`, id: c.id, manifest: c.manifest }
  },
  checkpoint_diff: async (a, ctx) => {
    const p = pack(ctx)
    await p.requireInitialized()
    return { text: await diffCheckpoints(p, a.from, a.to) }
  },
  replay: async (a, ctx) => {
    const p = pack(ctx)
    await p.requireInitialized()
    const r = await replay(p, a.limit ?? 30)
    return { text: r.text, count: r.events.length }
  },
  bundle_export: async (a, ctx) => {
    // The core checked outputPath (--write-path, path safety) under the same root the pack is
    // at. With --continuity-exports-in-pack (local mode sets it) the file goes under
    // .agentpack/exports/ instead: pack state, ignored by git, never a work-tree file.
    const r = await exportBundle(pack(ctx), {
      outputPath: a.outputPath,
      inExports: ctx.state.exportsInPack,
      taskId: a.taskId,
      sources: a.sources,
      includeEvidence: a.includeEvidence,
      producerVersion: `ag-mcp-${ctx.server.version}`,
    })
    return {
      text: `Exported bundle ${r.bundleId}\nTask: ${r.taskId}\nPath: ${join(ctx.state.root, r.outputPath)}\nIncluded: ${r.sources} source(s), ${r.evidence} evidence item(s), ${r.bytes} bytes`,
      ...r,
    }
  },
  bundle_inspect: async (a, ctx) => {
    const r = await inspectBundle(pack(ctx), a.path)
    return { text: a.json ? json(r) : inspectText(r), bundle: r }
  },
  bundle_import_plan: async (a, ctx) => {
    const plan = await planImport(pack(ctx), a.path, { asNew: a.asNew })
    return { text: a.json ? json(plan) : planText(plan), plan }
  },
  bundle_import: async (a, ctx) => {
    if (!a.write) {
      const plan = await planImport(pack(ctx), a.path, { asNew: a.asNew })
      return { text: a.json ? json(plan) : planText(plan), applied: false, result: plan }
    }
    const r = await importBundle(pack(ctx), a.path, { asNew: a.asNew })
    return { text: a.json ? json(r) : importText(r), applied: r.applied, result: r }
  },
}

/** Agentpack's JSON texts: two-space indented. */
const json = (value: unknown): string => JSON.stringify(value, null, 2)

function importText(r: ImportResult): string {
  const label = r.idempotent ? 'Original import ' : ''
  return [
    `${r.idempotent ? 'Reused' : 'Imported'} bundle ${r.bundleId}`,
    `Task: ${r.taskId} [${r.idempotent ? (r.plan.destination.taskStatus ?? 'parked') : 'parked'}]`,
    `Applied: ${r.applied ? 'yes' : 'no (idempotent)'}`,
    `Manifest: ${r.manifestPath}`,
    `${label ? `${label}evidence` : 'Evidence'}: ${countActions(r.manifest.evidence)}`,
    `${label ? `${label}sources` : 'Sources'}: ${countActions(r.manifest.sources)}`,
    `Unresolved origin evidence: ${r.manifest.unresolvedOriginEvidence.length ? r.manifest.unresolvedOriginEvidence.join(', ') : 'none'}`,
    'Current task pointer: unchanged',
  ].join('\n')
}

/** "created 1, reused 2" in first-seen order, or "none". */
function countActions(records: readonly { action: string }[]): string {
  const counts = new Map<string, number>()
  for (const r of records) counts.set(r.action, (counts.get(r.action) ?? 0) + 1)
  return counts.size ? [...counts].map(([action, n]) => `${action} ${n}`).join(', ') : 'none'
}

function inspectText(r: InspectResult): string {
  return [
    `Bundle ${r.bundleId}`,
    `Status: valid (${r.digestStatus} digest)`,
    `Task: ${r.task.id} - ${r.task.title}`,
    `Origin: ${r.origin.projectName}${r.origin.branch ? ` @ ${r.origin.branch}` : ''}${r.origin.head ? ` (${r.origin.head})` : ''}`,
    `Original status: ${r.task.originalStatus}`,
    `Verification: ${r.task.verificationStatus}`,
    `Included: ${r.counts.sources} source(s), ${r.counts.evidence} evidence item(s)`,
    `Warnings: ${r.warnings.length ? r.warnings.join('; ') : 'none'}`,
  ].join('\n')
}

function planText(p: ImportPlan): string {
  return [
    `Bundle import plan ${p.bundle.bundleId}`,
    'Mode: read-only (no pack writes)',
    `Task: ${p.bundle.task.id} - ${p.bundle.task.title}`,
    `Destination: ${p.destination.status}`,
    `Outcome: ${p.action.outcome}`,
    `Planned: task ${p.action.task}, bundle ${p.action.bundle}`,
    `Conflicts: ${p.conflicts.length ? p.conflicts.map((c) => c.message).join('; ') : 'none'}`,
    `Warnings: ${p.warnings.length ? p.warnings.join('; ') : 'none'}`,
  ].join('\n')
}

/**
 * Agentpack's own words for the values its schema lists but it checks itself (an unknown
 * preset, risk or verification status; a missing id): its clients match these messages.
 */
function peerRefusal(tool: string, args: Readonly<Record<string, unknown>>): string | undefined {
  const given = (k: string) => args[k] !== undefined && args[k] !== null && args[k] !== ''
  const is = (k: string, allowed: readonly string[]) => typeof args[k] === 'string' && allowed.includes(args[k])
  if ((tool === 'load_context' || tool === 'resume') && given('preset') && !is('preset', PRESET_NAMES))
    return `Unknown budget preset: ${String(args['preset'])}. Expected one of: ${PRESET_NAMES.join(', ')}.`
  if ((tool === 'task_start' || tool === 'task_update') && given('risk') && !is('risk', RISKS))
    return `Unknown task risk: ${String(args['risk'])}`
  if (tool === 'task_update_verification' && given('status') && !is('status', VERIFICATION_STATUSES))
    return `Unknown verification status: ${String(args['status'])}`
  if (tool === 'task_finalize' && given('status') && !is('status', ['passed', 'failed', 'accepted']))
    return is('status', VERIFICATION_STATUSES)
      ? 'task finalize requires verification status passed, failed, or accepted; run `agentpack task verify --status passed|failed|accepted` first or pass `--status`.'
      : `Unknown verification status: ${String(args['status'])}`
  if (tool === 'task_switch' && (typeof args['id'] !== 'string' || !args['id'].trim()))
    return 'task_switch requires a task id'
  if (tool === 'task_start' && (typeof args['title'] !== 'string' || !args['title'].trim()))
    return 'task start requires a title'
  return undefined
}

export default definePlugin({
  name: 'continuity',
  api: 1,
  options: {
    'exports-in-pack': {
      type: 'boolean',
      default: false,
      description:
        'bundle_export writes under .agentpack/exports/ instead of a new file of the work tree, so no MCP call writes a work-tree file (local mode turns it on).',
    },
    root: {
      type: 'string',
      role: 'root',
      marker: '.agentpack',
      value: 'DIR',
      description:
        'The directory holding .agentpack/ (default: the nearest ancestor of the working directory that has one, inside the git top level; else the git top level).',
    },
    'bundle-dir': {
      type: 'list',
      value: 'DIR',
      description:
        'A directory besides the pack root that bundle_inspect, bundle_import_plan and bundle_import may read bundles from, by absolute path (repeatable; default: none).',
    },
  },
  init: async ({ root, scrub, options }): Promise<State> => {
    if (root === undefined) throw refuse('invalid', 'the continuity plugin has no root directory')
    const dirs = (options['bundle-dir'] ?? []) as readonly string[]
    const bundleDirs = await Promise.all(
      dirs.map((d) =>
        realpath(d).catch(() => {
          throw refuse('invalid', `--continuity-bundle-dir ${d}: no such directory`)
        }),
      ),
    )
    return { root, scrub, bundleDirs, exportsInPack: options['exports-in-pack'] }
  },
  handlers,
  peerRefusal,
  commands: {
    // `ag-mcp continuity …`: the human CLI (Agentpack's `task close`, block and abandon live only here).
    continuity: {
      summary: 'task passports, the ledger, checkpoints and bundles from the shell',
      raw: true,
      flags: CONTINUITY_FLAGS,
      subcommands: CONTINUITY_COMMANDS,
      help: async () => (await import('./cli.ts')).CLI_USAGE,
      load: async () => {
        const { runCli } = await import('./cli.ts')
        return ({ argv }, ctx) => runCli(argv, ctx)
      },
    },
  },
})
