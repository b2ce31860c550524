// Git hooks that keep neural commits in step with real git: post-commit and post-merge link
// pending thoughts to the new commit, post-checkout and post-rewrite follow branch switches and
// history rewrites. Our block sits between our own marker lines, appended to whatever the hook
// file already holds (AGIT's `# AGIT-HOOK-START` block included), and uninstall removes only it.
import { chmod, readFile, rm } from 'node:fs/promises'
import { isAbsolute, join } from 'node:path'
import { writeAtomic } from './files.ts'
import { gitOut } from './git.ts'

export const HOOKS = ['post-commit', 'post-checkout', 'post-merge', 'post-rewrite'] as const
// Deliberately unlike AGIT's markers: its uninstaller matches `AGIT-HOOK-START`, and must not find ours.
const START = '# >>> ag-mcp agit hook >>>'
const END = '# <<< ag-mcp agit hook <<<'

export async function hooksDir(root: string): Promise<string> {
  const d = await gitOut(root, ['rev-parse', '--git-path', 'hooks'])
  return isAbsolute(d) ? d : join(root, d)
}

/** POSIX single-quoting: the path is data to sh, whatever it contains. */
export function shQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`
}

function block(hook: string, command: readonly string[]): string {
  // stdin from /dev/null and errors swallowed: a hook must never block or fail the user's git command.
  return `${START}\n${[...command, 'agit', 'sync', '--hook', hook, '--quiet'].map(shQuote).join(' ')} </dev/null >/dev/null 2>&1 || true\n${END}\n`
}

function withoutOurs(text: string): string {
  const lines = text.split('\n')
  const out: string[] = []
  let inside = false
  for (const l of lines) {
    if (l === START) inside = true
    else if (l === END) inside = false
    else if (!inside) out.push(l)
  }
  return out.join('\n')
}

export interface HookChange {
  hook: string
  path: string
  action: 'created' | 'appended' | 'replaced' | 'removed' | 'deleted' | 'absent'
}

/** Installs (or refreshes) our block in each hook; `command` runs ag-mcp (absolute paths). */
export async function installHooks(root: string, command: readonly string[]): Promise<HookChange[]> {
  const dir = await hooksDir(root)
  const changes: HookChange[] = []
  for (const hook of HOOKS) {
    const path = join(dir, hook)
    const current = await readFile(path, 'utf8').catch(() => undefined)
    let next: string
    let action: HookChange['action']
    if (current === undefined) {
      next = `#!/bin/sh\n${block(hook, command)}`
      action = 'created'
    } else {
      const had = current.includes(START)
      const base = withoutOurs(current).replace(/\n*$/, '\n')
      next = `${base}${block(hook, command)}`
      action = had ? 'replaced' : 'appended'
    }
    await writeAtomic(path, next)
    await chmod(path, 0o755)
    changes.push({ hook, path, action })
  }
  return changes
}

/** Removes our block only; a hook left with nothing but a shebang is deleted (as AGIT does). */
export async function uninstallHooks(root: string): Promise<HookChange[]> {
  const dir = await hooksDir(root)
  const changes: HookChange[] = []
  for (const hook of HOOKS) {
    const path = join(dir, hook)
    const current = await readFile(path, 'utf8').catch(() => undefined)
    if (current === undefined || !current.includes(START)) {
      changes.push({ hook, path, action: 'absent' })
      continue
    }
    const rest = withoutOurs(current)
    if (rest.replace(/^#!.*\n?/, '').trim() === '') {
      await rm(path, { force: true })
      changes.push({ hook, path, action: 'deleted' })
    } else {
      await writeAtomic(path, rest)
      await chmod(path, 0o755)
      changes.push({ hook, path, action: 'removed' })
    }
  }
  return changes
}

export async function hookStatus(root: string): Promise<Array<{ hook: string; ours: boolean; agit: boolean }>> {
  const dir = await hooksDir(root)
  const out = []
  for (const hook of HOOKS) {
    const text = (await readFile(join(dir, hook), 'utf8').catch(() => '')) as string
    out.push({ hook, ours: text.includes(START), agit: text.includes('# AGIT-HOOK-START') })
  }
  return out
}
