import fs from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import { fsyncDirAsync } from './store.ts'
import { packIndexed, QUARANTINE_PREFIX, TMP_PREFIX } from './objects.ts'

// Refs read and compare-and-swapped in-process, the way git's files backend does it:
// take `<ref>.lock` (O_EXCL, so git and we exclude each other), check the current value
// (loose file, else packed-refs), write the new id, fsync, rename over the ref, fsync the
// directory. No child process is involved, so a killed server can never leave a git
// process behind that moves a ref after the next server has settled its intents; the
// worst a kill leaves is the lock file itself, which start-up removes (settleRepository).

const fsyncAsync = promisify(fs.fsync)
/**
 * How long an update waits for a ref lock another process holds. The server's own writers
 * of a ref exclude each other before they get here (state transactions), so a held lock is
 * git's: `pack-refs --prune` (maintenance) locks each loose ref it folds, for a moment.
 * git itself waits up to 100 ms for a ref lock (core.filesRefLockTimeout) and 1 s for
 * packed-refs; a repack of many refs can hold them back to back, so wait as long as the latter.
 */
export const REF_LOCK_WAIT_MS = 1000

/**
 * Create `lock` exclusively, retrying while another process holds it, up to waitMs (with
 * backoff from 1 ms to 50 ms). The fd, or the error of the last attempt.
 */
async function takeLock(lock: string, waitMs: number, makeDir?: () => void): Promise<number> {
  let waited = 0
  let remade = 0
  makeDir?.()
  for (let pause = 1; ; pause = Math.min(50, pause * 2)) {
    try {
      return fs.openSync(lock, 'wx', 0o644)
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code
      // `git pack-refs --prune` removes a ref directory it emptied, maybe between the mkdir
      // and the open: made again (a workspace write failed with ENOENT during maintenance).
      if (code === 'ENOENT' && makeDir && remade++ < 10) {
        makeDir()
        continue
      }
      if (code !== 'EEXIST' || waited >= waitMs) throw e
    }
    await new Promise((r) => setTimeout(r, pause))
    waited += pause
  }
}
const OID_RE = /^[0-9a-f]{40}$/
// Refs the server itself writes: refs/heads/<branch>, refs/proposals/<id>, ...
const REF_RE = /^refs\/[A-Za-z0-9_][A-Za-z0-9._/-]*$/

export function isPlainRef(ref: string): boolean {
  return (
    REF_RE.test(ref) &&
    !ref.includes('..') &&
    !ref.includes('//') &&
    !ref.endsWith('/') &&
    !ref.endsWith('.lock') &&
    !ref.split('/').some((s) => s.startsWith('.'))
  )
}

/** Does this repository keep refs as files (not reftable)? */
export function usesRefFiles(gitDir: string): boolean {
  try {
    return !/^\s*refstorage\s*=\s*reftable\s*$/im.test(fs.readFileSync(path.join(gitDir, 'config'), 'utf8'))
  } catch {
    return true
  }
}

interface Packed {
  /** inode, size and mtime (ns) of the file parsed: git replaces packed-refs by rename */
  key: string
  refs: Map<string, string>
  /** some refs/replace/ ref is packed (history.ts: then git answers history questions) */
  replace: boolean
}
const packedCache = new Map<string, Packed>()
/** Times packed-refs was read and parsed (tests: an unchanged file is parsed once). */
export const packedParses = { count: 0 }

/**
 * packed-refs as a map, parsed once per version of the file. After `git gc` (pack-refs)
 * every branch and every proposal ref lives there: reading it per request would cost
 * O(refs) for each resolve of a branch.
 */
export function packedRefs(gitDir: string): Packed {
  const file = path.join(gitDir, 'packed-refs')
  // No packed-refs is the common case: answered without an exception (one costs ~6 µs).
  const st = fs.statSync(file, { bigint: true, throwIfNoEntry: false })
  const key = st ? `${st.ino} ${st.size} ${st.mtimeNs}` : ''
  const hit = packedCache.get(gitDir)
  if (hit && hit.key === key) return hit
  const refs = new Map<string, string>()
  let replace = false
  if (key !== '') {
    packedParses.count++
    let text = ''
    try {
      text = fs.readFileSync(file, 'utf8')
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e
    }
    for (const line of text.split('\n')) {
      if (line.length < 42 || line.charCodeAt(40) !== 32) continue
      const ref = line.slice(41)
      if (ref.startsWith('refs/replace/')) replace = true
      const oid = line.slice(0, 40)
      if (OID_RE.test(oid)) refs.set(ref, oid)
    }
  }
  const parsed = { key, refs, replace }
  if (packedCache.size > 100) packedCache.clear()
  packedCache.set(gitDir, parsed)
  return parsed
}

