import fs from 'node:fs'
import path from 'node:path'
import { packedRefs } from './refs.ts'

// `git log` without a path, in process: the same revision walk git does by default (a
// queue ordered by committer date, newest first, a commit inserted after those with the
// same date, parents in order, each commit once), over commits read through the
// repository's cat-file process and cached. It declines (undefined) whenever git could
// answer differently: a commit with a non-UTF-8 encoding header, replace refs, grafts or
// a shallow repository; the caller then asks git.

/**
 * What the walks read of a repository (repos.ts's Repo is one): declared here so that the
 * repository module can use the walks without the two importing each other.
 */
export interface CommitSource {
  readonly gitDir: string
  /** A commit's parsed fields; undefined if not a plain commit. */
  commitInfo(oid: string): Promise<CommitInfo | undefined>
  /** The entry at a path of a commit's tree; null if there is none. */
  entryAt(commit: string, p: string): Promise<{ mode: string; oid: string } | null>
}

export interface Ident {
  name: string
  email: string
  /** seconds since the epoch */
  time: number
}

export interface CommitInfo {
  id: string
  tree: string
  parents: string[]
  author: Ident
  committer: Ident
  /** as git log's %s: the first paragraph, lines right-trimmed and joined with spaces */
  subject: string
}

/** An ident of bytes start..end of a commit ("Name <email> 1700000000 +0000"). */
function parseIdent(b: Buffer, start: number, end: number): Ident | undefined {
  const lt = b.indexOf(0x3c, start) // <
  const gt = b.lastIndexOf(0x3e, end - 1) // >
  if (lt < 0 || lt >= end || gt < lt) return undefined
  const when =
    b
      .toString('utf8', gt + 1, end)
      .trim()
      .split(' ')[0] ?? ''
  if (!/^[0-9]{1,15}$/.test(when)) return undefined
  let nameEnd = lt
  while (nameEnd > start && b[nameEnd - 1] === 0x20) nameEnd--
  return { name: b.toString('utf8', start, nameEnd), email: b.toString('utf8', lt + 1, gt), time: Number(when) }
}

const rtrim = (s: string): string => s.replace(/[ \t\n\v\f\r]+$/, '')

export function subjectOf(message: string): string {
  const lines = message.split('\n')
  let i = 0
  while (i < lines.length && rtrim(lines[i] as string) === '') i++
  const out: string[] = []
  for (; i < lines.length; i++) {
    const l = rtrim(lines[i] as string)
    if (l === '') break
    out.push(l)
  }
  return out.join(' ')
}

/** A commit object's fields, or undefined when git would present it differently (encoding). */
export function parseCommit(id: string, body: Buffer): CommitInfo | undefined {
  // Every field is a string of its own, read from the buffer: V8 keeps a sliced string's
  // whole parent alive, so fields sliced out of the commit's text kept the text (message
  // and all) for as long as the commit stayed in the cache: about 800 bytes a commit in
  // the soak, however short the fields, and more with longer messages.
  const end = body.indexOf('\n\n')
  const headEnd = end < 0 ? body.length : end
  let tree = ''
  const parents: string[] = []
  let author: Ident | undefined
  let committer: Ident | undefined
  for (let at = 0; at < headEnd; ) {
    const nl = body.indexOf(0x0a, at)
    const stop = nl < 0 || nl > headEnd ? headEnd : nl
    const key = body.toString('latin1', at, Math.min(stop, at + 10))
    if (key.startsWith('tree ')) tree = body.toString('utf8', at + 5, stop)
    else if (key.startsWith('parent ')) parents.push(body.toString('utf8', at + 7, stop))
    else if (key.startsWith('author ')) author = parseIdent(body, at + 7, stop)
    else if (key === 'committer ') committer = parseIdent(body, at + 10, stop)
    else if (key.startsWith('encoding ') && !/^encoding utf-?8$/i.test(body.toString('utf8', at, stop)))
      return undefined
    at = stop + 1
  }
  if (!tree || !author || !committer) return undefined
  const message = end < 0 ? '' : body.toString('utf8', end + 2)
  return { id, tree, parents, author, committer, subject: Buffer.from(subjectOf(message)).toString() }
}

/** True when nothing can make git's history differ from the commit objects themselves. */
export function plainHistory(gitDir: string): boolean {
  if (fs.existsSync(path.join(gitDir, 'shallow')) || fs.existsSync(path.join(gitDir, 'info', 'grafts'))) return false
  try {
    if (fs.readdirSync(path.join(gitDir, 'refs', 'replace')).length > 0) return false
  } catch {
    // no refs/replace directory
  }
  return !packedRefs(gitDir).replace
}

/** Commits `skip` to `skip + count` of `git log <start>` (fewer at the end of history). */
export async function walkLog(
  repo: CommitSource,
  start: string,
  skip: number,
  count: number,
): Promise<CommitInfo[] | undefined> {
  if (!plainHistory(repo.gitDir)) return undefined
  const first = await repo.commitInfo(start)
  if (!first) return undefined
  const queue: CommitInfo[] = [first]
  const seen = new Set<string>([start])
  const out: CommitInfo[] = []
  for (let index = 0; queue.length > 0 && out.length < count; index++) {
    const c = queue.shift() as CommitInfo
    if (index >= skip) out.push(c)
    if (!(await enqueue(repo, queue, seen, c.parents))) return undefined
  }
  return out
}

