// Applying an import plan under the pack lock, as one transaction: every new file is staged
// under cache/.transaction-<id>/, then renamed into place (sources.json is the only file
// replaced, and is backed up first); any failure removes what was installed and restores the
// backup. The ledger lines are appended last, once everything else is in place. The current
// task pointer is never touched: an imported task arrives parked, its verification unknown.
// importBundle reads, checks and plans the bundle (bundles.ts) and applies it, here.
import { lstat, mkdir, realpath, rename, rm, rmdir, unlink } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import type { TaskBundle } from './bundle-format.ts'
import { stableStringify } from './bundle-format.ts'
import type { ImportPlan } from './bundles.ts'
import { planFor, readBundleFile, retainedImports, storageId } from './bundles.ts'
import { refuse } from './errors.ts'
import { appendLines, createId, DIR_MODE, jsonText, readJson, SCHEMA_VERSION, writeFilePrivate } from './pack-files.ts'
import { fileRecord, hashFile, resolveRegularFileWithin } from './sources.ts'
import type { Pack } from './store.ts'
import type { PackEvent, TaskPassport } from './types.ts'

export interface ImportManifest {
  schemaVersion: 1
  bundleId: string
  importedAt: string
  sourceTaskId: string
  destinationTaskId: string
  asNew: boolean
  origin: TaskBundle['origin']
  originalStatus: TaskBundle['task']['originalStatus']
  originVerification: TaskBundle['task']['originVerification']
  unresolvedOriginEvidence: string[]
  task: { action: 'created' | 'reused'; remappedFrom: string | null }
  evidence: {
    originId: string
    destinationId: string
    contentDigest: string
    action: 'created' | 'reused' | 'remapped'
  }[]
  sources: { path: string; hash: string; action: 'created' | 'reused' | 'skipped'; reason: string }[]
}

export interface ImportResult {
  applied: boolean
  idempotent: boolean
  bundleId: string
  taskId: string
  manifestPath: string
  plan: ImportPlan
  manifest: ImportManifest
}

interface StagedFile {
  rel: string
  content: string
  mode: 'create' | 'replace'
}

export async function importBundle(pack: Pack, path: string, o: { asNew?: boolean | undefined } = {}) {
  await pack.requireInitialized()
  return pack.write(async () => {
    const { bundle, warnings } = await readBundleFile(pack, path)
    const r = await pack.redactor()
    if (stableStringify(r.redactDeep(bundle)) !== stableStringify(bundle))
      throw refuse(
        'invalid',
        'the bundle holds values this pack would redact (secrets or tokens); refusing to import it',
      )
    const plan = await planFor(pack, bundle, warnings, o)
    return applyImport(pack, bundle, plan, o)
  })
}