function packedRef(gitDir: string, ref: string): string | null {
  return packedRefs(gitDir).refs.get(ref) ?? null
}

/** The object id a ref holds (following symbolic refs), or null if it does not exist. */
export function readRef(gitDir: string, ref: string, depth = 0): string | null {
  const file = path.join(gitDir, ref)
  let text: string
  try {
    // Resolving a branch name asks whether refs/tags/<name> and refs/<name> exist, and they
    // almost never do: a failed open throws (~8 µs), a stat told not to does not (~1 µs).
    if (fs.statSync(file, { throwIfNoEntry: false }) === undefined) return packedRef(gitDir, ref)
    text = fs.readFileSync(file, 'utf8').trim()
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'EISDIR' || code === 'ENOTDIR') return packedRef(gitDir, ref)
    throw e
  }
  if (text.startsWith('ref: ')) return depth < 5 ? readRef(gitDir, text.slice(5).trim(), depth + 1) : null
  return OID_RE.test(text) ? text : null
}

/**
 * The refs under `prefix` (e.g. 'refs/heads/') with their ids, sorted by name as
 * `git for-each-ref` sorts them: loose files over packed-refs, symbolic refs followed,
 * `.lock` files skipped. undefined when some name is not one this reader is sure to
 * treat as git does (a name outside isPlainRef): the caller asks git.
 */
export function listRefs(gitDir: string, prefix: string): { ref: string; oid: string }[] | undefined {
  const found = new Map<string, string>()
  for (const [ref, oid] of packedRefs(gitDir).refs) {
    if (!ref.startsWith(prefix)) continue
    if (!isPlainRef(ref)) return undefined
    found.set(ref, oid)
  }
  const walk = (dir: string): boolean => {
    let names: fs.Dirent[]
    try {
      names = fs.readdirSync(path.join(gitDir, dir), { withFileTypes: true })
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return true
      throw e
    }
    for (const d of names) {
      const ref = `${dir}/${d.name}`
      if (d.isDirectory()) {
        if (!walk(ref)) return false
        continue
      }
      if (d.name.endsWith('.lock')) continue
      if (!isPlainRef(ref)) return false
      const oid = readRef(gitDir, ref)
      if (oid) found.set(ref, oid)
    }
    return true
  }
  if (!walk(prefix.replace(/\/$/, ''))) return undefined
  return [...found]
    .sort(([a], [b]) => Buffer.compare(Buffer.from(a), Buffer.from(b)))
    .map(([ref, oid]) => ({ ref, oid }))
}

/**
 * Move `ref` to `next` if it holds `expected` (null: if it does not exist). False, with
 * nothing changed, when it holds something else or another writer holds its lock for
 * longer than lockWaitMs (see REF_LOCK_WAIT_MS).
 */
export async function casRefFile(
  gitDir: string,
  ref: string,
  next: string,
  expected: string | null,
  lockWaitMs = REF_LOCK_WAIT_MS,
): Promise<boolean> {
  if (!isPlainRef(ref) || !OID_RE.test(next)) throw new Error(`refusing to update ref ${ref} to ${next}`)
  const file = path.join(gitDir, ref)
  const lock = `${file}.lock`
  let fd: number
  try {
    fd = await takeLock(lock, lockWaitMs, () => fs.mkdirSync(path.dirname(file), { recursive: true }))
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code
    // held by another writer, or a file/directory clash with an existing ref
    if (code === 'EEXIST' || code === 'ENOTDIR' || code === 'EISDIR') return false
    throw e
  }
  let open = true
  let done = false
  try {
    if (readRef(gitDir, ref) !== expected) return false
    const buf = Buffer.from(`${next}\n`, 'latin1')
    let off = 0
    while (off < buf.length) off += fs.writeSync(fd, buf, off, buf.length - off)
    await fsyncAsync(fd)
    fs.closeSync(fd)
    open = false
    try {
      fs.renameSync(lock, file)
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EISDIR') return false
      throw e
    }
    done = true
    await fsyncDirAsync(path.dirname(file))
    return true
  } finally {
    if (open) fs.closeSync(fd)
    if (!done) fs.rmSync(lock, { force: true })
  }
}

