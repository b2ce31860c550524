import fs from 'node:fs'
import path from 'node:path'
import { git, gitText, type CatObject } from './git.ts'
import { invalid, notFound } from './errors.ts'
import type { Repo } from './repos.ts'
import { isTreeMode } from './objects.ts'
import { Lru } from './lru.ts'
import { dirParts, isBinary, readAhead } from './corpus.ts'
import { trivialMerge } from './merge.ts'
import {
  mergeBase,
  parseCommit,
  plainHistory,
  walkLog,
  walkPathLog,
  type CommitInfo,
  type Ident as HistoryIdent,
} from './history.ts'
import { encodeCursor, decodeCursor, isCount } from './util.ts'

// Read-side git operations shared by repository, workspace and proposal endpoints.

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

export interface SearchMatch {
  path: string
  line: number
  text: string
}

/**
 * `git grep -n -I -F -e q <commit> -- paths`, in process: the regular files of the tree in
 * git's order (depth first, tree order), blobs through the repository's cat-file process,
 * files with a NUL in their first 8000 bytes skipped as binary (git's -I test), every
 * line containing q as bytes, in order. Attributes could make git treat a file as
 * binary or text differently; a repository with an info/attributes file goes to git.
 * Without pathspecs it scans each directory's text end to end (corpus.ts).
 */
export async function search(
  repo: Repo,
  commit: string,
  q: string,
  paths: string[],
  limit: number,
): Promise<{ matches: SearchMatch[]; truncated: boolean }> {
  if (fs.existsSync(path.join(repo.gitDir, 'info', 'attributes'))) return gitSearch(repo, commit, q, paths, limit)
  const needle = Buffer.from(q, 'utf8')
  const root = await repo.commitTree(commit)
  const matches: SearchMatch[] = []
  const truncated =
    paths.length === 0
      ? await searchDir(repo, root, '', needle, matches, limit)
      : await scanFiles(repo, await searchFiles(repo, root, paths), needle, matches, limit)
  return { matches, truncated }
}

/** Search the files one blob at a time; true if the limit cut it short. */
async function scanFiles(
  repo: Repo,
  files: readonly FileRef[],
  needle: Buffer,
  out: SearchMatch[],
  limit: number,
): Promise<boolean> {
  let truncated = false
  await readAhead(
    repo,
    files.map((f) => f.oid),
    (o, i) => {
      truncated = scanBlob(o, (files[i] as FileRef).path, needle, out, limit)
      return truncated
    },
  )
  return truncated
}

/** Search one directory's parts in order; true if the limit cut it short. */
async function searchDir(
  repo: Repo,
  tree: string,
  dir: string,
  needle: Buffer,
  out: SearchMatch[],
  limit: number,
): Promise<boolean> {
  const parts = await dirParts(repo, tree, dir)
  if (!parts) return scanFiles(repo, await regularFiles(repo, tree, dir, []), needle, out, limit)
  for (const part of parts) {
    if (part.kind === 'run') {
      if (scan(part.bytes, part.starts, part.paths, needle, out, limit)) return true
    } else if (part.kind === 'sub') {
      if (await searchDir(repo, part.tree, part.dir, needle, out, limit)) return true
    } else if (scanBlob(await repo.object(part.oid), part.path, needle, out, limit)) return true
  }
  return false
}

/** scan() of one blob named `file`, unless it is missing, not a blob or binary; true if the limit cut it short. */
function scanBlob(o: CatObject | null, file: string, needle: Buffer, out: SearchMatch[], limit: number): boolean {
  if (!o || o.type !== 'blob' || isBinary(o.data)) return false
  return scan(o.data, [0, o.data.length], [file], needle, out, limit)
}

/**
 * Every line containing needle in files laid end to end in bytes (file k is
 * [starts[k], starts[k+1]), named paths[k]), in order, onto out; true if the limit
 * cut it short. Every file but the last ends in a newline, so no line spans two.
 */
