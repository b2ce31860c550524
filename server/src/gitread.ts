import { gitText } from './git.ts'
import { invalid, notFound } from './errors.ts'
import type { Repo } from './repos.ts'
import { isTreeMode } from './objects.ts'
import {
  parseCommit,
  plainHistory,
  walkLog,
  walkPathLog,
  type CommitInfo,
  type Ident as HistoryIdent,
} from './history.ts'
import { encodeCursor, decodeCursor, isCount } from './util.ts'

// Read-side git operations shared by repository, workspace and proposal endpoints: log,
// commits, directories, contents and diffs. Search is search.ts; merges are merge.ts.

export interface Sig {
  name: string
  email: string
  date: string
}
export interface CommitSummary {
  id: string
  parents: string[]
  author: Sig
  committer: Sig
  subject: string
}

const iso = (s: string): string => {
  const d = new Date(s)
  return Number.isNaN(d.getTime()) ? s : d.toISOString()
}

const LOG_FORMAT = '%H%x00%P%x00%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%s%x00%B%x1e'

function parseLogRecords(text: string): (CommitSummary & { message: string })[] {
  return text
    .split('\x1e')
    .map((r) => r.replace(/^\n/, ''))
    .filter((r) => r.length > 0)
    .map((r) => {
      const f = r.split('\x00')
      return {
        id: f[0] ?? '',
        parents: (f[1] ?? '').split(' ').filter(Boolean),
        author: { name: f[2] ?? '', email: f[3] ?? '', date: iso(f[4] ?? '') },
        committer: { name: f[5] ?? '', email: f[6] ?? '', date: iso(f[7] ?? '') },
        subject: f[8] ?? '',
        message: f[9] ?? '',
      }
    })
}

export async function log(
  repo: Repo,
  ref: string,
  path: string | undefined,
  limit: number,
  cursor: string | undefined,
): Promise<{ commits: CommitSummary[]; next_cursor?: string }> {
  // The cursor pins the start commit, so later pages are stable even if the branch moves.
  const c = decodeCursor(cursor)
  let start: string
  let skip = 0
  if (c) {
    if (typeof c['c'] !== 'string' || !/^[0-9a-f]{40}$/.test(c['c']) || !isCount(c['s']))
      throw invalid('malformed cursor', { field: 'cursor' })
    // A forged cursor may name any id: it must be a commit of this repository.
    if ((await repo.cat.get(c['c']))?.type !== 'commit') throw invalid('malformed cursor', { field: 'cursor' })
    start = c['c']
    skip = c['s']
  } else {
    start = await repo.resolve(ref)
  }
  // The walk runs in process (history.ts); whenever it declines, git answers.
  const walked = path
    ? await walkPathLog(repo, start, path, skip, limit + 1)
    : await walkLog(repo, start, skip, limit + 1)
  const recs = walked
    ? walked.map(summaryOf)
    : parseLogRecords(
        await gitText(repo.gitDir, [
          'log',
          `--format=${LOG_FORMAT.replace('%x00%B', '')}`,
          `-n${limit + 1}`,
          `--skip=${skip}`,
          start,
          '--',
          ...(path ? [path] : []),
        ]),
      )
  const commits = recs.slice(0, limit).map(({ message: _m, ...s }) => s)
  return recs.length > limit ? { commits, next_cursor: encodeCursor({ c: start, s: skip + limit }) } : { commits }
}

const sigOf = (i: HistoryIdent): Sig => ({ name: i.name, email: i.email, date: new Date(i.time * 1000).toISOString() })
const summaryOf = (c: CommitInfo): CommitSummary & { message: string } => ({
  id: c.id,
  parents: c.parents,
  author: sigOf(c.author),
  committer: sigOf(c.committer),
  subject: c.subject,
  message: '',
})

export type ChangeStatus = 'added' | 'modified' | 'deleted' | 'renamed' | 'copied' | 'type_changed'
const STATUS_MAP: Record<string, ChangeStatus> = {
  A: 'added',
  M: 'modified',
  D: 'deleted',
  R: 'renamed',
  C: 'copied',
  T: 'type_changed',
}

interface RawChange {
  path: string
  old_path?: string
  status: ChangeStatus
  additions: number | null
  deletions: number | null
}

