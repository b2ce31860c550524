// Applying an import plan under the pack lock, as one transaction (pack-transaction.ts): every
// new file is staged, then renamed into place (sources.json is the only file replaced, and is
// backed up first); any failure removes what was installed and restores the backup. The
// ledger lines are appended last, once everything else is in place. The current task pointer
// is never touched: an imported task arrives parked, its verification unknown.
// importBundle reads, checks and plans the bundle (bundles.ts) and applies it, here.
import { realpath } from 'node:fs/promises'
import { join } from 'node:path'
import type { TaskBundle } from './bundle-format.ts'
import { stableStringify } from './bundle-format.ts'
import type { ImportPlan } from './bundles.ts'
import { planFor, readBundleFile, retainedImports, storageId } from './bundles.ts'
import { refuse } from './errors.ts'
import { appendLines, createId, jsonText, readJson, SCHEMA_VERSION } from './pack-files.ts'
import { transaction } from './pack-transaction.ts'
import type { StagedFile } from './pack-transaction.ts'
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
  if (plan.action.outcome === 'idempotent') return reusedImport(pack, bundle, plan, taskId)
  const importedAt = new Date().toISOString()
  const existing = await pack.events()
  // Event ids already in the ledger: an imported one that collides gets a fresh id.
  const used = new Set(existing.map((e) => e.id))
  const at = { bundle, importedAt, used }
  const ev = await importEvidence(pack, at, new Map(existing.map((e) => [e.id, e])))
  const src = await importSources(pack, at)
  const asNew = !!o.asNew && taskId !== bundle.task.id
  const passport = await importedPassport(pack, bundle, taskId, importedAt)
  const manifest = importManifest(at, taskId, asNew, ev, src.sources)
  const taskImport: PackEvent = {
    id: createId('evt'),
    ts: importedAt,
    type: 'task-import',
    status: 'parked',
    bundleId: bundle.bundleId,
    sourceTaskId: bundle.task.id,
    destinationTaskId: taskId,
  }
  const events: PackEvent[] = [
    ...ev.events,
    ...src.events,
    {
      id: freshId('evt', used),
      ts: importedAt,
      type: 'bundle-import',
      bundleId: bundle.bundleId,
      sourceTaskId: bundle.task.id,
      destinationTaskId: taskId,
      asNew,
    },
  ]
  const base = join('tasks', taskId)
  const sid = storageId(bundle.bundleId)
  const manifestRel = join(base, 'imports', `${sid}.import.json`)
  const files: StagedFile[] = [
    ...ev.files,
    { rel: join(base, 'passport.json'), content: jsonText(passport), mode: 'create' },
    { rel: join(base, 'events.jsonl'), content: `${JSON.stringify(taskImport)}\n`, mode: 'create' },
    { rel: join(base, 'imports', `${sid}.bundle.json`), content: `${stableStringify(bundle)}\n`, mode: 'create' },
    { rel: manifestRel, content: jsonText(manifest), mode: 'create' },
  ]
  if (src.sourceFile) files.push({ rel: 'sources.json', content: jsonText(src.sourceFile), mode: 'replace' })
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

/** What every part of one import shares: the bundle, its time, and the event ids taken so far. */
interface ImportAt {
  bundle: TaskBundle
  importedAt: string
  used: Set<string>
}

/** What the import did, kept beside the retained bundle: ids as they are here, sources' fates. */
function importManifest(
  at: ImportAt,
  taskId: string,
  asNew: boolean,
  ev: { evidence: ImportManifest['evidence']; idMap: ReadonlyMap<string, string> },
  sources: ImportManifest['sources'],
): ImportManifest {
  return {
    schemaVersion: 1,
    bundleId: at.bundle.bundleId,
    importedAt: at.importedAt,
    sourceTaskId: at.bundle.task.id,
    destinationTaskId: taskId,
    asNew,
    origin: at.bundle.origin,
    originalStatus: at.bundle.task.originalStatus,
    originVerification: {
      ...at.bundle.task.originVerification,
      evidence: at.bundle.task.originVerification.evidence.flatMap((id) => ev.idMap.get(id) ?? []),
    },
    unresolvedOriginEvidence: at.bundle.task.originVerification.evidence.filter((id) => !ev.idMap.has(id)),
    task: { action: 'created', remappedFrom: taskId === at.bundle.task.id ? null : at.bundle.task.id },
    evidence: ev.evidence,
    sources,
  }
}