/**
 * Delete `ref` if it holds `expected`, under `<ref>.lock` as git's files backend does.
 * 'deleted'; false when it holds something else or another writer holds its lock;
 * 'packed' when packed-refs still names it (only git rewrites packed-refs: the caller
 * finishes with `git update-ref -d`).
 */
export async function deleteRefFile(
  gitDir: string,
  ref: string,
  expected: string,
  lockWaitMs = REF_LOCK_WAIT_MS,
): Promise<'deleted' | 'packed' | false> {
  if (!isPlainRef(ref)) throw new Error(`refusing to delete ref ${ref}`)
  const file = path.join(gitDir, ref)
  const lock = `${file}.lock`
  let fd: number
  try {
    fd = await takeLock(lock, lockWaitMs)
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code
    if (code === 'EEXIST') return false
    // no directory for a loose ref: it can only be packed
    if (code === 'ENOENT' || code === 'ENOTDIR') return packedRef(gitDir, ref) === expected ? 'packed' : false
    throw e
  }
  try {
    if (readRef(gitDir, ref) !== expected) return false
    fs.rmSync(file, { force: true })
    // Off the event loop, still under the lock (as casRefFile): a directory fsync forces a
    // journal commit, milliseconds during which every other request would wait.
    await fsyncDirAsync(path.dirname(file))
    return packedRef(gitDir, ref) === null ? 'deleted' : 'packed'
  } finally {
    fs.closeSync(fd)
    fs.rmSync(lock, { force: true })
  }
}

/**
 * Remove what killed processes left in a repository the server owns: `*.lock` files
 * (HEAD.lock, packed-refs.lock, refs/.../x.lock), which would otherwise refuse every later
 * update of that ref, temporary object and pack files, a pack without its index and a
 * merge's object directory. Only safe while no other process works in the repository: call
 * it at start-up, under the data directory lock.
 */
export function settleRepository(gitDir: string): string[] {
  const removed: string[] = []
  const rm = (f: string): void => {
    try {
      fs.rmSync(f, { force: true })
      removed.push(path.relative(gitDir, f))
    } catch {
      // left for the operator; the next operation on it reports the lock
    }
  }
  const list = (d: string): fs.Dirent[] => {
    try {
      return fs.readdirSync(d, { withFileTypes: true })
    } catch {
      return []
    }
  }
  for (const e of list(gitDir)) if (e.isFile() && e.name.endsWith('.lock')) rm(path.join(gitDir, e.name))
  const walk = (d: string): void => {
    for (const e of list(d)) {
      const f = path.join(d, e.name)
      if (e.isDirectory()) walk(f)
      else if (e.name.endsWith('.lock')) rm(f)
    }
  }
  walk(path.join(gitDir, 'refs'))
  const objects = path.join(gitDir, 'objects')
  for (const e of list(objects)) {
    if (!e.isDirectory()) continue
    if (e.name.startsWith(QUARANTINE_PREFIX)) {
      try {
        fs.rmSync(path.join(objects, e.name), { recursive: true, force: true })
        removed.push(path.relative(gitDir, path.join(objects, e.name)))
      } catch {
        // left for the operator: git never reads it
      }
    } else if (/^[0-9a-f]{2}$/.test(e.name)) {
      for (const f of list(path.join(objects, e.name)))
        if (f.name.startsWith(TMP_PREFIX)) rm(path.join(objects, e.name, f.name))
    } else if (e.name === 'pack') {
      const files = list(path.join(objects, 'pack'))
      const names = new Set(files.map((f) => f.name))
      // A pack whose index never got its name (the writer renames the .pack first) holds
      // nothing anyone was told of.
      for (const f of files)
        if (f.name.startsWith('tmp_') || (f.name.endsWith('.pack') && !packIndexed(f.name, names)))
          rm(path.join(objects, 'pack', f.name))
    }
  }
  return removed
}
