// Task bundles: export one passport to a redacted `agentpack.task-bundle` file, inspect and
// plan an untrusted one, import it as a parked task. Unlike Agentpack, every path — the
// bundle read by inspect/plan/import as well as the file export writes — is resolved from
// the pack root and refused outside it (symbolic links included); reading never follows a
// link out of the root.
//
// What a bundle carries: the passport's task fields, a handoff text, the Source Cache records
// named in `sources`, and the evidence the passport's verification references. It carries no
// decisions, dead ends, checkpoints or ledger history.
import { lstat, mkdir, open, readdir } from 'node:fs/promises'
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path'
import { isInside, resolveInsideRoot } from '../../lib/inside-root.ts'
import {
  BUNDLE_KIND,
  BUNDLE_SCHEMA,
  digestPayload,
  evidenceDigest,
  MAX_BUNDLE_BYTES,
  MAX_EVIDENCE,
  MAX_EVIDENCE_CONTENT_BYTES,
  MAX_SOURCES,
  parseBundle,
  PRODUCER_NAME,
  stableStringify,
} from './bundle-format.ts'
import type { BundleEvidence, BundleOrigin, BundlePayload, BundleSource, TaskBundle } from './bundle-format.ts'
import { refuse, throwIfAborted } from './errors.ts'
import { FILE_MODE, isMissing, PACK_DIR, readJson } from './pack-files.ts'
import { currentPassport, passportExists, readPassport } from './passports.ts'
import { formatHandoff } from './reports.ts'
import { hashFile, resolveRegularFileWithin } from './sources.ts'
import type { Pack } from './store.ts'
import type { PackEvent, TaskStatus, TaskVerification } from './types.ts'

export interface ExportOptions {
  taskId?: string | undefined
  /**
   * The new file: relative to the pack root (a person's CLI export, as Agentpack's), or, with
   * `inExports`, to `.agentpack/exports/` (the MCP tool's: an agent writes no work-tree file).
   */
  outputPath: string
  inExports?: boolean | undefined
  sources?: string[] | undefined
  includeEvidence?: boolean | undefined
  producerVersion: string
}

export interface ExportResult {
  bundleId: string
  outputPath: string
  taskId: string
  sources: number
  evidence: number
  bytes: number
}

export async function exportBundle(pack: Pack, o: ExportOptions): Promise<ExportResult> {
  await pack.requireInitialized()
  const passport = o.taskId && o.taskId !== 'current' ? await readPassport(pack, o.taskId) : await currentPassport(pack)
  if (!passport)
    throw refuse('conflict', 'No current task. Run `agentpack task start <title>` first or pass --task <id>.')
  const out = o.inExports ? await exportsTarget(pack, o.outputPath) : await outputTarget(pack.root, o.outputPath)
  const sourcePaths = [
    ...new Set((o.sources ?? []).map((p) => repoRelative(pack.root, p, 'bundle source path'))),
  ].sort()
  if (sourcePaths.length > MAX_SOURCES) throw refuse('invalid', `a bundle carries at most ${MAX_SOURCES} sources`)
  const records = new Map((await pack.sources()).sources.map((s) => [s.path, s]))
  const sources: BundleSource[] = sourcePaths.map((p) => {
    const s = records.get(p)
    if (!s) throw refuse('not_found', `No recorded source conclusion for ${p}. Run source add/review first or omit it.`)
    return {
      path: s.path,
      hash: s.hash,
      size: s.size,
      recordedAt: s.recordedAt,
      summary: s.summary,
      snippet: s.snippet,
    }
  })
  const evidence = o.includeEvidence === false ? [] : await referencedEvidence(pack, passport.verification.evidence)
  const [refs, head, originUrl, config] = await Promise.all([
    pack.git.refs(),
    pack.git.short(),
    pack.git.originUrl(),
    pack.config(),
  ])
  const repository = sanitizeRemote(originUrl)
  const origin: BundleOrigin = {
    projectName: config.projectName || pack.root.split(sep).pop() || 'project',
    ...(repository ? { repository } : {}),
    branch: refs.branch,
    head,
  }
  const r = await pack.redactor()
  const scrub = <T>(v: T): T => {
    const text = JSON.stringify(r.redactDeep(v))
      .split(JSON.stringify(pack.root).slice(1, -1))
      .join('[REDACTED:WORKTREE]')
    return JSON.parse(text) as T
  }
  const payload = scrub<BundlePayload>({
    kind: BUNDLE_KIND,
    schemaVersion: BUNDLE_SCHEMA,
    producer: { name: PRODUCER_NAME, version: o.producerVersion },
    origin,
    task: {
      id: passport.id,
      title: passport.title,
      objective: passport.objective,
      constraints: passport.constraints,
      writeScope: passport.writeScope,
      risk: passport.risk,
      tags: passport.tags,
      nextActions: passport.nextActions,
      originalStatus: passport.status,
      originVerification: passport.verification,
    },
    handoffMarkdown: await formatHandoff(pack, passport, [], []),
    sources,
    evidence,
  })
  // Redaction can change evidence content: its digest is taken after.
  for (const e of payload.evidence) e.contentDigest = evidenceDigest(e.content)
  const bundle: TaskBundle = { ...payload, bundleId: digestPayload(payload), exportedAt: new Date().toISOString() }
  const content = `${stableStringify(bundle)}\n`
  const bytes = Buffer.byteLength(content, 'utf8')
  if (bytes > MAX_BUNDLE_BYTES)
    throw refuse('invalid', `the bundle would be ${bytes} bytes; at most ${MAX_BUNDLE_BYTES}`)
  throwIfAborted(pack.signal)
  await mkdir(dirname(out.abs), { recursive: true, mode: 0o700 })
  // The parent chain is checked again after mkdir: a link swapped in meanwhile is refused.
  await assertInsideRoot(o.inExports ? pack.path('exports') : pack.root, dirname(out.abs), o.outputPath)
  const fh = await open(out.abs, 'wx', FILE_MODE).catch((e: unknown) => {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST')
      throw refuse('conflict', `Refusing to overwrite existing bundle output: ${o.outputPath}`)
    throw e
  })
  try {
    await fh.writeFile(content, 'utf8')
  } finally {
    await fh.close()
  }
  return {
    bundleId: bundle.bundleId,
    outputPath: out.rel,
    taskId: passport.id,
    sources: sources.length,
    evidence: evidence.length,
    bytes,
  }
}

