// The Source Cache: a durable conclusion about a file, valid while the file's sha256 matches.
// Checking 500 records re-hashes 500 files in Agentpack on every load_context; here a hash is
// memoised per (path, size, mtime, ctime, inode) for the life of the process, so an unchanged
// file costs one stat (a changed one is re-hashed: any write moves mtime/ctime).
import { createHash } from 'node:crypto'
import { lstat, open, readFile, realpath, stat } from 'node:fs/promises'
import { isAbsolute, join, relative, resolve, sep } from 'node:path'
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
 * path stays inside the real root; returns the absolute path and the repo-relative POSIX path.
 */
export async function resolveRegularFileWithin(
  root: string,
  input: string,
  label: string,
): Promise<{ abs: string; rel: string }> {
  const absRoot = resolve(root)
  const abs = resolve(absRoot, input)
  const rel = relative(absRoot, abs)
  if (!rel || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel))
    throw refuse('invalid', `${label} "${input}" is outside the project root; give a repo-relative path`)
  let current = absRoot
  const parts = rel.split(sep).filter(Boolean)
  for (const [i, part] of parts.entries()) {
    current = join(current, part)
    const s = await lstat(current).catch((e: unknown) => {
      throw isMissing(e) ? refuse('not_found', `${label} "${input}" does not exist`) : e
    })
    if (s.isSymbolicLink()) throw refuse('invalid', `${label} "${input}" goes through a symbolic link; refused`)
    if (i < parts.length - 1 && !s.isDirectory())
      throw refuse('invalid', `${label} "${input}" goes through a non-directory`)
    if (i === parts.length - 1 && !s.isFile()) throw refuse('invalid', `${label} "${input}" is not a regular file`)
  }
  const realRel = relative(await realpath(absRoot), await realpath(abs))
  if (!realRel || realRel.startsWith(`..${sep}`) || isAbsolute(realRel))
    throw refuse('invalid', `${label} "${input}" resolves outside the project root`)
  return { abs, rel: rel.split(sep).join('/') }
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
