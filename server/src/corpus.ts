import type { CatObject } from './git.ts'
import { Lru } from './lru.ts'
import { isTreeMode } from './objects.ts'
import type { Repo } from './repos.ts'
import { once } from './util.ts'

// What search scans, kept per directory: the directory's text files end to end in one
// buffer (a run), in git's order, cut where a subdirectory comes between them. A search
// of main then scans a few dozen large buffers instead of every blob one by one: one
// blob at a time, the per-file lookups and scattered objects made search's own time
// 1.5-2 ms on the soak's 2,064 files, about 15% more in a server that had run five
// minutes than in a fresh one (the same files, the same queries). A directory is kept by
// tree id (immutable), so a new root after an integration builds only the directories
// it changed.

/** Text files of one directory, consecutive in git's order, their bytes end to end. */
export interface Run {
  paths: string[]
  /** where each file starts in bytes, and one past the last: file k is [starts[k], starts[k+1]) */
  starts: number[]
  /** each file ends in a newline (one is added where it has none), so no line spans two files */
  bytes: Buffer
}
/** A subdirectory, where it comes in its parent's order. */
export interface Sub {
  tree: string
  dir: string
}
/** A file too large to copy into a run: read when searched, as git would. */
export interface Large {
  path: string
  oid: string
}
export type Part = ({ kind: 'run' } & Run) | ({ kind: 'sub' } & Sub) | ({ kind: 'large' } & Large)

interface DirText {
  /** null: the directory's text is more than a run should hold (search it file by file) */
  parts: Part[] | null
  weight: number
}

// git's buffer_is_binary: a NUL in the first 8000 bytes
const BINARY_PROBE = 8000
export const isBinary = (data: Buffer): boolean => {
  // the first NUL, if any, within the probe (no slice per file)
  const nul = data.indexOf(0)
  return nul >= 0 && nul < BINARY_PROBE
}

/** Files larger than this stay out of runs (a copy of each would crowd out the rest). */
const RUN_FILE_BYTES = 256 * 1024
/**
 * The directories kept, by what they hold in memory: the bytes of their runs and, per
 * file, its path and its slots in the run's arrays. (Every integration makes new versions
 * of the directories on its paths, so the cache fills to this bound and stays there.)
 */
const CORPUS_BYTES = 8 * 1024 * 1024
/** A directory whose runs would weigh more is searched file by file (null parts). */
const DIR_BYTES = CORPUS_BYTES / 4
/** a file's weight beside its path's length: the string's header, an array slot, its start */
const FILE_WEIGHT = 48
/** a directory's own weight: its key, its entry in the cache, its arrays' headers */
const DIR_WEIGHT = 256
/** How many blobs a build asks for ahead of the one it copies (keeps the cat-file pipe busy). */
const AHEAD = 32

const kept = new WeakMap<Repo, { dirs: Lru<string, DirText>; building: Map<string, Promise<DirText>> }>()

/**
 * The parts of directory `dir` (tree `tree`), built once per tree id and directory; null
 * if its text is more than DIR_BYTES (the caller searches it file by file).
 */
export async function dirParts(repo: Repo, tree: string, dir: string): Promise<Part[] | null> {
  let k = kept.get(repo)
  if (!k) {
    k = { dirs: new Lru(CORPUS_BYTES, (d) => d.weight), building: new Map() }
    kept.set(repo, k)
  }
  const key = `${tree}\0${dir}`
  const hit = k.dirs.get(key)
  if (hit) return hit.parts
  const { dirs, building } = k
  const built = await once(building, key, async () => {
    const d = await build(repo, tree, dir)
    dirs.set(key, d)
    return d
  })
  return built.parts
}

