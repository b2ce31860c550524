// The Source Cache: a durable conclusion about a file, valid while the file's sha256 matches.
// Checking 500 records re-hashes 500 files in Agentpack on every load_context; here a hash is
// memoised per (path, size, mtime, ctime, inode) for the life of the process, so an unchanged
// file costs one stat (a changed one is re-hashed: any write moves mtime/ctime).
import { createHash } from 'node:crypto'
import { open, readFile, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { type OutsideRoot, resolveInsideRoot } from '../../lib/inside-root.ts'
import type { PluginFailure } from '../../core/src/plugin-api.ts'
import { refuse } from './errors.ts'
import { isMissing } from './pack-files.ts'
import type { SourceRecord } from './types.ts'

export type SourceState = 'unchanged' | 'changed' | 'missing'

const memo = new Map<string, { key: string; hash: string }>()
const MEMO_LIMIT = 20_000

export function sha256(content: string | Buffer): string {
  return createHash('sha256').update(content).digest('hex')
}

/** The file's sha256, or null when it is missing (or not a regular file). */
export async function hashFile(abs: string): Promise<string | null> {
  let s: Awaited<ReturnType<typeof stat>>
  try {
    s = await stat(abs)
  } catch (e) {
    if (isMissing(e) || (e as NodeJS.ErrnoException).code === 'ENOTDIR') return null
    throw e
  }
  if (!s.isFile()) return null
  const key = `${s.size}:${s.mtimeMs}:${s.ctimeMs}:${s.ino}`
  const hit = memo.get(abs)
  if (hit && hit.key === key) return hit.hash
  const hash = sha256(await readFile(abs))
  if (memo.size >= MEMO_LIMIT) memo.clear()
  memo.set(abs, { key, hash })
  return hash
}

export function stateOf(record: SourceRecord, hash: string | null): SourceState {
  return hash === null ? 'missing' : hash === record.hash ? 'unchanged' : 'changed'
}

/** Current hashes of many records (null: missing), with bounded parallelism (file descriptors are shared). */
export async function sourceHashes(root: string, records: readonly SourceRecord[]): Promise<(string | null)[]> {
  const out: (string | null)[] = new Array(records.length)
  let next = 0
  const worker = async () => {
    for (let i = next++; i < records.length; i = next++)
      out[i] = await hashFile(join(root, (records[i] as SourceRecord).path))
  }
  await Promise.all(Array.from({ length: Math.min(16, records.length) }, worker))
  return out
}

export async function sourceStates(root: string, records: readonly SourceRecord[]): Promise<SourceState[]> {
  const hashes = await sourceHashes(root, records)
  return records.map((r, i) => stateOf(r, hashes[i] ?? null))
}

/**
 * A regular file inside `root`, reached without a symbolic link at any step and whose real
 * path stays inside the real root (lib/inside-root.ts, links refused); returns the absolute
 * path and the repo-relative POSIX path.
 */
export async function resolveRegularFileWithin(
  root: string,
  input: string,
  label: string,
): Promise<{ abs: string; rel: string }> {
  const named = `${label} "${input}"`
  const where = await resolveInsideRoot(root, input, { symlinks: 'refuse' })
  if (!where.ok) throw notWithin(named, where.why, where.code)
  if (where.rel === '') throw refuse('invalid', `${named} is outside the project root; give a repo-relative path`)
  if (where.kind === undefined) throw refuse('not_found', `${named} does not exist`)
  if (where.kind !== 'file') throw refuse('invalid', `${named} is not a regular file`)
  return { abs: where.abs, rel: where.rel }
}

/** A refusal of lib/inside-root.ts in continuity's words. */
function notWithin(named: string, why: OutsideRoot, code: string | undefined): PluginFailure {
  switch (why) {
    case 'outside':
      return refuse('invalid', `${named} is outside the project root; give a repo-relative path`)
    case 'symlink':
    case 'dangling':
      return refuse('invalid', `${named} goes through a symbolic link; refused`)
    case 'not-directory':
      return refuse('invalid', `${named} goes through a non-directory`)
    case 'escapes':
      return refuse('invalid', `${named} resolves outside the project root`)
    case 'nul':
      return refuse('invalid', `${named} contains a NUL character`)
    case 'unresolvable':
      return code === 'ENOENT'
        ? refuse('not_found', `${named} does not exist`)
        : refuse('invalid', `${named} cannot be checked (${code ?? 'unknown error'})`)
  }
}

export async function fileRecord(
  root: string,
  input: string,
  extra: { summary: string; snippet: string },
): Promise<SourceRecord> {
  const { abs, rel } = await resolveRegularFileWithin(root, input, 'source file')
  const content = await readFile(abs)
  const s = await stat(abs)
  return {
    path: rel,
    hash: sha256(content),
    size: s.size,
    mtimeMs: Math.trunc(s.mtimeMs),
    recordedAt: new Date().toISOString(),
    summary: extra.summary,
    snippet: extra.snippet,
  }
}

/** Reads at most `bytes` from the start of a file. */
export async function readHead(abs: string, bytes: number): Promise<string> {
  const fh = await open(abs, 'r')
  try {
    const buf = Buffer.alloc(bytes)
    const { bytesRead } = await fh.read(buf, 0, bytes, 0)
    return buf.subarray(0, bytesRead).toString('utf8')
  } finally {
    await fh.close()
  }
}
