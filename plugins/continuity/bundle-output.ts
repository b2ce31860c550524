// Where a bundle export may write: a new file inside the pack root (a person's CLI export) or
// under .agentpack/exports/ (the MCP tool's), never through a symbolic link out of either, never
// over an existing file. Every refusal names the path as given.
import { lstat, mkdir } from 'node:fs/promises'
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path'
import { isInside, resolveInsideRoot } from '../../lib/inside-root.ts'
import { refuse } from './errors.ts'
import { PACK_DIR } from './pack-files.ts'
import type { Pack } from './store.ts'

/** A file an export writes: absolute, and as the result names it. */
export interface OutputTarget {
  abs: string
  rel: string
}

/** A new file path inside the root, outside .agentpack/ and .git/, reached through no link out. */
export async function outputTarget(root: string, input: string): Promise<OutputTarget> {
  if (!input.trim()) throw refuse('invalid', 'bundle_export needs outputPath')
  const rel = repoRelative(root, input, 'bundle output path')
  const top = rel.split('/')[0]
  if (top === '.agentpack' || top === '.git')
    throw refuse('invalid', `refusing a bundle output path inside ${top}/: ${input}`)
  const abs = resolve(root, rel)
  await assertInsideRoot(root, dirname(abs), input)
  if (
    await lstat(abs).then(
      () => true,
      () => false,
    )
  )
    throw refuse('conflict', `Refusing to overwrite existing bundle output: ${input}`)
  return { abs, rel }
}

/** The folder under the pack that MCP exports go to (Agentpack's init creates it too). */
const EXPORTS = 'exports'

/**
 * An MCP export's file: `input` under `.agentpack/exports/` (given with that prefix or without),
 * never outside it, never through a symbolic link, never an existing file. The pack is ignored
 * by git, so an export changes no tracked file and nothing in the work tree a person reviews.
 */
export async function exportsTarget(pack: Pack, input: string): Promise<OutputTarget> {
  if (!input.trim()) throw refuse('invalid', 'bundle_export needs outputPath')
  const prefix = `${PACK_DIR}/${EXPORTS}/`
  const name = input.replace(/\\/g, '/').startsWith(prefix) ? input.slice(prefix.length) : input
  const base = pack.path(EXPORTS)
  await mkdir(base, { recursive: true, mode: 0o700 })
  await assertInsideRoot(pack.root, base, input)
  const rel = repoRelative(base, name, `bundle output path (under ${prefix})`)
  const abs = resolve(base, rel)
  await assertInsideRoot(base, dirname(abs), input)
  if (
    await lstat(abs).then(
      () => true,
      () => false,
    )
  )
    throw refuse('conflict', `Refusing to overwrite existing bundle output: ${prefix}${rel}`)
  return { abs, rel: `${prefix}${rel}` }
}

/** `input` as a path relative to `root`, refused when absolute, empty or outside it (no file is read). */
export function repoRelative(root: string, input: string, label: string): string {
  if (!input.trim()) throw refuse('invalid', `${label} must not be empty`)
  if (isAbsolute(input) || /^[A-Za-z]:[\\/]/.test(input))
    throw refuse('invalid', `${label} "${input}" must be relative to the project root`)
  const abs = resolve(root, input)
  if (abs === resolve(root) || !isInside(resolve(root), abs))
    throw refuse('invalid', `${label} "${input}" is outside the project root`)
  return relative(root, abs).split(sep).join('/')
}

/** `dir` must really be inside the root: its existing part resolved, no symlink out (lib/inside-root.ts). */
export async function assertInsideRoot(root: string, dir: string, input: string): Promise<void> {
  const where = await resolveInsideRoot(root, dir)
  if (where.ok) return
  if (where.why === 'not-directory')
    throw refuse('invalid', `refusing bundle output path ${input}: it goes through a file, not a directory`)
  if (where.why === 'nul' || where.why === 'unresolvable')
    throw refuse('invalid', `cannot resolve bundle output path ${input}${where.code ? ` (${where.code})` : ''}`)
  throw refuse(
    'invalid',
    `refusing bundle output path ${input}: it goes through a symbolic link out of the project root`,
  )
}
