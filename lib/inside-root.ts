// "A path inside the root, with no symbolic link out of it": the one check the core's write-path
// policy, continuity's bundles and sources and agit's locations make before they touch a file.
// Each says its own refusal in its own words; the rule is here, once.
//
// The rule. `..` is resolved lexically first (as path.resolve does), and a path that is then not
// under the root (as given, or its real path) is refused before the filesystem is asked anything:
// nothing outside the root is probed. Then the part of the path that exists is resolved through
// its symbolic links and must still lie under the root's real path; names below it that do not
// exist yet are appended as they are. Containment compares whole segments: /repo-evil is not
// under /repo (a plain prefix test accepts it: one of the filesystem-server escapes of 2025).
import { lstat, realpath } from 'node:fs/promises'
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path'

/** Why a path was refused. */
export type OutsideRoot =
  /** a NUL character: no filesystem call takes it */
  | 'nul'
  /** not under the root once `..` is resolved */
  | 'outside'
  /** under the root as written, but a symbolic link leads out of it */
  | 'escapes'
  /** a step below the root is a symbolic link (only with `symlinks: 'refuse'`) */
  | 'symlink'
  /** a step below the root is a symbolic link that points nowhere, or at itself (a loop) */
  | 'dangling'
  /** a step before the last is a file, not a directory */
  | 'not-directory'
  /** the filesystem could not answer (`code`: EACCES, ENAMETOOLONG, …) */
  | 'unresolvable'

/** What a path names: undefined when it does not exist (yet). */
export type Kind = 'file' | 'directory' | 'other' | undefined

export type RootCheck =
  | {
      ok: true
      /** the absolute path as written (`..` resolved), not through its links */
      abs: string
      /** the real path: the existing part resolved, the missing names after it */
      real: string
      /** `real` relative to the root's real path, with `/` separators; '' is the root itself */
      rel: string
      /** what the whole path names now (a link: what it points at) */
      kind: Kind
    }
  | { ok: false; why: OutsideRoot; code?: string }

export interface RootCheckOptions {
  /**
   * 'follow' (the default): links are followed and only where they lead counts. 'refuse': no
   * step below the root may be a link at all, wherever it points.
   */
  symlinks?: 'follow' | 'refuse'
}

/** `child` is `parent` or below it, comparing whole segments (both absolute, or both relative to one directory). */
export function isInside(parent: string, child: string): boolean {
  const rel = relative(parent, child)
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel))
}

const codeOf = (e: unknown): string | undefined => (e as NodeJS.ErrnoException | undefined)?.code

/** Where `input` (relative to `root`, or absolute) really is, if it is inside `root`; see the rule above. */
export async function resolveInsideRoot(
  root: string,
  input: string,
  options: RootCheckOptions = {},
): Promise<RootCheck> {
  if (input.includes('\0') || root.includes('\0')) return { ok: false, why: 'nul' }
  const given = resolve(root)
  let realRoot: string
  try {
    realRoot = await realpath(given)
  } catch (e) {
    return { ok: false, why: 'unresolvable', code: codeOf(e) ?? 'unknown' }
  }
  const abs = resolve(given, input)
  const base = isInside(given, abs) ? given : isInside(realRoot, abs) ? realRoot : undefined
  if (base === undefined) return { ok: false, why: 'outside' }
  const walked = options.symlinks === 'refuse' ? await walkDown(base, abs) : await walkUp(base, abs)
  if ('why' in walked) return { ok: false, ...walked }
  let real: string
  try {
    real = await realpath(walked.existing)
  } catch (e) {
    const code = codeOf(e)
    return code === 'ENOENT' || code === 'ELOOP'
      ? { ok: false, why: 'dangling', code }
      : { ok: false, why: 'unresolvable', code: code ?? 'unknown' }
  }
  const full = walked.missing.length > 0 ? join(real, ...walked.missing) : real
  if (!isInside(realRoot, full)) return { ok: false, why: 'escapes' }
  // A link at the end has its target's kind ('linked': only walkUp follows links).
  const kind = walked.linked ? kindOf(await lstat(real)) : walked.kind
  return { ok: true, abs, real: full, rel: relative(realRoot, full).split(sep).join('/'), kind }
}

type Walked =
  | {
      existing: string
      missing: string[]
      /** of the whole path: undefined when part of it is missing, or when it is a link */
      kind: Kind
      /** the whole path exists and is itself a link */
      linked: boolean
    }
  | { why: OutsideRoot; code?: string }

const kindOf = (s: { isFile(): boolean; isDirectory(): boolean }): Kind =>
  s.isFile() ? 'file' : s.isDirectory() ? 'directory' : 'other'

/** The deepest part of `abs` that exists (at `base` at the latest), found from the end: one lstat when it all exists. */
async function walkUp(base: string, abs: string): Promise<Walked> {
  let existing = abs
  const missing: string[] = []
  for (;;) {
    try {
      const s = await lstat(existing)
      const linked = missing.length === 0 && s.isSymbolicLink()
      return { existing, missing, kind: missing.length > 0 || linked ? undefined : kindOf(s), linked }
    } catch (e) {
      const code = codeOf(e)
      if (code === 'ENOTDIR') return { why: 'not-directory' }
      if (code !== 'ENOENT' || existing === base) return { why: 'unresolvable', code: code ?? 'unknown' }
      missing.unshift(basename(existing))
      existing = dirname(existing)
    }
  }
}

/** Each step below `base` in turn, none of them a link, every one before the last a directory. */
async function walkDown(base: string, abs: string): Promise<Walked> {
  const parts = relative(base, abs).split(sep).filter(Boolean)
  let existing = base
  let kind: Kind = 'directory'
  for (const [i, part] of parts.entries()) {
    if (kind !== 'directory') return { why: 'not-directory' }
    const next = join(existing, part)
    try {
      const s = await lstat(next)
      if (s.isSymbolicLink()) return { why: 'symlink' }
      kind = kindOf(s)
      existing = next
    } catch (e) {
      const code = codeOf(e)
      if (code !== 'ENOENT') return { why: 'unresolvable', code: code ?? 'unknown' }
      return { existing, missing: parts.slice(i), kind: undefined, linked: false }
    }
  }
  return { existing, missing: [], kind, linked: false }
}