async function build(repo: Repo, tree: string, dir: string): Promise<DirText> {
  const parts: Part[] = []
  let weight = 0
  let run: { paths: string[]; starts: number[]; chunks: Buffer[]; at: number; pathBytes: number } | undefined
  const close = (): void => {
    if (!run) return
    run.starts.push(run.at)
    // A buffer of its own: a small one from Node's shared pool would keep the whole 8 KiB
    // slab alive (Buffer.concat takes from the pool under 4 KiB).
    const bytes = Buffer.allocUnsafeSlow(run.at)
    let at = 0
    for (const c of run.chunks) at += c.copy(bytes, at)
    parts.push({ kind: 'run', paths: run.paths, starts: run.starts, bytes })
    weight += run.at + run.pathBytes
    run = undefined
  }
  const weighs = (): number => weight + (run ? run.at + run.pathBytes : 0)
  const items = [...(await repo.treeItems(tree)).values()]
  const files = items.filter((it) => it.mode === '100644' || it.mode === '100755')
  let i = 0
  await readAhead(
    repo,
    files.map((f) => f.oid),
    (o, n) => {
      if (weighs() > DIR_BYTES) return true
      // everything in this directory up to file n, in order
      for (; i < items.length; i++) {
        const it = items[i] as (typeof items)[number]
        if (it === files[n]) break
        if (!isTreeMode(it.mode)) continue // a symlink or submodule: grep skips it
        close()
        parts.push({ kind: 'sub', tree: it.oid, dir: dir === '' ? it.name : `${dir}/${it.name}` })
      }
      i++
      const p = dir === '' ? (files[n]?.name as string) : `${dir}/${files[n]?.name}`
      if (!o || o.type !== 'blob') return
      if (o.size > RUN_FILE_BYTES) {
        close()
        parts.push({ kind: 'large', path: p, oid: o.oid })
        weight += p.length + FILE_WEIGHT
        return
      }
      if (isBinary(o.data)) return
      run ??= { paths: [], starts: [], chunks: [], at: 0, pathBytes: 0 }
      run.paths.push(p)
      run.pathBytes += p.length + FILE_WEIGHT
      run.starts.push(run.at)
      run.chunks.push(o.data)
      run.at += o.data.length
      if (o.data.length > 0 && o.data[o.data.length - 1] !== 10) {
        run.chunks.push(NEWLINE)
        run.at += 1
      }
    },
  )
  for (; i < items.length; i++) {
    const it = items[i] as (typeof items)[number]
    if (!isTreeMode(it.mode)) continue
    close()
    parts.push({ kind: 'sub', tree: it.oid, dir: dir === '' ? it.name : `${dir}/${it.name}` })
  }
  close()
  // (too large: kept as that, so the next search does not read it all again to find out)
  if (weighs() > DIR_BYTES) return { parts: null, weight: DIR_WEIGHT }
  return { parts, weight: weight + DIR_WEIGHT }
}
const NEWLINE = Buffer.from('\n')

/**
 * Calls `use` with each object of `oids` in order (null if missing), reading a window
 * ahead: a cached object is taken at once and held (an eviction meanwhile costs nothing),
 * the others are asked for so the cat-file pipe stays busy. Stops when `use` answers true.
 */
export async function readAhead(
  repo: Repo,
  oids: readonly string[],
  use: (o: CatObject | null, i: number) => unknown,
): Promise<void> {
  const ahead: (CatObject | Promise<CatObject | null> | undefined)[] = new Array(AHEAD)
  let asked = 0
  for (let i = 0; i < oids.length; i++) {
    for (; asked < oids.length && asked < i + AHEAD; asked++) {
      let got: CatObject | Promise<CatObject | null> | undefined = repo.cachedObject(oids[asked] as string)
      if (!got) {
        got = repo.object(oids[asked] as string)
        // A caller that stops early never awaits the rest: a failure of a read nobody
        // waits for must not become an unhandled rejection.
        got.catch(() => undefined)
      }
      ahead[asked % AHEAD] = got
    }
    const got = ahead[i % AHEAD]
    ahead[i % AHEAD] = undefined
    if (use((got instanceof Promise ? await got : got) ?? null, i) === true) return
  }
}