export interface InspectResult {
  valid: true
  bundleId: string
  digestStatus: 'valid'
  schemaVersion: number
  producer: { name: string; version: string }
  origin: BundleOrigin
  task: { id: string; title: string; originalStatus: TaskStatus; verificationStatus: TaskVerification['status'] }
  counts: { sources: number; evidence: number }
  warnings: string[]
}

export async function readBundleFile(pack: Pack, path: string): Promise<{ bundle: TaskBundle; warnings: string[] }> {
  const { abs } = await bundleFile(pack, path)
  const fh = await open(abs, 'r')
  try {
    const s = await fh.stat()
    if (!s.isFile()) throw refuse('invalid', `bundle path "${path}" is not a regular file`)
    if (s.size > MAX_BUNDLE_BYTES)
      throw refuse(
        'invalid',
        `invalid task bundle: ${path} is ${s.size} bytes, over the ${MAX_BUNDLE_BYTES}-byte limit; it was not read`,
      )
    const buf = Buffer.alloc(s.size)
    const { bytesRead } = await fh.read(buf, 0, s.size, 0)
    return parseBundle(buf.subarray(0, bytesRead).toString('utf8'))
  } finally {
    await fh.close()
  }
}

export function inspectResult(bundle: TaskBundle, warnings: string[]): InspectResult {
  return {
    valid: true,
    bundleId: bundle.bundleId,
    digestStatus: 'valid',
    schemaVersion: bundle.schemaVersion,
    producer: bundle.producer,
    origin: bundle.origin,
    task: {
      id: bundle.task.id,
      title: bundle.task.title,
      originalStatus: bundle.task.originalStatus,
      verificationStatus: bundle.task.originVerification.status,
    },
    counts: { sources: bundle.sources.length, evidence: bundle.evidence.length },
    warnings,
  }
}

export async function inspectBundle(pack: Pack, path: string): Promise<InspectResult> {
  const { bundle, warnings } = await readBundleFile(pack, path)
  return inspectResult(bundle, warnings)
}

export type DestinationStatus =
  | 'uninitialized'
  | 'task-missing'
  | 'task-present'
  | 'already-imported'
  | 'orphaned-import'
  | 'import-conflict'

