// Location validation, AGIT's rule made exact: the file must exist, and its real path (`..`
// and symlinks resolved) must lie inside the repository's real root, compared per path segment
// (lib/inside-root.ts; a path out of the root is refused before anything outside it is probed).
import { realpath } from 'node:fs/promises'
import { isAbsolute } from 'node:path'
import { resolveInsideRoot } from '../../lib/inside-root.ts'

/** `missing`: the path names nothing (yet) inside the root; otherwise it leads out of it. */
export type LocationCheck = { ok: true } | { ok: false; error: string; missing: boolean }

export async function checkLocation(root: string, file: string): Promise<LocationCheck> {
  const where = await resolveInsideRoot(root, file)
  if (where.ok && where.kind !== undefined) return { ok: true }
  const realRoot = await realpath(root)
  if (!where.ok && (where.why === 'outside' || where.why === 'escapes'))
    return {
      ok: false,
      error: `⛔ SECURITY VIOLATION: Path '${file}' is outside repository scope (${realRoot}). Agit is a single-repo tool. Switch to the correct directory to log context for external files.`,
      missing: false,
    }
  return {
    ok: false,
    error: `File '${file}' does not exist in repository (${realRoot}). Only existing files can be referenced in location metadata.`,
    missing: true,
  }
}

/**
 * A path a workspace could hold: relative, with no `.`, `..` or empty segment (what AGWP paths
 * look like). Only such a missing path is asked about; anything else is refused as AGIT does.
 */
export function isPlainRelative(file: string): boolean {
  if (file === '' || isAbsolute(file) || file.includes('\\')) return false
  return file.split('/').every((s) => s !== '' && s !== '.' && s !== '..')
}

/** `repo_path` names this repository (same real path; a subdirectory or another repo does not). */
export async function sameRepository(
  root: string,
  repoPath: string,
): Promise<{ ok: true } | { ok: false; error: string }> {
  const realRoot = await realpath(root)
  let target: string
  try {
    target = await realpath(repoPath)
  } catch {
    return { ok: false, error: `Target repository '${repoPath}' does not exist or is not accessible` }
  }
  if (target === realRoot) return { ok: true }
  return {
    ok: false,
    error: `Repository mismatch: entries target '${repoPath}' but current repo is '${realRoot}'.\nUse \`cd\` to switch to the target repository, or omit repo_path to log to current repo.`,
  }
}
