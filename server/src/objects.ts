import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import zlib from 'node:zlib'
import { promisify } from 'node:util'
import { fsyncDirAsync } from './store.ts'

// Git objects written in-process: a blob, tree or commit is SHA-1("<type> <len>\0" + body)
// stored zlib-deflated at objects/xx/yyyy… (loose object format). Writing them here
// instead of spawning `git hash-object` / `mktree` / `commit-tree` turns a workspace
// write or a proposal into a few file operations. Durability matches git's
// core.fsync=objects: each object file is fsync'd before it is renamed into place, and
// the object directories are fsync'd before the caller acknowledges anything that
// refers to the objects.

const deflate = promisify(zlib.deflate)
const fsync = promisify(fs.fsync)

export type ObjType = 'blob' | 'tree' | 'commit'

export interface RawObject {
  type: ObjType
  body: Buffer
}

export function objectHeader(type: ObjType, size: number): Buffer {
  return Buffer.from(`${type} ${size}\0`, 'latin1')
}

export function hashObject(type: ObjType, body: Buffer): string {
  return crypto.createHash('sha1').update(objectHeader(type, body.length)).update(body).digest('hex')
}

/** Name prefix of an object file being written (git uses the same one). */
export const TMP_PREFIX = 'tmp_obj_'

function loosePath(gitDir: string, oid: string): string {
  return path.join(gitDir, 'objects', oid.slice(0, 2), oid.slice(2))
}

/** Touch a loose object's mtime; false if it is not there. */
function freshen(file: string): boolean {
  try {
    const now = new Date()
    fs.utimesSync(file, now, now)
    return true
  } catch {
    // there but not ours to touch (another user's object): as before, not written again
    return fs.existsSync(file)
  }
}

/**
 * Create tmp in its objects/xx directory, making the directory if needed. Maintenance's
 * `git prune-packed` removes a fan-out directory it has emptied, which can happen between
 * the mkdir and the open: then the directory is made again (a request failed with ENOENT
 * during a repack before this).
 */
function openInFanout(dir: string, tmp: string): { fd: number; newDir: boolean } {
  let newDir = false
  for (let attempt = 0; ; attempt++) {
    newDir = fs.mkdirSync(dir, { recursive: true }) !== undefined || newDir
    try {
      return { fd: fs.openSync(tmp, 'wx', 0o444), newDir }
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT' || attempt >= 10) throw e
    }
  }
}

/**
 * Write one loose object unless it is already there; returns its directory if written.
 * Only the fsync leaves the event loop (one thread-pool hop): the other steps are cheap
 * metadata calls that cost more as hops than they do done in place.
 */
async function writeOne(gitDir: string, oid: string, obj: RawObject): Promise<{ dir: string; newDir: boolean } | null> {
  const dest = loosePath(gitDir, oid)
  // Already there: freshened, as git does, so a concurrent `git gc` (which prunes
  // unreachable loose objects by age) cannot take it before a ref reaches it; if it was
  // pruned meanwhile, it is written again below.
  if (freshen(dest)) return null
  const dir = path.dirname(dest)
  const raw = Buffer.concat([objectHeader(obj.type, obj.body.length), obj.body])
  // Loose objects use git's default core.looseCompression (Z_BEST_SPEED); large ones
  // are deflated off the event loop.
  const packed = raw.length > 256 * 1024 ? await deflate(raw, { level: 1 }) : zlib.deflateSync(raw, { level: 1 })
  const tmp = path.join(dir, `${TMP_PREFIX}${crypto.randomBytes(6).toString('hex')}`)
  const { fd, newDir } = openInFanout(dir, tmp)
  try {
    try {
      fs.writeFileSync(fd, packed)
      await fsync(fd)
    } finally {
      fs.closeSync(fd)
    }
    // Content-addressed: a concurrent writer of the same oid renames identical bytes.
    fs.renameSync(tmp, dest)
  } catch (e) {
    // A full disk must not leave half-written temporary files behind.
    fs.rmSync(tmp, { force: true })
    throw e
  }
  return { dir, newDir }
}

/**
 * Durably store objects (content-addressed, so writing one that exists is a no-op) and
 * return their ids in order. Returns after the files and their directories are fsync'd.
 */
export async function writeObjects(gitDir: string, objs: RawObject[]): Promise<string[]> {
  const oids = objs.map((o) => hashObject(o.type, o.body))
  const dirs = new Set<string>()
  let newDir = false
  await Promise.all(
    objs.map(async (o, i) => {
      const d = await writeOne(gitDir, oids[i] as string, o)
      if (d) dirs.add(d.dir)
      if (d?.newDir) newDir = true
    }),
  )
  // The renames are durable once their directories are synced; a new objects/xx
  // directory needs its parent synced too. Off the event loop, in parallel.
  if (newDir) dirs.add(path.join(gitDir, 'objects'))
  await Promise.all([...dirs].map(fsyncDirAsync))
  return oids
}