export interface ImportPlan {
  readOnly: true
  writes: []
  bundle: InspectResult
  destination: {
    status: DestinationStatus
    packInitialized: boolean
    taskExists: boolean
    taskStatus: TaskStatus | null
    importedBundleExists: boolean
    taskId: string | null
  }
  action: {
    outcome: 'create' | 'idempotent' | 'conflict'
    task: 'create' | 'reuse' | 'conflict'
    bundle: 'retain' | 'reuse' | 'blocked'
  }
  conflicts: { kind: 'task-id' | 'destination-state'; message: string }[]
  warnings: string[]
}

export async function planImport(
  pack: Pack,
  path: string,
  o: { asNew?: boolean | undefined } = {},
): Promise<ImportPlan> {
  const { bundle, warnings } = await readBundleFile(pack, path)
  return planFor(pack, bundle, warnings, o)
}

export function storageId(bundleId: string): string {
  return bundleId.replace(':', '-')
}

interface Retained {
  taskId: string
  valid: boolean
  error: string
  manifestPath: string
}

export async function retainedImports(pack: Pack, bundle: TaskBundle): Promise<Retained[]> {
  const entries = await readdir(pack.path('tasks'), { withFileTypes: true }).catch((e: unknown) =>
    isMissing(e) ? [] : Promise.reject(e),
  )
  const out: Retained[] = []
  for (const e of entries) {
    if (!e.isDirectory()) continue
    for (const sid of [...new Set([storageId(bundle.bundleId), bundle.bundleId])]) {
      const bundlePath = pack.path('tasks', e.name, 'imports', `${sid}.bundle.json`)
      const manifestPath = pack.path('tasks', e.name, 'imports', `${sid}.import.json`)
      if (
        !(await lstat(bundlePath).then(
          () => true,
          () => false,
        ))
      )
        continue
      try {
        const kept = await readBundleFile(pack, relative(pack.root, bundlePath))
        const manifest = await readJson<Record<string, unknown> | null>(manifestPath, null)
        if (kept.bundle.bundleId !== bundle.bundleId || kept.bundle.task.id !== bundle.task.id)
          throw new Error(`it does not match source task ${bundle.task.id}`)
        if (!manifest || manifest['bundleId'] !== bundle.bundleId || manifest['destinationTaskId'] !== e.name)
          throw new Error('its import manifest is missing or does not match')
        out.push({ taskId: e.name, valid: true, error: '', manifestPath })
      } catch (err) {
        const why = err instanceof Error ? err.message : String((err as { message?: unknown }).message ?? err)
        out.push({
          taskId: e.name,
          valid: false,
          error: `retained import of ${bundle.bundleId} under task ${e.name} is invalid: ${why}`,
          manifestPath,
        })
      }
    }
  }
  return out
}

/** The plan for a bundle already read and checked (planImport reads it from a file). */
export async function planFor(
  pack: Pack,
  bundle: TaskBundle,
  bundleWarnings: string[],
  o: { asNew?: boolean | undefined },
): Promise<ImportPlan> {
  const summary = inspectResult(bundle, bundleWarnings)
  const initialized = await pack.initialized()
  const warnings = [...bundleWarnings]
  const conflicts: ImportPlan['conflicts'] = []
  const retained = initialized ? await retainedImports(pack, bundle) : []
  const valid = retained.filter((x) => x.valid)
  for (const x of retained) if (!x.valid) conflicts.push({ kind: 'destination-state', message: x.error })
  if (valid.length > 1)
    conflicts.push({
      kind: 'destination-state',
      message: `Bundle ${bundle.bundleId} is retained under multiple destination tasks: ${valid.map((x) => x.taskId).join(', ')}.`,
    })
  const kept = valid.length === 1 && conflicts.length === 0 ? valid[0] : undefined
  const originExists = initialized && (await passportExists(pack, bundle.task.id))
  let taskId = kept?.taskId ?? bundle.task.id
  if (!kept && originExists && o.asNew && conflicts.length === 0) taskId = await remappedId(pack, bundle)
  const taskExists = initialized && (await passportExists(pack, taskId))
  const taskStatus = taskExists ? (await readPassport(pack, taskId)).status : null
  let status: DestinationStatus
  let action: ImportPlan['action']
  const blocked = { outcome: 'conflict', task: 'conflict', bundle: 'blocked' } as const
  if (conflicts.length) {
    status = 'import-conflict'
    action = blocked
  } else if (kept && taskExists) {
    status = 'already-imported'
    action = { outcome: 'idempotent', task: 'reuse', bundle: 'reuse' }
  } else if (kept) {
    conflicts.push({
      kind: 'destination-state',
      message: `Retained import record exists for ${bundle.bundleId}, but task ${taskId} is missing.`,
    })
    status = 'orphaned-import'
    action = blocked
  } else if (originExists && !o.asNew) {
    conflicts.push({
      kind: 'task-id',
      message: `Task ${bundle.task.id} already exists without matching imported bundle ${bundle.bundleId}.`,
    })
    status = 'task-present'
    action = blocked
  } else {
    status = initialized ? 'task-missing' : 'uninitialized'
    action = { outcome: 'create', task: 'create', bundle: 'retain' }
    if (!initialized)
      warnings.push('destination pack is not initialized; a future write import would require agentpack init')
  }
  if (initialized && action.outcome === 'create') warnings.push(...(await sourceWarnings(pack, bundle)))
  return {
    readOnly: true,
    writes: [],
    bundle: summary,
    destination: {
      status,
      packInitialized: initialized,
      taskExists,
      taskStatus,
      importedBundleExists: retained.length > 0,
      taskId,
    },
    action,
    conflicts,
    warnings,
  }
}

