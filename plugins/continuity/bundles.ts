// Task bundles, read: an untrusted `agentpack.task-bundle` file read from under the pack root
// (or a directory the operator allowed), checked (bundle-format.ts), inspected, and planned as an
// import without writing (bundle-import.ts applies the plan; bundle-export.ts writes bundles).
// Unlike Agentpack, a bundle path outside the root is refused, and reading never follows a
// symbolic link out of it.
import { lstat, open, readdir } from 'node:fs/promises'
import { isAbsolute, join, relative } from 'node:path'
import { MAX_BUNDLE_BYTES, parseBundle } from './bundle-format.ts'
import type { BundleOrigin, TaskBundle } from './bundle-format.ts'
import { refuse } from './errors.ts'
import { isMissing, readJson } from './pack-files.ts'
import { passportExists, readPassport } from './passports.ts'
import { hashFile, resolveRegularFileWithin } from './sources.ts'
import type { Pack } from './store.ts'
import type { TaskStatus, TaskVerification } from './types.ts'

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