function scan(
  bytes: Buffer,
  starts: readonly number[],
  paths: readonly string[],
  needle: Buffer,
  out: SearchMatch[],
  limit: number,
): boolean {
  let k = 0
  let line = 1
  let counted = 0 // line numbers of file k are counted up to here
  let from = 0
  for (;;) {
    const at = bytes.indexOf(needle, from)
    if (at < 0) return false
    if (at >= (starts[k + 1] as number)) {
      while (at >= (starts[k + 1] as number)) k++
      line = 1
      counted = starts[k] as number
    }
    // (a negative offset would count from the end)
    const start = at === 0 ? 0 : bytes.lastIndexOf(10, at - 1) + 1
    // q is one non-empty line (routes.ts), so a match never spans lines
    let end = bytes.indexOf(10, at)
    if (end < 0) end = bytes.length
    for (let n = bytes.indexOf(10, counted); n >= 0 && n < start; n = bytes.indexOf(10, n + 1)) line++
    counted = start
    if (out.length >= limit) return true
    const text = bytes.toString('utf8', start, end)
    out.push({ path: paths[k] as string, line, text: text.length > 1000 ? text.slice(0, 1000) : text })
    from = end + 1
    if (from > bytes.length) return false
  }
}

interface FileRef {
  path: string
  oid: string
}

/** Does a literal pathspec (git: GIT_LITERAL_PATHSPECS) take this path: itself or under it? */
const underSpec = (p: string, spec: string): boolean => p === spec || p.startsWith(`${spec}/`)

// The file list of the last few trees searched (by tree id and pathspecs: immutable), so
// repeated searches of one branch head skip the walk.
const fileLists = new WeakMap<Repo, Map<string, readonly FileRef[]>>()
async function searchFiles(repo: Repo, tree: string, specs: string[]): Promise<readonly FileRef[]> {
  let lists = fileLists.get(repo)
  if (!lists) {
    lists = new Map()
    fileLists.set(repo, lists)
  }
  const key = [tree, ...specs].join('\0')
  let files = lists.get(key)
  if (!files) {
    files = await regularFiles(repo, tree, '', specs)
    if (lists.size >= 4) lists.delete(lists.keys().next().value as string)
    lists.set(key, files)
  }
  return files
}

// The file lists of whole subtrees (by tree id and the directory it sits at), for the
// searches that go file by file (pathspecs, directories too large for corpus.ts): a new
// root after an integration walks only the trees it changed, not all of main again
// (2,064 files in the soak: 3-4 ms each time). Bounded by how many files the lists hold.
const subtreeLists = new WeakMap<Repo, Lru<string, readonly FileRef[]>>()
const SUBTREE_LIST_FILES = 50_000

/** Regular files (100644/100755) under a tree in git's order, limited to literal pathspecs. */
async function regularFiles(repo: Repo, tree: string, dir: string, specs: string[]): Promise<readonly FileRef[]> {
  let lists: Lru<string, readonly FileRef[]> | undefined
  const key = `${tree}\0${dir}`
  if (specs.length === 0 && dir !== '') {
    lists = subtreeLists.get(repo)
    if (!lists) {
      lists = new Lru(SUBTREE_LIST_FILES, (l) => l.length + 1)
      subtreeLists.set(repo, lists)
    }
    const hit = lists.get(key)
    if (hit) return hit
  }
  const out: FileRef[] = []
  for (const it of (await repo.treeItems(tree)).values()) {
    const p = dir === '' ? it.name : `${dir}/${it.name}`
    const taken = specs.length === 0 || specs.some((s) => underSpec(p, s))
    if (isTreeMode(it.mode)) {
      // (a loop, not push(...sub): a spread of a very large directory overflows the stack)
      if (taken || specs.some((s) => s.startsWith(`${p}/`)))
        for (const f of await regularFiles(repo, it.oid, p, taken ? [] : specs)) out.push(f)
    } else if (taken && (it.mode === '100644' || it.mode === '100755')) out.push({ path: p, oid: it.oid })
  }
  // (a list over the bound would only push out all the others)
  if (out.length < SUBTREE_LIST_FILES) lists?.set(key, out)
  return out
}