async function remappedId(pack: Pack, bundle: TaskBundle): Promise<string> {
  const base = `${bundle.task.id}_import_${bundle.bundleId.slice(7, 19)}`
  let candidate = base
  for (
    let n = 2;
    await lstat(pack.path('tasks', candidate)).then(
      () => true,
      () => false,
    );
    n++
  )
    candidate = `${base}_${n}`
  return candidate
}

async function sourceWarnings(pack: Pack, bundle: TaskBundle): Promise<string[]> {
  const local = new Map((await pack.sources()).sources.map((s) => [s.path, s]))
  const out: string[] = []
  for (const s of bundle.sources) {
    const mine = local.get(s.path)
    if (mine) {
      if (mine.hash !== s.hash) out.push(`source ${s.path} has a different local conclusion; the local record will win`)
      continue
    }
    const h = await hashFile(join(pack.root, s.path))
    if (h === null) out.push(`source ${s.path} is missing locally and will not be added to Source Cache`)
    else if (h !== s.hash) out.push(`source ${s.path} has a different local hash and will not be added to Source Cache`)
  }
  return out
}

async function referencedEvidence(pack: Pack, ids: readonly string[]): Promise<BundleEvidence[]> {
  const wanted = [...new Set(ids)]
  if (wanted.length > MAX_EVIDENCE) throw refuse('invalid', `a bundle carries at most ${MAX_EVIDENCE} evidence items`)
  if (wanted.length === 0) return []
  const byId = new Map((await pack.events()).filter((e) => e.type === 'evidence').map((e) => [e.id, e]))
  return Promise.all(
    wanted.map(async (id) => {
      const e = byId.get(id)
      if (!e)
        throw refuse(
          'not_found',
          `the passport's verification references evidence ${id}, which the ledger does not have`,
        )
      return evidenceItem(pack, e)
    }),
  )
}

async function evidenceItem(pack: Pack, e: PackEvent): Promise<BundleEvidence> {
  const p = typeof e['path'] === 'string' ? e['path'] : ''
  if (!p.startsWith('evidence/')) throw refuse('invalid', `evidence ${e.id} points outside the evidence folder`)
  const { abs } = await resolveRegularFileWithin(pack.path(), p, `evidence ${e.id}`)
  const fh = await open(abs, 'r')
  let content: string
  try {
    const s = await fh.stat()
    if (s.size > MAX_EVIDENCE_CONTENT_BYTES)
      throw refuse('invalid', `evidence ${e.id} is over ${MAX_EVIDENCE_CONTENT_BYTES} bytes`)
    content = (await fh.readFile()).toString('utf8')
  } finally {
    await fh.close()
  }
  return {
    originId: e.id,
    kind: typeof e['kind'] === 'string' ? e['kind'] : 'note',
    command: typeof e['command'] === 'string' ? e['command'] : '',
    exitCode: typeof e['exitCode'] === 'number' ? e['exitCode'] : null,
    content,
    contentDigest: evidenceDigest(content),
  }
}

/** A new file path inside the root, outside .agentpack/ and .git/, reached through no link out. */
async function outputTarget(root: string, input: string): Promise<{ abs: string; rel: string }> {
  if (!input.trim()) throw refuse('invalid', 'bundle_export needs outputPath')
  const rel = repoRelative(root, input, 'bundle output path')
  const top = rel.split('/')[0]
  if (top === '.agentpack' || top === '.git')
    throw refuse('invalid', `refusing a bundle output path inside ${top}/: ${input}`)
  const abs = resolve(root, rel)
  await assertInsideRoot(root, dirname(abs), input)
  if (
    await lstat(abs).then(
      () => true,
      () => false,
    )
  )
    throw refuse('conflict', `Refusing to overwrite existing bundle output: ${input}`)
  return { abs, rel }
}

