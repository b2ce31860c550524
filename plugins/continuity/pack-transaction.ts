// One write of several pack files as a transaction, for a bundle import: every file is staged
// under cache/.transaction-<id>/, then renamed into place (a `replace` file is backed up first);
// any failure removes what was installed, restores the backups and the directories made, and
// only when that undo itself fails are the recovery files kept (the error names where).
import { lstat, mkdir, rename, rm, rmdir, unlink } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { refuse } from './errors.ts'
import { createId, DIR_MODE, writeFilePrivate } from './pack-files.ts'
import type { Pack } from './store.ts'

/** A file to write, relative to .agentpack/: `create` refuses an existing file, `replace` backs it up. */
export interface StagedFile {
  rel: string
  content: string
  mode: 'create' | 'replace'
}

export async function transaction(pack: Pack, files: readonly StagedFile[]): Promise<void> {
  const txRoot = pack.path('cache', `.transaction-${createId('import')}`)
  let keep = false
  try {
    await safeDirChain(pack, join('cache', 'x'))
    await mkdir(join(txRoot, 'staged'), { recursive: true, mode: DIR_MODE })
    const staged = await Promise.all(
      files.map(async (f, i) => {
        await safeDirChain(pack, f.rel)
        const path = join(txRoot, 'staged', String(i))
        await writeFilePrivate(path, f.content)
        return { ...f, staged: path, target: pack.path(f.rel) }
      }),
    )
    const backups: { target: string; backup: string }[] = []
    const installed: string[] = []
    const made: string[] = []
    try {
      for (const [i, f] of staged.entries()) {
        if (
          !(await lstat(f.target).then(
            () => true,
            () => false,
          ))
        )
          continue
        if (f.mode === 'create') throw refuse('conflict', `bundle import refuses to overwrite ${f.rel}`)
        const backup = join(txRoot, 'backup', String(i))
        await mkdir(dirname(backup), { recursive: true, mode: DIR_MODE })
        await rename(f.target, backup)
        backups.push({ target: f.target, backup })
      }
      for (const f of staged) {
        await mkdirTracked(dirname(f.target), pack.path(), made)
        await rename(f.staged, f.target)
        installed.push(f.target)
      }
    } catch (e) {
      let incomplete = false
      for (const p of installed.reverse()) await unlink(p).catch(() => (incomplete = true))
      for (const b of backups.reverse()) await rename(b.backup, b.target).catch(() => (incomplete = true))
      for (const d of made.reverse()) await rmdir(d).catch(() => undefined)
      if (incomplete) {
        keep = true
        throw refuse(
          'conflict',
          `bundle import failed and could not undo everything; recovery files remain in ${txRoot}`,
        )
      }
      throw e
    }
  } finally {
    if (!keep) await rm(txRoot, { recursive: true, force: true })
  }
}

/** Every existing directory from .agentpack/ down to the file's parent is a real directory. */
async function safeDirChain(pack: Pack, rel: string): Promise<void> {
  let at = pack.path()
  for (const part of [
    '',
    ...dirname(rel)
      .split(/[\\/]/)
      .filter((p) => p && p !== '.'),
  ]) {
    at = part ? join(at, part) : at
    const s = await lstat(at).catch(() => undefined)
    if (!s) return
    if (s.isSymbolicLink() || !s.isDirectory())
      throw refuse('invalid', `bundle import refuses ${at}: not a plain directory`)
  }
}

async function mkdirTracked(dir: string, stop: string, made: string[]): Promise<void> {
  if (
    dir === stop ||
    (await lstat(dir).then(
      () => true,
      () => false,
    ))
  )
    return
  await mkdirTracked(dirname(dir), stop, made)
  await mkdir(dir, { mode: DIR_MODE })
  made.push(dir)
}