export async function writeObject(gitDir: string, type: ObjType, body: Buffer): Promise<string> {
  return (await writeObjects(gitDir, [{ type, body }]))[0] as string
}

// ---- trees ----

export interface TreeItem {
  /** as git writes it: 40000, 100644, 100755, 120000, 160000 */
  mode: string
  name: string
  oid: string
}

export const isTreeMode = (mode: string): boolean => mode === '40000' || mode === '040000'

/** Parse a tree object body: repeated "<mode> <name>\0<20-byte id>". */
export function parseTree(body: Buffer): TreeItem[] {
  const out: TreeItem[] = []
  let i = 0
  while (i < body.length) {
    const sp = body.indexOf(0x20, i)
    const nul = body.indexOf(0, sp + 1)
    if (sp < 0 || nul < 0 || nul + 21 > body.length) throw new Error('malformed tree object')
    out.push({
      mode: body.toString('latin1', i, sp),
      name: body.toString('utf8', sp + 1, nul),
      oid: body.toString('hex', nul + 1, nul + 21),
    })
    i = nul + 21
  }
  return out
}

/** Git's canonical mode of an entry that goes into a tree it writes (like write-tree). */
export function canonicalMode(mode: string): string {
  if (isTreeMode(mode)) return '40000'
  if (mode === '120000' || mode === '160000') return mode
  const n = parseInt(mode, 8)
  return n & 0o100 ? '100755' : '100644'
}

/** Git's tree order: byte order of names, a directory compared as if it ended in '/'. */
function sortKey(it: TreeItem): Buffer {
  return Buffer.from(isTreeMode(it.mode) ? it.name + '/' : it.name, 'utf8')
}

export function serializeTree(items: TreeItem[]): Buffer {
  // Last line of defence: never write a tree entry git would call corrupt (fsck: emptyName,
  // hasDot, hasDotdot, hasDotgit, fullPathname).
  for (const it of items)
    if (
      it.name === '' ||
      it.name === '.' ||
      it.name === '..' ||
      it.name.includes('/') ||
      it.name.includes('\0') ||
      it.name.toLowerCase() === '.git'
    )
      throw new Error(`refusing to write a tree entry named ${JSON.stringify(it.name)}`)
  const keyed = items.map((it) => ({ it, key: sortKey(it) }))
  keyed.sort((a, b) => Buffer.compare(a.key, b.key))
  const parts: Buffer[] = []
  for (const { it } of keyed) {
    parts.push(Buffer.from(`${canonicalMode(it.mode)} ${it.name}\0`, 'utf8'), Buffer.from(it.oid, 'hex'))
  }
  return Buffer.concat(parts)
}

// ---- commits ----

export interface Ident {
  name: string
  email: string
}

// Git's ident rules (ident.c): '<', '>' and newlines are dropped, and "crud"
// (control/space and .,:;<>"\') is trimmed from both ends.
const isCrud = (c: number): boolean =>
  c <= 32 ||
  c === 0x2e ||
  c === 0x2c ||
  c === 0x3a ||
  c === 0x3b ||
  c === 0x3c ||
  c === 0x3e ||
  c === 0x22 ||
  c === 0x5c ||
  c === 0x27

export function cleanIdent(s: string): string {
  const b = Buffer.from(s, 'utf8')
  let start = 0
  let end = b.length
  while (start < end && isCrud(b[start] as number)) start++
  while (end > start && isCrud(b[end - 1] as number)) end--
  const kept: number[] = []
  for (let i = start; i < end; i++) {
    const c = b[i] as number
    if (c !== 0x0a && c !== 0x3c && c !== 0x3e) kept.push(c)
  }
  return Buffer.from(kept).toString('utf8')
}

/** "<seconds> <+hhmm>" in the server's local time zone, as git commit-tree writes it. */
export function gitDate(d: Date): string {
  const off = -d.getTimezoneOffset()
  const sign = off < 0 ? '-' : '+'
  const a = Math.abs(off)
  return `${Math.floor(d.getTime() / 1000)} ${sign}${String(Math.floor(a / 60)).padStart(2, '0')}${String(a % 60).padStart(2, '0')}`
}

export function formatCommit(c: {
  tree: string
  parents: string[]
  author: Ident
  committer: Ident
  message: string
  date?: string
}): Buffer {
  const date = c.date ?? gitDate(new Date())
  const who = (i: Ident): string => {
    const name = cleanIdent(i.name)
    if (name === '') throw new Error('empty ident name')
    return `${name} <${cleanIdent(i.email)}> ${date}`
  }
  let head = `tree ${c.tree}\n`
  for (const p of c.parents) head += `parent ${p}\n`
  head += `author ${who(c.author)}\ncommitter ${who(c.committer)}\n\n`
  return Buffer.concat([Buffer.from(head, 'utf8'), Buffer.from(c.message, 'utf8')])
}
