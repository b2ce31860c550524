// The entry ag-mcp puts in a host's file, and the files themselves: the command that starts this
// very ag-mcp, the name a local entry gets, how a host file is read and replaced. `install` and
// `agit init` (through projectConfigs) both use them, so both write one entry, by one name.
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { homedir } from 'node:os'
import { basename, dirname, join } from 'node:path'
import { addExcludes } from '../lib/git-exclude.ts'
import { addEntry, findEntry } from './host-config.ts'
import type { ServerEntry } from './host-config.ts'
import { hostFormat } from './hosts.ts'
import type { HostName } from './hosts.ts'

/** How this very ag-mcp is started again: node and the bundle, or the standalone executable alone. */
export function selfCommand(): ServerEntry {
  const exe = realpathSync(process.execPath)
  const script = process.argv[1] ? realpathSync(process.argv[1]) : exe
  return script === exe ? { command: exe, args: [] } : { command: exe, args: [script] }
}

/** An entry is ours when it starts an ag-mcp (bundle or executable). */
export function isOurs(entry: unknown): boolean {
  if (typeof entry !== 'object' || entry === null) return false
  const e = entry as { command?: unknown; args?: unknown }
  const words = [e.command, ...(Array.isArray(e.args) ? e.args : [])].filter((w): w is string => typeof w === 'string')
  return words.some((w) => /^ag-mcp(\.mjs|-[a-z0-9-]+(\.exe)?)?$/.test(basename(w)))
}

/**
 * The entry name a local entry gets: one per repository (`agentgit-<its folder name>`), so two
 * repositories never share one in a user file, and never the shared server's `agentgit`.
 */
export function localEntryName(top: string): string {
  const stem = basename(top)
    .replace(/[^A-Za-z0-9_-]+/g, '-')
    .replace(/^-+|-+$/g, '')
  return `agentgit-${stem || 'repo'}`.slice(0, 64)
}

/** A host file's text, or '' when it does not exist yet (other errors are thrown). */
export function readHostFile(file: string): string {
  try {
    return readFileSync(file, 'utf8')
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return ''
    throw e
  }
}

/** Replaces the file in one step, keeping its mode (a new one is private: 0600). */
export function writeAtomic(file: string, text: string): void {
  const mode = statSync(file, { throwIfNoEntry: false })?.mode ?? 0o600
  mkdirSync(dirname(file), { recursive: true })
  const tmp = `${file}.ag-mcp-${process.pid}.tmp`
  writeFileSync(tmp, text, { mode: mode & 0o777 })
  chmodSync(tmp, mode & 0o777)
  renameSync(tmp, file)
}

/** The hosts whose project files `ag-mcp agit init --write` creates (as AGIT's own init does). */
const INIT_HOSTS: readonly HostName[] = ['claude-code', 'cursor', 'vscode']

/**
 * For `ag-mcp agit init`: each host's project file in the repository at `top`, created where
 * none exists, holding the entry `ag-mcp install <host> --local` writes (one name, one command).
 * An existing file is left alone, with the command that adds the entry to it.
 */
export async function projectConfigs(
  top: string,
  write: boolean,
  io: { env: NodeJS.ProcessEnv },
): Promise<Array<{ path: string; action: string }>> {
  const self = selfCommand()
  const name = localEntryName(top)
  const entry = { command: self.command, args: [...self.args, '--local', top] }
  const out: Array<{ path: string; action: string }> = []
  for (const host of INIT_HOSTS) {
    const user = hostFormat(host, { home: homedir(), platform: process.platform, env: io.env, exists: existsSync })
    const rel = user.project as string
    const fmt = { ...user, file: join(top, rel) }
    if (existsSync(fmt.file)) {
      const has = isOurs(findEntry(fmt, readHostFile(fmt.file), name))
      out.push({
        path: rel,
        action: has
          ? `exists, has "${name}"`
          : `exists, left alone (ag-mcp install ${host} --local --write adds "${name}")`,
      })
      continue
    }
    if (!write) {
      out.push({ path: rel, action: `would create (server "${name}")` })
      continue
    }
    const edit = addEntry(fmt, '', name, entry, false)
    if (!edit.ok) throw new Error(`${fmt.file}: ${edit.reason}`)
    writeAtomic(fmt.file, edit.text)
    await addExcludes(top, [`/${rel}`], `${fmt.label} entry written by ag-mcp agit init`)
    out.push({ path: rel, action: `created (server "${name}"; listed in .git/info/exclude)` })
  }
  return out
}
