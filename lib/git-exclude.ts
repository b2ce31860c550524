// Entries in a repository's `.git/info/exclude`: git ignores them as it ignores `.gitignore`'s,
// but the file is the clone's own, in no commit, so adding one changes no tracked file (a tracked
// `.gitignore` edited behind the person's back shows in `git status` and blocks
// `ag-mcp proposals integrate`). Every ag-mcp command that keeps something in the work tree
// (local mode's `.ag/`, agit's `.agit/`, continuity's `.agentpack/`, a project's host file)
// lists it here, through this one module.
import { execFile } from 'node:child_process'
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { dirname, isAbsolute, join } from 'node:path'

/** The repository's exclude file (a linked worktree's is its main repository's). */
export async function excludePath(top: string): Promise<string> {
  const out = await new Promise<string>((resolve, reject) =>
    execFile(
      'git',
      ['rev-parse', '--git-path', 'info/exclude'],
      { cwd: top, encoding: 'utf8', env: { ...process.env, GIT_TERMINAL_PROMPT: '0' } },
      (err, stdout) => (err ? reject(err) : resolve(stdout.trim())),
    ),
  )
  return isAbsolute(out) ? out : join(top, out)
}

/** `/.ag/`, `.ag/` and `.ag` name the same entry here (as Agentpack's own check reads them). */
const norm = (line: string): string => line.trim().replace(/^\//, '').replace(/\/$/, '')

/** Our comment lines start so: the one above entries we add, removed with the last of them. */
const MARK = '# ag-mcp: '

/** The entries not yet listed (what addExcludes would add); reads only. */
export async function missingExcludes(top: string, entries: readonly string[]): Promise<string[]> {
  const text = await readFile(await excludePath(top), 'utf8').catch(() => '')
  const have = new Set(text.split(/\r?\n/).map(norm))
  return entries.filter((e) => !have.has(norm(e)))
}

/**
 * Adds each entry not yet listed (under one `# ag-mcp: comment` line), and returns the ones it
 * added: an empty list means the file already had them all and was not written.
 */
export async function addExcludes(top: string, entries: readonly string[], comment: string): Promise<string[]> {
  const file = await excludePath(top)
  const text = await readFile(file, 'utf8').catch((e: NodeJS.ErrnoException) =>
    e.code === 'ENOENT' ? '' : Promise.reject(e),
  )
  const have = new Set(text.split(/\r?\n/).map(norm))
  const missing = entries.filter((e) => !have.has(norm(e)))
  if (missing.length === 0) return []
  const sep = text === '' || text.endsWith('\n') ? '' : '\n'
  await replace(file, `${text}${sep}${MARK}${comment}\n${missing.join('\n')}\n`)
  return missing
}

/** Removes the entries given (and our comment line, once nothing is left under it); returns those removed. */
export async function removeExcludes(top: string, entries: readonly string[]): Promise<string[]> {
  const file = await excludePath(top)
  const text = await readFile(file, 'utf8').catch(() => '')
  const drop = new Set(entries.map(norm))
  const removed: string[] = []
  const kept = text.split('\n').filter((l) => {
    if (l.trim() === '' || !drop.has(norm(l))) return true
    removed.push(l)
    return false
  })
  if (removed.length === 0) return []
  // Our comment line goes when what follows it is another comment, a blank line or the end.
  const out = kept.filter((l, i) => {
    const next = (kept[i + 1] ?? '').trim()
    return !(l.startsWith(MARK) && (next === '' || next.startsWith('#')))
  })
  await replace(file, out.join('\n'))
  return removed
}

async function replace(file: string, text: string): Promise<void> {
  await mkdir(dirname(file), { recursive: true })
  const tmp = `${file}.ag-mcp-${process.pid}.tmp`
  await writeFile(tmp, text)
  await rename(tmp, file)
}