/** The folder under the pack that MCP exports go to (Agentpack's init creates it too). */
const EXPORTS = 'exports'

/**
 * An MCP export's file: `input` under `.agentpack/exports/` (given with that prefix or without),
 * never outside it, never through a symbolic link, never an existing file. The pack is ignored
 * by git, so an export changes no tracked file and nothing in the work tree a person reviews.
 */
async function exportsTarget(pack: Pack, input: string): Promise<{ abs: string; rel: string }> {
  if (!input.trim()) throw refuse('invalid', 'bundle_export needs outputPath')
  const prefix = `${PACK_DIR}/${EXPORTS}/`
  const name = input.replace(/\\/g, '/').startsWith(prefix) ? input.slice(prefix.length) : input
  const base = pack.path(EXPORTS)
  await mkdir(base, { recursive: true, mode: 0o700 })
  await assertInsideRoot(pack.root, base, input)
  const rel = repoRelative(base, name, `bundle output path (under ${prefix})`)
  const abs = resolve(base, rel)
  await assertInsideRoot(base, dirname(abs), input)
  if (
    await lstat(abs).then(
      () => true,
      () => false,
    )
  )
    throw refuse('conflict', `Refusing to overwrite existing bundle output: ${prefix}${rel}`)
  return { abs, rel: `${prefix}${rel}` }
}

function repoRelative(root: string, input: string, label: string): string {
  if (!input.trim()) throw refuse('invalid', `${label} must not be empty`)
  if (isAbsolute(input) || /^[A-Za-z]:[\\/]/.test(input))
    throw refuse('invalid', `${label} "${input}" must be relative to the project root`)
  const abs = resolve(root, input)
  if (abs === resolve(root) || !isInside(resolve(root), abs))
    throw refuse('invalid', `${label} "${input}" is outside the project root`)
  return relative(root, abs).split(sep).join('/')
}

/** `dir` must really be inside the root: its existing part resolved, no symlink out (lib/inside-root.ts). */
async function assertInsideRoot(root: string, dir: string, input: string): Promise<void> {
  const where = await resolveInsideRoot(root, dir)
  if (where.ok) return
  if (where.why === 'not-directory')
    throw refuse('invalid', `refusing bundle output path ${input}: it goes through a file, not a directory`)
  if (where.why === 'nul' || where.why === 'unresolvable')
    throw refuse('invalid', `cannot resolve bundle output path ${input}${where.code ? ` (${where.code})` : ''}`)
  throw refuse(
    'invalid',
    `refusing bundle output path ${input}: it goes through a symbolic link out of the project root`,
  )
}

/** A remote URL without user info, query or fragment; local paths and file: URLs are dropped. */
export function sanitizeRemote(raw: string): string | undefined {
  const v = raw.trim()
  if (!v || v.startsWith('file:') || isAbsolute(v) || v.startsWith('.')) return undefined
  const url = v.startsWith('git+') ? v.slice(4) : v
  if (/^(?:https?|ssh):\/\//i.test(url)) {
    try {
      const u = new URL(url)
      u.username = ''
      u.password = ''
      u.search = ''
      u.hash = ''
      return u.toString()
    } catch {
      return undefined
    }
  }
  const scp = /^[^@]+@([^:]+):(.+)$/.exec(v)
  const path = scp?.[2]?.split(/[?#]/, 1)[0]?.replace(/^\/+/, '')
  return scp?.[1] && path ? `ssh://${scp[1]}/${path}` : undefined
}

/**
 * A bundle to read: a regular file under the pack root (relative paths are resolved from it), or
 * an absolute path under a directory the operator allowed (--continuity-bundle-dir), where
 * Agentpack reads a bundle from anywhere. Symbolic links are refused on the way either way.
 */
async function bundleFile(pack: Pack, path: string): Promise<{ abs: string; rel: string }> {
  if (isAbsolute(path))
    for (const dir of pack.o.bundleDirs ?? []) {
      const rel = relative(dir, path)
      if (rel && !rel.startsWith('..') && !isAbsolute(rel)) return resolveRegularFileWithin(dir, rel, 'bundle path')
    }
  return resolveRegularFileWithin(pack.root, path, 'bundle path')
}