async function applyImport(
  pack: Pack,
  bundle: TaskBundle,
  plan: ImportPlan,
  o: { asNew?: boolean | undefined },
): Promise<ImportResult> {
  if (plan.action.outcome === 'conflict')
    throw refuse('conflict', `Bundle import conflict: ${plan.conflicts.map((c) => c.message).join('; ')}`)
  const taskId = plan.destination.taskId as string
  if (plan.action.outcome === 'idempotent') {
    const kept = (await retainedImports(pack, bundle)).find((x) => x.valid && x.taskId === taskId)
    const manifest = kept ? await readJson<ImportManifest | null>(kept.manifestPath, null) : null
    if (!kept || !manifest)
      throw refuse(
        'conflict',
        `bundle ${bundle.bundleId} is retained for task ${taskId}, but its import manifest is missing`,
      )
    return {
      applied: false,
      idempotent: true,
      bundleId: bundle.bundleId,
      taskId,
      manifestPath: `.agentpack/tasks/${taskId}/imports/${storageId(bundle.bundleId)}.import.json`,
      plan,
      manifest: { ...manifest, task: { ...manifest.task, action: 'reused' } },
    }
  }
  const importedAt = new Date().toISOString()
  const existing = await pack.events()
  const used = new Set(existing.map((e) => e.id))
  const byId = new Map(existing.map((e) => [e.id, e]))
  const files: StagedFile[] = []
  const events: PackEvent[] = []
  const evidence: ImportManifest['evidence'] = []
  const idMap = new Map<string, string>()
  for (const item of bundle.evidence) {
    const prior = byId.get(item.originId)
    if (prior && (await evidenceMatches(pack, prior, item.contentDigest))) {
      evidence.push({
        originId: item.originId,
        destinationId: item.originId,
        contentDigest: item.contentDigest,
        action: 'reused',
      })
      idMap.set(item.originId, item.originId)
      continue
    }
    const destinationId = prior || used.has(item.originId) ? freshId('evt', used) : item.originId
    used.add(destinationId)
    const rel = join('evidence', `${createId('ev')}.${item.kind === 'json' ? 'json' : 'txt'}`)
    files.push({ rel, content: item.content, mode: 'create' })
    events.push({
      id: destinationId,
      ts: importedAt,
      type: 'evidence',
      kind: item.kind,
      path: rel,
      command: item.command,
      exitCode: item.exitCode,
      importedFrom: item.originId,
      bundleId: bundle.bundleId,
    })
    evidence.push({
      originId: item.originId,
      destinationId,
      contentDigest: item.contentDigest,
      action: prior ? 'remapped' : 'created',
    })
    idMap.set(item.originId, destinationId)
  }
  const sourceFile = await pack.sources()
  const known = new Set(sourceFile.sources.map((s) => s.path))
  const sources: ImportManifest['sources'] = []
  let sourcesChanged = false
  for (const s of bundle.sources) {
    if (known.has(s.path)) {
      sources.push({ path: s.path, hash: s.hash, action: 'reused', reason: 'existing local conclusion wins' })
      continue
    }
    const h = await hashFile(join(pack.root, s.path))
    if (h === null) {
      sources.push({ path: s.path, hash: s.hash, action: 'skipped', reason: 'local source file is missing' })
      continue
    }
    if (h !== s.hash) {
      sources.push({
        path: s.path,
        hash: s.hash,
        action: 'skipped',
        reason: 'local source hash does not match imported hash',
      })
      continue
    }
    const record = await fileRecord(pack.root, s.path, { summary: s.summary, snippet: s.snippet }).catch(
      () => undefined,
    )
    if (!record || record.hash !== s.hash) {
      sources.push({
        path: s.path,
        hash: s.hash,
        action: 'skipped',
        reason: 'local source file is not a plain file inside the root',
      })
      continue
    }
    sourceFile.sources.push(record)
    known.add(s.path)
    sourcesChanged = true
    sources.push({ path: s.path, hash: s.hash, action: 'created', reason: 'local source hash matches imported hash' })
    events.push({
      id: freshId('evt', used),
      ts: importedAt,
      type: 'source-import',
      path: s.path,
      hash: s.hash,
      summary: s.summary,
      bundleId: bundle.bundleId,
    })
  }
  const [refs, head] = await Promise.all([pack.git.refs(), pack.git.short()])
  const asNew = !!o.asNew && taskId !== bundle.task.id
  const passport: TaskPassport = {
    schemaVersion: SCHEMA_VERSION,
    id: taskId,
    title: bundle.task.title,
    status: 'parked',
    createdAt: importedAt,
    updatedAt: importedAt,
    closedAt: null,
    objective: bundle.task.objective,
    constraints: [...bundle.task.constraints],
    branch: refs.branch,
    baseHead: head,
    currentHead: head,
    worktree: await realpath(pack.root),
    writeScope: [...bundle.task.writeScope],
    risk: bundle.task.risk,
    verification: { status: 'unknown', evidence: [], summary: '' },
    nextActions: [...bundle.task.nextActions],
    tags: [...bundle.task.tags],
  }
  const manifest: ImportManifest = {
    schemaVersion: 1,
    bundleId: bundle.bundleId,
    importedAt,
    sourceTaskId: bundle.task.id,
    destinationTaskId: taskId,
    asNew,
    origin: bundle.origin,
    originalStatus: bundle.task.originalStatus,
    originVerification: {
      ...bundle.task.originVerification,
      evidence: bundle.task.originVerification.evidence.flatMap((id) => idMap.get(id) ?? []),
    },
    unresolvedOriginEvidence: bundle.task.originVerification.evidence.filter((id) => !idMap.has(id)),
    task: { action: 'created', remappedFrom: taskId === bundle.task.id ? null : bundle.task.id },
    evidence,
    sources,
  }
  const taskImport: PackEvent = {
    id: createId('evt'),
    ts: importedAt,
    type: 'task-import',
    status: 'parked',
    bundleId: bundle.bundleId,
    sourceTaskId: bundle.task.id,
    destinationTaskId: taskId,
  }
  events.push({
    id: freshId('evt', used),
    ts: importedAt,
    type: 'bundle-import',
    bundleId: bundle.bundleId,
    sourceTaskId: bundle.task.id,
    destinationTaskId: taskId,
    asNew,
  })
  const base = join('tasks', taskId)
  const sid = storageId(bundle.bundleId)
  const manifestRel = join(base, 'imports', `${sid}.import.json`)
  files.push(
    { rel: join(base, 'passport.json'), content: jsonText(passport), mode: 'create' },
    { rel: join(base, 'events.jsonl'), content: `${JSON.stringify(taskImport)}\n`, mode: 'create' },
    { rel: join(base, 'imports', `${sid}.bundle.json`), content: `${stableStringify(bundle)}\n`, mode: 'create' },
    { rel: manifestRel, content: jsonText(manifest), mode: 'create' },
  )
  if (sourcesChanged) files.push({ rel: 'sources.json', content: jsonText(sourceFile), mode: 'replace' })
  await transaction(pack, files)
  await appendLines(
    pack.path('events.jsonl'),
    events.map((e) => JSON.stringify(e)),
  )
  return {
    applied: true,
    idempotent: false,
    bundleId: bundle.bundleId,
    taskId,
    manifestPath: `.agentpack/${manifestRel}`,
    plan,
    manifest,
  }
}

