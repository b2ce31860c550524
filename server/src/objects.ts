import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import zlib from 'node:zlib'
import { encodePack, type PackObject } from './packfile.ts'
import { fsyncDirAsync } from './store.ts'

// Git objects written in-process: a blob, tree or commit is SHA-1("<type> <len>\0" + body).
// Writing them here instead of spawning `git hash-object` / `mktree` / `commit-tree` turns a
// workspace write or a proposal into a few file operations. What one call stores goes into
// one pack of its own (packfile.ts): two files and a directory fsync'd before the caller
// acknowledges anything that refers to the objects (git's core.fsync=objects), where loose
// objects took a file, a fsync and often a fan-out directory each. Maintenance rolls the
// small packs up (maintenance.ts).

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

/** Name prefix of a loose object file being written (git's); start-up removes leftovers. */
export const TMP_PREFIX = 'tmp_obj_'
/** Name prefix of a pack or index being written in objects/pack (git's is tmp_ too). */
export const TMP_PACK_PREFIX = 'tmp_agwp_'

/** Packs this process wrote, per git directory: maintenance looks sooner when they pile up. */
const packsByDir = new Map<string, number>()
export const packsWritten = (gitDir: string): number => packsByDir.get(gitDir) ?? 0

async function writeFileSynced(file: string, data: Buffer): Promise<void> {
  const fh = await fs.promises.open(file, 'wx', 0o444)
  try {
    await fh.writeFile(data)
    await fh.sync()
  } finally {
    await fh.close()
  }
}

/**
 * Durably store objects and return their ids in order. Every object is written, even one the
 * repository has: the new pack's time freshens it, as git freshens an object it would write,
 * so maintenance cannot prune it before a ref reaches it.
 *
 * Calls for one repository while a pack is being written wait and go into the next pack
 * together (group commit): under load a pack per fsync, not a pack per call.
 */
export function writeObjects(gitDir: string, objs: RawObject[]): Promise<string[]> {
  const oids = objs.map((o) => hashObject(o.type, o.body))
  if (objs.length === 0) return Promise.resolve(oids)
  const q = queues.get(gitDir) ?? { writing: false, next: undefined }
  queues.set(gitDir, q)
  const batch = q.next ?? { objs: [], done: deferred() }
  q.next = batch
  batch.objs.push(...objs.map((o, i) => ({ oid: oids[i] as string, ...o })))
  if (!q.writing) void flush(gitDir, q)
  return batch.done.promise.then(() => oids)
}

interface Batch {
  objs: PackObject[]
  done: { promise: Promise<void>; resolve: () => void; reject: (e: unknown) => void }
}
const queues = new Map<string, { writing: boolean; next: Batch | undefined }>()