// Parses `--raw --numstat -z` output: all raw records first, then one numstat record each.
function parseRawNumstat(buf: Buffer): RawChange[] {
  const parts = buf.toString('utf8').split('\0')
  const out: RawChange[] = []
  let i = 0
  while (i < parts.length && (parts[i] ?? '').startsWith(':')) {
    const meta = (parts[i] ?? '').split(' ')
    const letter = (meta[4] ?? 'M').charAt(0)
    const status = STATUS_MAP[letter] ?? 'modified'
    if (letter === 'R' || letter === 'C') {
      out.push({ old_path: parts[i + 1] ?? '', path: parts[i + 2] ?? '', status, additions: null, deletions: null })
      i += 3
    } else {
      out.push({ path: parts[i + 1] ?? '', status, additions: null, deletions: null })
      i += 2
    }
  }
  for (const ch of out) {
    const rec = parts[i] ?? ''
    const [a, d, p] = rec.split('\t')
    if (p === '')
      i += 3 // rename form: "a\td\t" NUL old NUL new
    else i += 1
    ch.additions = a === '-' || a === undefined ? null : Number(a)
    ch.deletions = d === '-' || d === undefined ? null : Number(d)
  }
  return out
}

export const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904'
// What each diff view asks git (through the repository's long-lived diff-tree processes).
const RAW_ARGS = ['-r', '-M', '--raw', '--numstat', '-z', '--no-abbrev']
const PATCH_ARGS = ['-r', '-M', '-p', '--no-color', '--no-ext-diff']

/** The tree of a commit, or the id itself when it names a tree (a workspace overlay). */
async function treeOf(repo: Repo, id: string): Promise<string> {
  const o = await repo.cat.info(id)
  if (o?.type === 'tree') return o.oid
  return repo.commitTree(o?.oid ?? id)
}

export async function commitDetail(
  repo: Repo,
  id: string,
): Promise<CommitSummary & { message: string; files: RawChange[] }> {
  const commit = await repo.resolve(id, 'id')
  // Grafts and replace refs change what git reports: then git answers.
  const rec = plainHistory(repo.gitDir)
    ? ((await commitRecord(repo, commit)) ?? (await gitCommitRecord(repo, commit)))
    : await gitCommitRecord(repo, commit)
  if (!rec) throw notFound('commit not found', { id })
  const parent = rec.parents[0]
  const [from, to] = await Promise.all([parent ? repo.commitTree(parent) : EMPTY_TREE, repo.commitTree(commit)])
  const raw = await repo.diffTree(RAW_ARGS, []).diff(from, to)
  return { ...rec, message: rec.message.replace(/\n+$/, ''), files: parseRawNumstat(raw.stdout) }
}

/**
 * A commit's fields as `git log -1 --format=LOG_FORMAT` gives them, read in process;
 * undefined where git could present it differently (history.ts parseCommit declines,
 * a NUL in the message, which git's %B stops at, or a date outside JavaScript's range).
 */
async function commitRecord(repo: Repo, commit: string): Promise<(CommitSummary & { message: string }) | undefined> {
  const o = await repo.object(commit)
  if (!o || o.type !== 'commit') return undefined
  const info = parseCommit(o.oid, o.data)
  if (!info) return undefined
  const at = o.data.indexOf('\n\n')
  const message = at < 0 ? '' : o.data.toString('utf8', at + 2)
  if (message.includes('\0')) return undefined
  const dated = (t: number): boolean => Number.isFinite(new Date(t * 1000).getTime())
  if (!dated(info.author.time) || !dated(info.committer.time)) return undefined
  return { ...summaryOf(info), message }
}

async function gitCommitRecord(repo: Repo, commit: string): Promise<(CommitSummary & { message: string }) | undefined> {
  return parseLogRecords(await gitText(repo.gitDir, ['log', '-1', `--format=${LOG_FORMAT}`, commit]))[0]
}

export interface TreeEntry {
  name: string
  path: string
  type: 'file' | 'dir' | 'symlink' | 'submodule'
  mode: string
  id: string
  size?: number
}

const typeOfMode = (mode: string): TreeEntry['type'] =>
  mode === '040000' ? 'dir' : mode === '120000' ? 'symlink' : mode === '160000' ? 'submodule' : 'file'

/**
 * Entries of a directory at a commit ('' is the root); null if not a directory. Read in
 * process from the parsed-tree cache, sizes by pipelined `info` requests: no git process.
 */