/** The bundle already imported into `taskId`: its manifest, read back; nothing is written. */
async function reusedImport(pack: Pack, bundle: TaskBundle, plan: ImportPlan, taskId: string): Promise<ImportResult> {
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

/**
 * The bundle's evidence: an item the ledger already holds with the same content is reused;
 * any other gets a new file and an event (a fresh id when its own is taken). `idMap` maps each
 * origin id to the id it has here.
 */
async function importEvidence(pack: Pack, at: ImportAt, byId: ReadonlyMap<string, PackEvent>) {
  const files: StagedFile[] = []
  const events: PackEvent[] = []
  const evidence: ImportManifest['evidence'] = []
  const idMap = new Map<string, string>()
  for (const item of at.bundle.evidence) {
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
    const destinationId = prior || at.used.has(item.originId) ? freshId('evt', at.used) : item.originId
    at.used.add(destinationId)
    const rel = join('evidence', `${createId('ev')}.${item.kind === 'json' ? 'json' : 'txt'}`)
    files.push({ rel, content: item.content, mode: 'create' })
    events.push({
      id: destinationId,
      ts: at.importedAt,
      type: 'evidence',
      kind: item.kind,
      path: rel,
      command: item.command,
      exitCode: item.exitCode,
      importedFrom: item.originId,
      bundleId: at.bundle.bundleId,
    })
    evidence.push({
      originId: item.originId,
      destinationId,
      contentDigest: item.contentDigest,
      action: prior ? 'remapped' : 'created',
    })
    idMap.set(item.originId, destinationId)
  }
  return { files, events, evidence, idMap }
}

/**
 * The bundle's Source Cache records: a local conclusion always wins; a record is added only when
 * the local file is a plain file inside the root with the same hash. `sourceFile` is the new
 * sources.json when one was added.
 */
async function importSources(pack: Pack, at: ImportAt) {
  const sourceFile = await pack.sources()
  const known = new Set(sourceFile.sources.map((s) => s.path))
  const sources: ImportManifest['sources'] = []
  const events: PackEvent[] = []
  const skip = (s: { path: string; hash: string }, reason: string) =>
    sources.push({ path: s.path, hash: s.hash, action: 'skipped', reason })
  for (const s of at.bundle.sources) {
    if (known.has(s.path)) {
      sources.push({ path: s.path, hash: s.hash, action: 'reused', reason: 'existing local conclusion wins' })
      continue
    }
    const h = await hashFile(join(pack.root, s.path))
    if (h === null) {
      skip(s, 'local source file is missing')
      continue
    }
    if (h !== s.hash) {
      skip(s, 'local source hash does not match imported hash')
      continue
    }
    const record = await fileRecord(pack.root, s.path, { summary: s.summary, snippet: s.snippet }).catch(
      () => undefined,
    )
    if (!record || record.hash !== s.hash) {
      skip(s, 'local source file is not a plain file inside the root')
      continue
    }
    sourceFile.sources.push(record)
    known.add(s.path)
    sources.push({ path: s.path, hash: s.hash, action: 'created', reason: 'local source hash matches imported hash' })
    events.push({
      id: freshId('evt', at.used),
      ts: at.importedAt,
      type: 'source-import',
      path: s.path,
      hash: s.hash,
      summary: s.summary,
      bundleId: at.bundle.bundleId,
    })
  }
  return { sources, events, sourceFile: events.length > 0 ? sourceFile : undefined }
}

/** The imported task's passport: parked, its verification unknown, on this worktree's branch and head. */
async function importedPassport(
  pack: Pack,
  bundle: TaskBundle,
  taskId: string,
  importedAt: string,
): Promise<TaskPassport> {
  const [refs, head] = await Promise.all([pack.git.refs(), pack.git.short()])
  return {
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