async function gitSearch(
  repo: Repo,
  commit: string,
  q: string,
  paths: string[],
  limit: number,
): Promise<{ matches: SearchMatch[]; truncated: boolean }> {
  const args = ['grep', '-n', '-I', '-F', '--full-name', '-z', '-e', q, commit]
  if (paths.length) args.push('--', ...paths)
  // grep exits 1 when nothing matches; output is capped so a hot query stays bounded.
  const r = await git(repo.gitDir, args, { okCodes: [1], maxStdout: 4 * 1024 * 1024 })
  const matches: SearchMatch[] = []
  let truncated = false
  for (const line of r.stdout.toString('utf8').split('\n')) {
    if (!line) continue
    // -z format: <commit>:<path>\0<line>\0<text>
    const [loc = '', ln = '', ...rest] = line.split('\0')
    if (matches.length >= limit) {
      truncated = true
      break
    }
    const p = loc.startsWith(commit + ':') ? loc.slice(commit.length + 1) : loc
    const text = rest.join('\0')
    matches.push({ path: p, line: Number(ln), text: text.length > 1000 ? text.slice(0, 1000) : text })
  }
  return { matches, truncated }
}

/** merge-base based classification plus merge-tree for real merges. */
export async function mergeability(
  repo: Repo,
  target: string,
  head: string,
): Promise<{
  mergeability: 'fast_forward' | 'clean' | 'conflicts' | 'up_to_date'
  conflicts: string[]
  /** null: the two have no common history */
  merge_base: string | null
  tree?: string
}> {
  // In process when the answer is unique (history.ts); git otherwise.
  const unique = await mergeBase(repo, target, head)
  let base = unique
  if (base === undefined) {
    const out = (await git(repo.gitDir, ['merge-base', target, head], { okCodes: [1] })).stdout.toString('utf8').trim()
    base = /^[0-9a-f]{40}$/.test(out) ? out : null
  }
  if (base === head) return { mergeability: 'up_to_date', conflicts: [], merge_base: base }
  if (base === target) return { mergeability: 'fast_forward', conflicts: [], merge_base: base }
  // (one of several bases is no base for a merge: git merges them first)
  const m = await mergeTree(repo, target, head, unique ?? null)
  return m.conflicts.length
    ? { mergeability: 'conflicts', conflicts: m.conflicts, merge_base: base }
    : { mergeability: 'clean', conflicts: [], merge_base: base, tree: m.tree }
}

/**
 * `git merge-tree --write-tree ours theirs`: the merged tree, or the conflicting paths. In
 * process when the merge is a path-by-path choice (merge.ts); `base` is the two commits' one
 * merge base if the caller knows it (null: none, or not one).
 */
export async function mergeTree(
  repo: Repo,
  ours: string,
  theirs: string,
  base?: string | null,
): Promise<{ tree: string; conflicts: string[] }> {
  const b = base === undefined ? await mergeBase(repo, ours, theirs) : base
  if (b) {
    const [bt, ot, tt] = await Promise.all([repo.commitTree(b), repo.commitTree(ours), repo.commitTree(theirs)])
    const tree = await trivialMerge(repo, bt, ot, tt)
    if (tree !== undefined) return { tree, conflicts: [] }
  }
  const r = await git(
    repo.gitDir,
    ['merge-tree', '--write-tree', '--name-only', '--no-messages', '-z', '--allow-unrelated-histories', ours, theirs],
    { okCodes: [1] },
  )
  const parts = r.stdout.toString('utf8').split('\0').filter(Boolean)
  const tree = (parts[0] ?? '').trim()
  const conflicts = r.code === 1 ? [...new Set(parts.slice(1))] : []
  return { tree, conflicts: r.code === 1 && conflicts.length === 0 ? ['(unknown)'] : conflicts }
}