async function transaction(pack: Pack, files: readonly StagedFile[]): Promise<void> {
  const txRoot = pack.path('cache', `.transaction-${createId('import')}`)
  let keep = false
  try {
    await safeDirChain(pack, join('cache', 'x'))
    await mkdir(join(txRoot, 'staged'), { recursive: true, mode: DIR_MODE })
    const staged = await Promise.all(
      files.map(async (f, i) => {
        await safeDirChain(pack, f.rel)
        const path = join(txRoot, 'staged', String(i))
        await writeFilePrivate(path, f.content)
        return { ...f, staged: path, target: pack.path(f.rel) }
      }),
    )
    const backups: { target: string; backup: string }[] = []
    const installed: string[] = []
    const made: string[] = []
    try {
      for (const [i, f] of staged.entries()) {
        if (
          !(await lstat(f.target).then(
            () => true,
            () => false,
          ))
        )
          continue
        if (f.mode === 'create') throw refuse('conflict', `bundle import refuses to overwrite ${f.rel}`)
        const backup = join(txRoot, 'backup', String(i))
        await mkdir(dirname(backup), { recursive: true, mode: DIR_MODE })
        await rename(f.target, backup)
        backups.push({ target: f.target, backup })
      }
      for (const f of staged) {
        await mkdirTracked(dirname(f.target), pack.path(), made)
        await rename(f.staged, f.target)
        installed.push(f.target)
      }
    } catch (e) {
      let incomplete = false
      for (const p of installed.reverse()) await unlink(p).catch(() => (incomplete = true))
      for (const b of backups.reverse()) await rename(b.backup, b.target).catch(() => (incomplete = true))
      for (const d of made.reverse()) await rmdir(d).catch(() => undefined)
      if (incomplete) {
        keep = true
        throw refuse(
          'conflict',
          `bundle import failed and could not undo everything; recovery files remain in ${txRoot}`,
        )
      }
      throw e
    }
  } finally {
    if (!keep) await rm(txRoot, { recursive: true, force: true })
  }
}

/** Every existing directory from .agentpack/ down to the file's parent is a real directory. */
async function safeDirChain(pack: Pack, rel: string): Promise<void> {
  let at = pack.path()
  for (const part of [
    '',
    ...dirname(rel)
      .split(/[\\/]/)
      .filter((p) => p && p !== '.'),
  ]) {
    at = part ? join(at, part) : at
    const s = await lstat(at).catch(() => undefined)
    if (!s) return
    if (s.isSymbolicLink() || !s.isDirectory())
      throw refuse('invalid', `bundle import refuses ${at}: not a plain directory`)
  }
}

async function mkdirTracked(dir: string, stop: string, made: string[]): Promise<void> {
  if (
    dir === stop ||
    (await lstat(dir).then(
      () => true,
      () => false,
    ))
  )
    return
  await mkdirTracked(dirname(dir), stop, made)
  await mkdir(dir, { mode: DIR_MODE })
  made.push(dir)
}

async function evidenceMatches(pack: Pack, e: PackEvent, digest: string): Promise<boolean> {
  const p = e['path']
  if (e.type !== 'evidence' || typeof p !== 'string' || !p.startsWith('evidence/') || p.includes('..')) return false
  const h = await resolveRegularFileWithin(pack.path(), p, 'evidence')
    .then((f) => hashFile(f.abs))
    .catch(() => null)
  return h !== null && `sha256:${h}` === digest
}

function freshId(prefix: string, used: Set<string>): string {
  let id = createId(prefix)
  while (used.has(id)) id = createId(prefix)
  used.add(id)
  return id
}