function deferred(): Batch['done'] {
  let resolve!: () => void
  let reject!: (e: unknown) => void
  const promise = new Promise<void>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

async function flush(gitDir: string, q: { writing: boolean; next: Batch | undefined }): Promise<void> {
  q.writing = true
  for (let b = q.next; b; b = q.next) {
    q.next = undefined
    // A failure (a full disk) fails the calls of this pack, and only those.
    await writePack(gitDir, b.objs).then(b.done.resolve, b.done.reject)
  }
  q.writing = false
  queues.delete(gitDir)
}

/**
 * One pack of `objs`, named at random, not by its checksum: a pack identical to an old one is
 * a new file, which no repack running meanwhile knows, so none deletes it.
 */
async function writePack(gitDir: string, objs: PackObject[]): Promise<void> {
  const { pack, idx } = await encodePack(objs)
  const dir = path.join(gitDir, 'objects', 'pack')
  await fs.promises.mkdir(dir, { recursive: true })
  const name = path.join(dir, `pack-${crypto.randomBytes(20).toString('hex')}`)
  // Not named *.idx or *.pack until complete: git takes any *.idx in the directory for a pack.
  const tmp = path.join(dir, `${TMP_PACK_PREFIX}${crypto.randomBytes(6).toString('hex')}`)
  try {
    await Promise.all([writeFileSynced(`${tmp}_pack`, pack), writeFileSynced(`${tmp}_idx`, idx)])
    // The index last: git looks for packs by their .idx.
    await fs.promises.rename(`${tmp}_pack`, `${name}.pack`)
    await fs.promises.rename(`${tmp}_idx`, `${name}.idx`)
  } catch (e) {
    // A full disk must not leave half-written files behind.
    for (const f of [`${tmp}_pack`, `${tmp}_idx`, `${name}.pack`]) fs.rmSync(f, { force: true })
    throw e
  }
  await fsyncDirAsync(dir)
  packsByDir.set(gitDir, packsWritten(gitDir) + 1)
}

/** Whether the .pack `pack` in objects/pack (whose names are `names`) is complete: its index is there too. */
export const packIndexed = (pack: string, names: ReadonlySet<string>): boolean =>
  names.has(pack.replace(/\.pack$/, '.idx'))

export async function writeObject(gitDir: string, type: ObjType, body: Buffer): Promise<string> {
  return (await writeObjects(gitDir, [{ type, body }]))[0] as string
}

// ---- git writing elsewhere ----

/**
 * Prefix of the object directories `quarantined` makes in objects/ (start-up removes
 * leftovers). Not git's tmp_: `git prune` deletes tmp_ directories older than its expiry.
 */
export const QUARANTINE_PREFIX = 'agwp_quarantine_'

/**
 * Run a git command that writes objects (`git merge-tree`) with its own object directory, the
 * repository's as an alternate, and return what it wrote for the caller to write as a pack.
 * Git writes loose objects, creating fan-out directories as it goes, and maintenance's
 * `prune-packed` and `prune` remove the empty ones meanwhile: git retries once, then fails
 * ("unable to create temporary file"). Here nothing but this command sees its directory.
 */
export async function quarantined<T>(
  gitDir: string,
  run: (env: Record<string, string>) => Promise<T>,
): Promise<{ result: T; objects: RawObject[] }> {
  const objects = path.join(gitDir, 'objects')
  const dir = path.join(objects, QUARANTINE_PREFIX + crypto.randomBytes(6).toString('hex'))
  await fs.promises.mkdir(dir)
  try {
    const result = await run({ GIT_OBJECT_DIRECTORY: dir, GIT_ALTERNATE_OBJECT_DIRECTORIES: cQuoted(objects) })
    return { result, objects: await readLoose(dir) }
  } finally {
    await fs.promises.rm(dir, { recursive: true, force: true })
  }
}

/**
 * A path as one entry of a list git splits at ':' (GIT_ALTERNATE_OBJECT_DIRECTORIES): quoted
 * C-style, as git reads an entry that begins with '"', so a ':' or a '"' in it is the path's.
 */
function cQuoted(p: string): string {
  const escaped = Buffer.from(p, 'utf8').reduce((out, b) => {
    if (b === 0x22 || b === 0x5c) return `${out}\\${String.fromCharCode(b)}`
    if (b < 0x20 || b >= 0x7f) return `${out}\\${b.toString(8).padStart(3, '0')}`
    return out + String.fromCharCode(b)
  }, '')
  return `"${escaped}"`
}

/** Every loose object under an object directory (fan-out directories of "<type> <size>\0<body>"). */
async function readLoose(dir: string): Promise<RawObject[]> {
  const out: RawObject[] = []
  for (const fan of await fs.promises.readdir(dir)) {
    if (!/^[0-9a-f]{2}$/.test(fan)) continue
    for (const name of await fs.promises.readdir(path.join(dir, fan))) {
      if (!/^[0-9a-f]{38}$/.test(name)) continue // a tmp_obj_ git did not finish
      const raw = zlib.inflateSync(await fs.promises.readFile(path.join(dir, fan, name)))
      const nul = raw.indexOf(0)
      const [type, size] = raw.subarray(0, nul).toString('latin1').split(' ')
      const body = raw.subarray(nul + 1)
      if (
        (type !== 'blob' && type !== 'tree' && type !== 'commit') ||
        Number(size) !== body.length ||
        hashObject(type, body) !== fan + name
      )
        throw new Error(`unexpected object ${fan}${name} (${type} ${size}) from git`)
      out.push({ type, body })
    }
  }
  return out
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
