import fs from 'node:fs'
import path from 'node:path'
import { dirParts, isBinary, readAhead } from './corpus.ts'
import { git, type CatObject } from './git.ts'
import { Lru } from './lru.ts'
import { isTreeMode } from './objects.ts'
import type { Repo } from './repos.ts'

// A repository's search: git grep's answer, computed in process over the tree's blobs.

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
