// Path and repository rules checked before any request leaves the process.
//
// normalizeRepoPath refuses hostile paths whatever the operator's globs say; globs can only
// narrow further. Glob semantics (minimatch 11, fixed options, see GLOB_OPTIONS):
// - dot files are matched explicitly: `src/**` does not match `src/.env`; `src/.env`,
//   `src/.*` or `src/**/.*` do.
// - braces expand (`{src,test}/**`); extglobs (`+(a|b)`) are off, so `+`, `@`, `!`, `(` and `|`
//   are literal characters; a leading `!` is literal too (no negation: in an allow-list
//   `!secret/**` would otherwise allow everything else); a leading `#` is literal (no comments).
// - matching is case-sensitive, `/`-separated, on the normalized path.

import { Minimatch, type MinimatchOptions } from 'minimatch'
import { resolveInsideRoot, type OutsideRoot } from '../../../lib/inside-root.ts'

export type PathVerdict = { ok: true; path: string } | { ok: false; reason: string }

export interface PathMatcher {
  readonly globs: readonly string[]
  matches(path: string): boolean
}

export type WritePathsVerdict =
  | { ok: true; paths: string[] }
  | { ok: false; rule: 'write-path'; value: string; reason: string }
export type RepoVerdict = { ok: true; repo: string } | { ok: false; rule: 'repo'; value: string; reason: string }

const MAX_PATH_LENGTH = 4096
const MAX_REPO_LENGTH = 256
/** Offending values are echoed at most this long. */
const MAX_ECHO = 200

const GLOB_OPTIONS: MinimatchOptions = {
  dot: false,
  noext: true,
  nonegate: true,
  nocomment: true,
  nocase: false,
  platform: 'linux',
}

