// A temporary git repository with an initialised pack, for the continuity plugin's tests.
// Commits are made with an identity set here, never the machine's git config.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Test } from 'tap'
import { isPluginFailure } from '../../../core/src/plugin-api.ts'
import type { PluginFailure } from '../../../core/src/plugin-api.ts'
import { initPack, Pack } from '../../../plugins/continuity/store.ts'
import { GIT_IDENTITY } from '../../helpers/git-identity.ts'

export const GIT_ENV = { ...process.env, ...GIT_IDENTITY }

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: GIT_ENV, encoding: 'utf8' }).trim()
}

/** A repository with one commit (README.md, src/a.ts) and, unless `init: false`, a pack. */
export async function repo(t: Test, o: { init?: boolean; git?: boolean } = {}): Promise<string> {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'ag-continuity-')))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(join(dir, 'README.md'), '# demo\n')
  execFileSync('mkdir', ['-p', join(dir, 'src')])
  writeFileSync(join(dir, 'src', 'a.ts'), 'export const a = 1\n')
  if (o.git !== false) {
    git(dir, 'init', '-q', '-b', 'main')
    git(dir, 'add', '.')
    git(dir, 'commit', '-q', '-m', 'init')
  }
  if (o.init !== false) await initPack(dir)
  return dir
}

export function pack(root: string, signal?: AbortSignal): Pack {
  return new Pack(root, { signal, env: {} })
}

/** The plugin failure a promise rejects with (fails the test when it resolves). */
export async function refusal(p: Promise<unknown>): Promise<PluginFailure> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  )
  if (!isPluginFailure(e)) throw new Error(`expected a refusal, got ${e instanceof Error ? e.stack : String(e)}`)
  return e
}
