// Task bundle export: one passport, its handoff, the Source Cache records asked for and the
// evidence its verification references, redacted (secrets, the worktree's path) and written to a
// new file (bundle-output.ts says where it may go). What a bundle carries and how it is checked
// is bundle-format.ts; reading, inspecting and planning an import is bundles.ts.
//
// What a bundle carries: the passport's task fields, a handoff text, the Source Cache records
// named in `sources`, and the evidence the passport's verification references. It carries no
// decisions, dead ends, checkpoints or ledger history.
import { mkdir, open } from 'node:fs/promises'
import { dirname, isAbsolute, sep } from 'node:path'
import {
  BUNDLE_KIND,
  BUNDLE_SCHEMA,
  digestPayload,
  evidenceDigest,
  MAX_BUNDLE_BYTES,
  MAX_EVIDENCE,
  MAX_EVIDENCE_CONTENT_BYTES,
  MAX_SOURCES,
  PRODUCER_NAME,
  stableStringify,
} from './bundle-format.ts'
import type { BundleEvidence, BundleOrigin, BundlePayload, BundleSource, TaskBundle } from './bundle-format.ts'
import { assertInsideRoot, exportsTarget, outputTarget, repoRelative } from './bundle-output.ts'
import type { OutputTarget } from './bundle-output.ts'
import { refuse, throwIfAborted } from './errors.ts'
import { FILE_MODE } from './pack-files.ts'
import { currentPassport, readPassport } from './passports.ts'
import { formatHandoff } from './reports.ts'
import { resolveRegularFileWithin } from './sources.ts'
import type { Pack } from './store.ts'
import type { PackEvent } from './types.ts'

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
  const sources = await bundleSources(pack, o.sources ?? [])
  const evidence = o.includeEvidence === false ? [] : await referencedEvidence(pack, passport.verification.evidence)
  const payload = await redacted(pack, {
    kind: BUNDLE_KIND,
    schemaVersion: BUNDLE_SCHEMA,
    producer: { name: PRODUCER_NAME, version: o.producerVersion },
    origin: await bundleOrigin(pack),
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
  const bytes = await writeBundle(pack, out, bundle, o)
  return {
    bundleId: bundle.bundleId,
    outputPath: out.rel,
    taskId: passport.id,
    sources: sources.length,
    evidence: evidence.length,
    bytes,
  }
}

/** The Source Cache records named, each path once, in path order; a path never recorded is refused. */
async function bundleSources(pack: Pack, paths: readonly string[]): Promise<BundleSource[]> {
  const sourcePaths = [...new Set(paths.map((p) => repoRelative(pack.root, p, 'bundle source path')))].sort()
  if (sourcePaths.length > MAX_SOURCES) throw refuse('invalid', `a bundle carries at most ${MAX_SOURCES} sources`)
  const records = new Map((await pack.sources()).sources.map((s) => [s.path, s]))
  return sourcePaths.map((p) => {
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
}

/** Where the task comes from: the project's name, its remote (without credentials), branch and head. */
async function bundleOrigin(pack: Pack): Promise<BundleOrigin> {
  const [refs, head, originUrl, config] = await Promise.all([
    pack.git.refs(),
    pack.git.short(),
    pack.git.originUrl(),
    pack.config(),
  ])
  const repository = sanitizeRemote(originUrl)
  return {
    projectName: config.projectName || pack.root.split(sep).pop() || 'project',
    ...(repository ? { repository } : {}),
    branch: refs.branch,
    head,
  }
}

/** The payload with the pack's secrets redacted and the worktree's absolute path replaced. */
async function redacted(pack: Pack, payload: BundlePayload): Promise<BundlePayload> {
  const r = await pack.redactor()
  const text = JSON.stringify(r.redactDeep(payload))
    .split(JSON.stringify(pack.root).slice(1, -1))
    .join('[REDACTED:WORKTREE]')
  return JSON.parse(text) as BundlePayload
}

/** Writes the bundle to a new file (never over one); resolves to its size in bytes. */
async function writeBundle(pack: Pack, out: OutputTarget, bundle: TaskBundle, o: ExportOptions): Promise<number> {
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
  return bytes
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