// C0, DEL, C1, and the invisible/bidi format characters (which also include the code points
// HFS+ ignores in names, so `.g\u200cit` cannot reach a `.git` directory on a Mac checkout).
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/
const INVISIBLE =
  /[\u061c\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff]|\udb40[\udc00-\udc7f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

/**
 * True for a segment that names the git directory on some filesystem: `.git` in any case, with
 * trailing dots/spaces (Windows strips them), as an NTFS stream (`.git::$INDEX_ALLOCATION`) or
 * the 8.3 short name `git~1`.
 */
function isGitDir(segment: string): boolean {
  const s = segment.toLowerCase().replace(/[. ]+$/, '')
  return s === '.git' || s === 'git~1' || s.startsWith('.git:')
}

/** Shared by paths and repository names: what no value may contain, whatever the globs. */
function forbiddenCharacter(p: string): string | undefined {
  if (p.includes('\0')) return 'contains a NUL byte'
  if (CONTROL.test(p)) return 'contains a control character'
  if (INVISIBLE.test(p)) return 'contains an invisible, bidi or unpaired surrogate character'
  if (p.includes('\\')) return 'contains a backslash (use / as the separator)'
  return undefined
}

/** Every reason starts with "path " so a caller can tell path safety from a glob mismatch. */
export function normalizeRepoPath(p: string): PathVerdict {
  if (typeof p !== 'string' || p === '') return { ok: false, reason: 'path is empty.' }
  if (p.length > MAX_PATH_LENGTH) return { ok: false, reason: `path is longer than ${MAX_PATH_LENGTH} characters.` }
  const bad = forbiddenCharacter(p)
  if (bad !== undefined) return { ok: false, reason: `path ${bad}.` }
  if (p.startsWith('/')) return { ok: false, reason: 'path is absolute; give it relative to the repository root.' }
  if (/^[A-Za-z]:/.test(p))
    return { ok: false, reason: 'path starts with a drive letter; give it relative to the repository root.' }
  const segments: string[] = []
  for (const seg of p.split('/')) {
    if (seg === '' || seg === '.') continue
    if (seg === '..') return { ok: false, reason: 'path contains a ".." segment.' }
    if (isGitDir(seg)) return { ok: false, reason: 'path names the .git directory, which is never writable.' }
    segments.push(seg)
  }
  if (segments.length === 0) return { ok: false, reason: 'path names the repository root, not a file.' }
  return { ok: true, path: segments.join('/') }
}

export function compileGlobs(globs: readonly string[]): PathMatcher {
  const compiled = globs.map((g) => {
    if (typeof g !== 'string' || g.trim() === '') throw new TypeError('a glob is empty')
    if (g.includes('\0')) throw new TypeError(`glob ${JSON.stringify(g)} contains a NUL byte`)
    if (g.startsWith('/'))
      throw new TypeError(`glob ${JSON.stringify(g)} is absolute; paths are matched relative to the repository root`)
    return new Minimatch(g, GLOB_OPTIONS)
  })
  const frozen = Object.freeze([...globs])
  return {
    globs: frozen,
    matches: (path) => compiled.some((m) => m.match(path)),
  }
}

/** The offending value as shown back to the model: one line, no controls, bounded. */
function echo(v: string): string {
  const flat = v.replace(
    /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  )
  const cut = flat.length > MAX_ECHO ? `${flat.slice(0, MAX_ECHO)}…` : flat
  // never leave half a surrogate pair at the cut
  return cut.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd')
}

/**
 * Normalizes every path; refuses the first that is hostile or (when a matcher is given) matches
 * no glob. On success returns the normalized paths, which are what must be sent upstream.
 */
export function checkWritePaths(paths: string[], matcher: PathMatcher | undefined): WritePathsVerdict {
  const out: string[] = []
  for (const p of paths) {
    const n = normalizeRepoPath(p)
    if (!n.ok) return { ok: false, rule: 'write-path', value: echo(String(p)), reason: n.reason }
    if (matcher !== undefined && !matcher.matches(n.path)) {
      return {
        ok: false,
        rule: 'write-path',
        value: echo(n.path),
        reason: 'the path matches no --write-path glob.', // the path itself is quoted apart, as data
      }
    }
    out.push(n.path)
  }
  return { ok: true, paths: out }
}

/**
 * A repository name must be exact (`name` or `owner/name`): it is refused, not normalized, when
 * it has empty, `.` or `..` segments, controls or backslashes; then it must match a glob.
 */
export function checkRepo(repo: string, matcher: PathMatcher | undefined): RepoVerdict {
  const refuse = (reason: string): RepoVerdict => ({ ok: false, rule: 'repo', value: echo(String(repo)), reason })
  if (typeof repo !== 'string' || repo === '') return refuse('repository name is empty.')
  if (repo.length > MAX_REPO_LENGTH) return refuse(`repository name is longer than ${MAX_REPO_LENGTH} characters.`)
  const bad = forbiddenCharacter(repo)
  if (bad !== undefined) return refuse(`repository name ${bad}.`)
  if (repo.split('/').some((seg) => seg === '' || seg === '.' || seg === '..')) {
    return refuse('repository name has an empty, "." or ".." segment.')
  }
  if (matcher !== undefined && !matcher.matches(repo))
    return refuse(`repository "${echo(repo)}" matches no --repo glob.`)
  return { ok: true, repo }
}

/** What a refusal of lib/inside-root.ts says to the caller (NUL is refused before it is asked). */
function outsideRoot(why: OutsideRoot, code: string | undefined): string {
  switch (why) {
    case 'nul':
      return 'path contains a NUL character.'
    case 'outside':
      return 'path is outside the root directory.'
    case 'escapes':
      return 'path leads out of the root directory through a symlink.'
    case 'dangling':
      return code === 'ELOOP'
        ? 'path goes through a symlink loop.'
        : 'path goes through a symlink whose target does not exist.'
    case 'symlink':
      return 'path goes through a symlink.'
    case 'not-directory':
      return 'path goes through a file, not a directory.'
    case 'unresolvable':
      return `path cannot be checked (${code ?? 'unknown error'}).`
  }
}

/**
 * A local plugin's write paths, checked on the real filesystem under its root (a real path).
 * Each path may be relative to the root or absolute; `..` is resolved, then symlinks: the
 * deepest part of the path that exists is resolved with realpath (so a symlinked directory, or a
 * symlink as the file itself, counts where it points), and what is left must stay under the root
 * (lib/inside-root.ts). Then the usual rules apply to the path relative to the root (no .git, no
 * controls, the --write-path globs). On success the paths are returned relative to the root, as
 * checked.
 */
export async function checkLocalWritePaths(
  root: string,
  paths: string[],
  matcher: PathMatcher | undefined,
): Promise<WritePathsVerdict> {
  const refuse = (p: string, reason: string): WritePathsVerdict => ({
    ok: false,
    rule: 'write-path',
    value: echo(String(p)),
    reason,
  })
  const out: string[] = []
  for (const p of paths) {
    if (typeof p !== 'string' || p === '') return refuse(String(p), 'path is empty.')
    if (p.length > MAX_PATH_LENGTH) return refuse(p, `path is longer than ${MAX_PATH_LENGTH} characters.`)
    const bad = forbiddenCharacter(p)
    if (bad !== undefined) return refuse(p, `path ${bad}.`)
    const where = await resolveInsideRoot(root, p)
    if (!where.ok) return refuse(p, outsideRoot(where.why, where.code))
    if (where.rel === '') return refuse(p, 'path names the root directory, not a file.')
    const n = normalizeRepoPath(where.rel)
    if (!n.ok) return refuse(p, n.reason)
    if (matcher !== undefined && !matcher.matches(n.path))
      return refuse(n.path, `"${echo(n.path)}" matches no --write-path glob.`)
    out.push(n.path)
  }
  return { ok: true, paths: out }
}
