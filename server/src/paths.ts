import { invalid } from './errors.ts'

// Every path a client sends is checked here before it reaches git: a path is a
// '/'-separated repository-relative name, nothing that could escape the tree, touch
// git's own metadata, or break git's line-oriented plumbing input.
// A path has one canonical form: segments joined by single '/', no trailing '/'. Reads
// (allowRoot: the root or a directory may be listed) accept one trailing '/' on a
// directory name and drop it; anything that writes takes only the canonical form, since
// a trailing '/' would become an empty-named tree entry that git itself calls corrupt.
export function checkPath(p: unknown, field = 'path', allowRoot = false): string {
  return checked(p, field, allowRoot, false)
}

/**
 * A path that only reads: also a name holding a backslash or a control character, which a
 * tree can hold and a listing shows, so every listed name can be read back. Such a name
 * reaches git only as an argument (literal pathspec) or through the in-process tree walk,
 * never on a line of plumbing input; NUL and the other rules still refuse.
 */
export function checkReadPath(p: unknown, field = 'path', allowRoot = false): string {
  return checked(p, field, allowRoot, true)
}

function checked(p: unknown, field: string, allowRoot: boolean, read: boolean): string {
  if (typeof p !== 'string') throw invalid(`${field} is required`, { field })
  if (allowRoot && (p === '' || p === '/')) return ''
  const canonical = allowRoot && p.endsWith('/') && !p.endsWith('//') ? p.slice(0, -1) : p
  const reason = pathProblem(canonical, read)
  if (reason) throw invalid(`${field} refused: ${reason}`, { field, path: p.slice(0, 200) })
  return canonical
}

export function pathProblem(p: string, read = false): string | undefined {
  if (p.length === 0) return 'empty path'
  if (p.length > 4096) return 'path too long'
  if (p.includes('\0')) return 'NUL byte'
  if (!read && p.includes('\\')) return 'backslash'
  // eslint-disable-next-line no-control-regex
  if (!read && /[\u0000-\u001f\u007f]/.test(p)) return 'control character'
  if (p.startsWith('/') || /^[A-Za-z]:/.test(p)) return 'absolute path'
  if (p.endsWith('/')) return 'trailing slash'
  for (const s of p.split('/')) {
    if (s === '') return 'empty segment'
    if (s === '.' || s === '..') return `'${s}' segment`
    // .git in any case, and the names NTFS/HFS resolve to it (git refuses those too)
    if (/^\.git[. ]*$/i.test(s) || /^git~1$/i.test(s)) return "'.git' segment"
  }
  return undefined
}

// Refs are restricted to plain names so they can never smuggle revision syntax
// (`:`, `^`, `~`, `@{`) or options (`-`) into git command lines.
const REF_RE = /^[A-Za-z0-9_][A-Za-z0-9._/-]{0,254}$/
export function checkRef(r: unknown, field = 'ref'): string {
  if (
    typeof r !== 'string' ||
    !REF_RE.test(r) ||
    r.includes('..') ||
    r.includes('//') ||
    r.endsWith('/') ||
    r.endsWith('.lock') ||
    r.endsWith('.')
  ) {
    throw invalid(`${field} is not a valid ref name or commit id`, { field })
  }
  return r
}

export function checkBranch(r: unknown, field = 'target'): string {
  const b = checkRef(r, field)
  if (b.startsWith('refs/') || b === 'HEAD' || /^[0-9a-f]{40}$/.test(b))
    throw invalid(`${field} must be a branch name`, { field })
  return b
}

const REPO_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/
export function checkRepoName(n: unknown): string {
  if (typeof n !== 'string' || !REPO_RE.test(n) || n.endsWith('.git') || n.includes('..'))
    throw invalid('invalid repository name', { field: 'repo' })
  return n
}

/** Every directory prefix of a path: a/b/c -> [a, a/b]. */
export function ancestors(p: string): string[] {
  const segs = p.split('/')
  const out: string[] = []
  for (let i = 1; i < segs.length; i++) out.push(segs.slice(0, i).join('/'))
  return out
}