export async function listDir(repo: Repo, commit: string | null, dir: string): Promise<TreeEntry[] | null> {
  if (commit === null) return dir === '' ? [] : null
  let tree: string
  if (dir === '') tree = await repo.commitTree(commit)
  else {
    const it = await repo.entryAt(commit, dir)
    if (!it || !isTreeMode(it.mode)) return null
    tree = it.oid
  }
  const items = [...(await repo.treeItems(tree)).values()]
  const sized = (mode: string): boolean => !isTreeMode(mode) && mode !== '160000'
  const sizes = await repo.sizes(items.filter((it) => sized(it.mode)).map((it) => it.oid))
  // Tree order, as git ls-tree lists it; modes in ls-tree's six-digit form.
  return items.map((it) => {
    const mode = it.mode.padStart(6, '0')
    const e: TreeEntry = {
      name: it.name,
      path: dir === '' ? it.name : `${dir}/${it.name}`,
      type: typeOfMode(mode),
      mode,
      id: it.oid,
    }
    const size = sizes.get(it.oid)
    if (sized(it.mode) && size !== undefined) e.size = size
    return e
  })
}

export interface Content {
  encoding: 'utf8' | 'base64'
  content: string
  truncated: boolean
}

/** Text as utf8, anything else (NUL byte or invalid UTF-8) as base64; at most maxBytes. */
export function encodeContent(data: Buffer, maxBytes: number): Content {
  const truncated = data.length > maxBytes
  let slice = truncated ? data.subarray(0, maxBytes) : data
  const probe = slice.subarray(0, 8000)
  let binary = probe.includes(0)
  if (!binary) {
    // A truncation may split a multi-byte character; back off to a character boundary.
    if (truncated) {
      let end = slice.length
      for (let k = 0; k < 3 && end > 0 && ((slice[end - 1] ?? 0) & 0xc0) === 0x80; k++) end--
      if (end > 0 && ((slice[end - 1] ?? 0) & 0xc0) === 0xc0) end--
      slice = slice.subarray(0, end)
    }
    try {
      return { encoding: 'utf8', content: new TextDecoder('utf-8', { fatal: true }).decode(slice), truncated }
    } catch {
      binary = true
    }
  }
  return { encoding: 'base64', content: (truncated ? data.subarray(0, maxBytes) : data).toString('base64'), truncated }
}

export interface DiffFile {
  path: string
  old_path?: string
  status: ChangeStatus
  binary: boolean
  additions: number
  deletions: number
  patch: string
}

/** Diff between two trees/commits (base null = empty tree), bounded to maxPatchBytes of patch text. */
export async function diff(
  repo: Repo,
  base: string | null,
  head: string,
  paths: string[],
  maxPatchBytes: number,
): Promise<{ files: DiffFile[]; truncated: boolean }> {
  // Trees, not commits: diff-tree --stdin reads a commit line as "commit and its parents".
  const [b, h] = await Promise.all([base === null ? EMPTY_TREE : treeOf(repo, base), treeOf(repo, head)])
  const [raw, patch] = await Promise.all([
    repo.diffTree(RAW_ARGS, paths).diff(b, h),
    repo.diffTree(PATCH_ARGS, paths).diff(b, h, { maxStdout: maxPatchBytes + 1 }),
  ])
  const changes = parseRawNumstat(raw.stdout)
  const text = patch.stdout.subarray(0, maxPatchBytes).toString('utf8')
  let truncated = patch.stdout.length > maxPatchBytes
  const chunks = text.split(/^(?=diff --git )/m).filter((c) => c.startsWith('diff --git '))
  const files = changes.map((ch, idx) => {
    let p = chunks[idx] ?? ''
    // The last chunk may be cut by the byte budget: mark it and keep it only if complete.
    if (truncated && idx === chunks.length - 1) p = ''
    if (idx >= chunks.length) truncated = truncated || p === ''
    const binary = ch.additions === null
    const f: DiffFile = {
      path: ch.path,
      status: ch.status,
      binary,
      additions: ch.additions ?? 0,
      deletions: ch.deletions ?? 0,
      patch: binary ? '' : p,
    }
    if (ch.old_path !== undefined) f.old_path = ch.old_path
    return f
  })
  return { files, truncated }
}