/**
 * Queue the parents not seen yet, each after every queued commit with the same or a newer
 * date (git's insert_by_date). False when one of them is not a plain commit here.
 */
async function enqueue(
  repo: CommitSource,
  queue: CommitInfo[],
  seen: Set<string>,
  parents: string[],
): Promise<boolean> {
  const fresh = parents.filter((p) => !seen.has(p))
  for (const p of fresh) seen.add(p)
  const infos = await Promise.all(fresh.map((p) => repo.commitInfo(p)))
  for (const info of infos) {
    if (!info) return false
    let at = queue.findIndex((q) => q.committer.time < info.committer.time)
    if (at < 0) at = queue.length
    queue.splice(at, 0, info)
  }
  return true
}

/**
 * Commits `skip` to `skip + count` of `git log <start> -- <path>` (literal pathspec), by
 * git's default history simplification: a commit is shown unless it is TREESAME (its
 * entry at the path, mode and id, equals a parent's; for a root commit: the path is
 * absent); a merge TREESAME to some parent follows only the first such parent. Parents
 * are reported as recorded (git log does not rewrite %P without --parents).
 */
export async function walkPathLog(
  repo: CommitSource,
  start: string,
  p: string,
  skip: number,
  count: number,
): Promise<CommitInfo[] | undefined> {
  if (!plainHistory(repo.gitDir)) return undefined
  const first = await repo.commitInfo(start)
  if (!first) return undefined
  const at = new Map<string, string>()
  const entry = async (c: string): Promise<string> => {
    let e = at.get(c)
    if (e === undefined) {
      const it = await repo.entryAt(c, p)
      e = it ? `${it.mode} ${it.oid}` : ''
      at.set(c, e)
    }
    return e
  }
  const queue: CommitInfo[] = [first]
  const seen = new Set<string>([start])
  const out: CommitInfo[] = []
  let shown = 0
  while (queue.length > 0 && out.length < count) {
    const c = queue.shift() as CommitInfo
    const mine = await entry(c.id)
    let follow = c.parents
    let treesame = c.parents.length === 0 && mine === ''
    for (const parent of c.parents) {
      if ((await entry(parent)) === mine) {
        follow = [parent]
        treesame = true
        break
      }
    }
    if (!treesame && shown++ >= skip) out.push(c)
    if (!(await enqueue(repo, queue, seen, follow))) return undefined
  }
  return out
}

const P1 = 1
const P2 = 2
const STALE = 4

/**
 * `git merge-base a b` in process, by git's own algorithm (paint down to common from both
 * sides in committer-date order, a commit reached from both is a result and stales its
 * ancestors). Answers only when exactly one candidate remains; undefined (ask git) when
 * there are several (criss-cross merges: git then filters and picks one) or the walk
 * declines. null: no common history.
 */
export async function mergeBase(repo: CommitSource, a: string, b: string): Promise<string | null | undefined> {
  if (a === b) return a
  const painted = await paint(repo, a, b)
  if (!painted) return undefined
  const { flags, result } = painted
  if (result.length === 0) return null
  // git keeps the results not reached (staled) from another result; with one, that is it
  const live = result.filter((id) => ((flags.get(id) ?? 0) & STALE) === 0)
  return live.length === 1 ? live[0] : undefined
}

/**
 * `git merge-base --is-ancestor a d` in process: the same paint reaches `a` from `d`
 * (flag P2) exactly when `a` is an ancestor of `d`, since nothing between them is staled
 * before the paint arrives. undefined when the walk declines (ask git).
 */
export async function isAncestor(repo: CommitSource, a: string, d: string): Promise<boolean | undefined> {
  if (a === d) return true
  const painted = await paint(repo, a, d)
  return painted && ((painted.flags.get(a) ?? 0) & P2) !== 0
}

/** Paint down to common from a (P1) and b (P2), git's paint_down_to_common. */
async function paint(
  repo: CommitSource,
  a: string,
  b: string,
): Promise<{ flags: Map<string, number>; result: string[] } | undefined> {
  if (!plainHistory(repo.gitDir)) return undefined
  const flags = new Map<string, number>()
  const queue: CommitInfo[] = []
  const insert = (c: CommitInfo): void => {
    let at = queue.findIndex((q) => q.committer.time < c.committer.time)
    if (at < 0) at = queue.length
    queue.splice(at, 0, c)
  }
  const ca = await repo.commitInfo(a)
  const cb = await repo.commitInfo(b)
  if (!ca || !cb) return undefined
  flags.set(a, P1)
  flags.set(b, P2)
  insert(ca)
  insert(cb)
  const result: string[] = []
  while (queue.some((q) => ((flags.get(q.id) ?? 0) & STALE) === 0)) {
    const c = queue.shift() as CommitInfo
    let f = (flags.get(c.id) ?? 0) & (P1 | P2 | STALE)
    if (f === (P1 | P2)) {
      if (!result.includes(c.id)) result.push(c.id)
      f |= STALE
    }
    for (const p of c.parents) {
      const pf = flags.get(p) ?? 0
      if ((pf & f) === f) continue
      const info = await repo.commitInfo(p)
      if (!info) return undefined
      flags.set(p, pf | f)
      insert(info)
    }
  }
  return { flags, result }
}
