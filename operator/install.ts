// `ag-mcp install <host>` and `ag-mcp uninstall <host>`: one server entry in an MCP host's
// configuration file. install is a dry run unless --write; it never replaces an entry of the same
// name without --force, and never writes a token value (only a token file's path or a variable's
// name). Everything the entry would pass to ag-mcp is checked first with ag-mcp's own start-up
// steps (core/src/startup.ts), so a host is never wired to a command that would refuse to start.
// With --local, the entry goes into the repository's project-scope file where the host has one
// (a file in the work tree, written by the person who runs this, never by the agent), named after
// the repository; --scope user puts it in the host's user file instead. uninstall removes our
// entry and nothing else. The entry and the file I/O are host-entry.ts's.
import { execFileSync } from 'node:child_process'
import { existsSync, rmSync } from 'node:fs'
import { homedir } from 'node:os'
import { join, resolve } from 'node:path'
import { checkUpstream } from '../core/src/config/config.ts'
import type { GroupManifest } from '../core/src/manifest/types.ts'
import type { BundledPlugins } from '../core/src/pipeline/plugins.ts'
import { createScrubber } from '../core/src/safety/scrub.ts'
import { startupVerdict } from '../core/src/startup.ts'
import { closest } from '../lib/closest.ts'
import { addExcludes, removeExcludes } from '../lib/git-exclude.ts'
import { addEntry, findEntry, removeEntry } from './host-config.ts'
import { isOurs, localEntryName, readHostFile, selfCommand, writeAtomic } from './host-entry.ts'
import type { ServerEntry } from './host-config.ts'
import { HOSTS, hostFormat } from './hosts.ts'
import type { HostFormat, HostName } from './hosts.ts'
import { localMode } from './local-args.ts'

export interface Io {
  out(s: string): void
  err(s: string): void
  env: NodeJS.ProcessEnv
  cwd: string
}

/** What install needs to check an entry as ag-mcp would: the bundled manifests and plugins. */
export interface Bundle {
  manifests: readonly GroupManifest[]
  plugins: BundledPlugins
}

class Refusal extends Error {
  constructor(
    message: string,
    readonly code: 1 | 2,
  ) {
    super(message)
  }
}

const usage = (m: string): Refusal => new Refusal(m, 2)

export const INSTALL_USAGE = `usage: ag-mcp install <${HOSTS.join('|')}> [--write] [--force] [--name NAME] [--file PATH]
         (--local [REPO] [--scope project|user] | --upstream URL (--token-file PATH | --token-env NAME)) [-- more ag-mcp flags]
       ag-mcp uninstall <host> [--local [REPO]] [--scope project|user] [--name NAME] [--file PATH] [--force]`

type Scope = 'project' | 'user'

interface Options {
  host: HostName
  write: boolean
  force: boolean
  name: string | undefined
  file: string | undefined
  scope: Scope | undefined
  upstream: string | undefined
  tokenFile: string | undefined
  tokenEnv: string | undefined
  /** --local [REPO]: the repository local mode serves (as given), or undefined. */
  local: string | undefined
  rest: string[]
}

const VALUE_FLAGS = ['name', 'file', 'scope', 'upstream', 'token-file', 'token-env'] as const
const SWITCHES = ['write', 'force'] as const

function parse(argv: readonly string[], verb: string): Options {
  const [host, ...tail] = argv
  if (host === undefined || host === '--help' || host === '-h') throw usage(INSTALL_USAGE)
  if (!(HOSTS as readonly string[]).includes(host)) {
    const near = closest(host, HOSTS)
    throw usage(`${verb}: unknown host "${host}"${near ? ` (did you mean ${near}?)` : ''}; hosts: ${HOSTS.join(', ')}`)
  }
  const o: Options = {
    host: host as HostName,
    write: false,
    force: false,
    name: undefined,
    file: undefined,
    scope: undefined,
    upstream: undefined,
    tokenFile: undefined,
    tokenEnv: undefined,
    local: undefined,
    rest: [],
  }
  for (let i = 0; i < tail.length; i++) {
    const arg = tail[i] as string
    if (arg === '--') {
      o.rest = tail.slice(i + 1)
      break
    }
    const eq = arg.indexOf('=')
    const flag = arg.startsWith('--') ? arg.slice(2, eq === -1 ? undefined : eq) : ''
    if (flag === 'local' && eq === -1) {
      const next = tail[i + 1]
      o.local = next !== undefined && !next.startsWith('--') ? (i++, next) : '.'
      continue
    }
    if ((SWITCHES as readonly string[]).includes(flag) && eq === -1) {
      o[flag as (typeof SWITCHES)[number]] = true
      continue
    }
    if (flag === 'token')
      throw usage(
        `${verb}: there is no --token: the entry names a token file (--token-file) or a variable (--token-env), never the token`,
      )
    if (!(VALUE_FLAGS as readonly string[]).includes(flag)) {
      const near = closest(flag || arg, [...VALUE_FLAGS, ...SWITCHES, 'local'])
      throw usage(
        `${verb}: unknown argument ${arg}${near ? ` (did you mean --${near}?)` : ''}; ag-mcp flags for the entry go after --`,
      )
    }
    const value = eq === -1 ? tail[++i] : arg.slice(eq + 1)
    if (value === undefined || value === '') throw usage(`${verb}: --${flag} needs a value`)
    if (flag === 'name') o.name = value
    else if (flag === 'file') o.file = value
    else if (flag === 'scope') {
      if (value !== 'project' && value !== 'user') throw usage(`${verb}: --scope is project or user, not "${value}"`)
      o.scope = value
    } else if (flag === 'upstream') o.upstream = value
    else if (flag === 'token-file') o.tokenFile = value
    else o.tokenEnv = value
  }
  if (o.name !== undefined && !/^[A-Za-z0-9_-]{1,64}$/.test(o.name))
    throw usage(`${verb}: --name "${o.name}" must be 1-64 letters, digits, _ or -`)
  if (o.scope !== undefined && o.local === undefined)
    throw usage(`${verb}: --scope is for --local entries (a shared server's entry goes in the host's user file)`)
  return o
}

/** The git top level of `dir`, or a refusal that says how to get one. */
function repositoryOf(dir: string, verb: string): string {
  try {
    return execFileSync('git', ['rev-parse', '--show-toplevel'], {
      cwd: dir,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim()
  } catch {
    throw usage(`${verb}: ${dir} is not inside a git repository: run git init there, or name one (--local PATH)`)
  }
}

/** Where an entry goes, under which name, and what it runs. */
interface Plan {
  fmt: HostFormat
  name: string
  entry: ServerEntry
  /** The repository, for a project-scope (work tree) file. */
  project: { top: string; rel: string } | undefined
  /** What ag-mcp would warn about when the host starts it. */
  warnings: string[]
}

async function plan(o: Options, io: Io, bundle: Bundle): Promise<Plan> {
  const user = hostFormat(o.host, { home: homedir(), platform: process.platform, env: io.env, exists: existsSync })
  const self = selfCommand()
  checkedRest(o.rest)
  if (o.local !== undefined) {
    if (o.upstream !== undefined || o.tokenFile !== undefined || o.tokenEnv !== undefined)
      throw usage('install: --local starts its own ag-server and token; drop --upstream, --token-file and --token-env')
    const top = repositoryOf(resolve(io.cwd, o.local), 'install')
    const local = await localMode(['--local', top, ...o.rest], io, bundle.manifests, bundle.plugins)
    if (local?.error !== undefined) throw usage(`install: ag-mcp would refuse the flags after --: ${local.error}`)
    const scope = o.scope ?? (user.project !== undefined ? 'project' : 'user')
    if (scope === 'project' && user.project === undefined)
      throw usage(`install: ${user.label} has no project-scope file; use --scope user (its file: ${user.file})`)
    const project = scope === 'project' && o.file === undefined ? { top, rel: user.project as string } : undefined
    const fmt = {
      ...user,
      file: o.file !== undefined ? resolve(io.cwd, o.file) : project ? join(top, project.rel) : user.file,
    }
    return {
      fmt,
      name: o.name ?? localEntryName(top),
      entry: { command: self.command, args: [...self.args, '--local', top, ...o.rest] },
      project,
      warnings: [],
    }
  }
  if (o.upstream === undefined)
    throw usage(
      `install: name the ag-server with --upstream URL (and --token-file PATH or --token-env NAME), or use --local [REPO]\n${INSTALL_USAGE}`,
    )
  let upstream: string
  try {
    upstream = checkUpstream(o.upstream, o.rest.includes('--allow-insecure-http'))
  } catch (e) {
    throw usage(`install: ${(e as Error).message}`)
  }
  if ((o.tokenFile === undefined) === (o.tokenEnv === undefined))
    throw usage('install: name exactly one source of the token: --token-file PATH (mode 0600) or --token-env NAME')
  const token =
    o.tokenFile !== undefined ? ['--token-file', resolve(io.cwd, o.tokenFile)] : ['--token-env', o.tokenEnv as string]
  const args = ['--upstream', upstream, ...token, ...o.rest]
  // The variable is the host's to set, not this shell's: checked as set, and said when it is not.
  const missingVar = o.tokenEnv !== undefined && !io.env[o.tokenEnv]?.trim()
  const env = missingVar ? { ...io.env, [o.tokenEnv as string]: 'set-by-the-host' } : io.env
  const verdict = await startupVerdict({
    argv: args,
    env,
    manifests: bundle.manifests,
    plugins: bundle.plugins,
    cwd: io.cwd,
  })
  if (verdict.error !== undefined)
    throw usage(`install: ag-mcp would refuse to start with this entry: ${verdict.error}`)
  const warnings = [...verdict.warnings]
  if (missingVar) warnings.push(`${o.tokenEnv} is not set here: the host must set it in ag-mcp's environment`)
  return {
    fmt: o.file === undefined ? user : { ...user, file: resolve(io.cwd, o.file) },
    name: o.name ?? 'agentgit',
    entry: { command: self.command, args: [...self.args, ...args] },
    project: undefined,
    warnings,
  }
}

/** The flags after --, refused when one would put a credential in the host's file in clear. */
function checkedRest(rest: string[]): string[] {
  const looksSecret = createScrubber(() => [])
  for (const a of rest) {
    if (a === '--token' || a.startsWith('--token='))
      throw usage('install: there is no --token flag; use --token-file PATH or --token-env NAME')
    if (looksSecret.scrub(a) !== a)
      throw usage('install: an argument after -- looks like a credential; the entry never holds one')
  }
  return rest
}

/** Whether git tracks `rel` in `top` (a tracked file edited shows in git status, and blocks integrate). */
function tracked(top: string, rel: string): boolean {
  try {
    execFileSync('git', ['ls-files', '--error-unmatch', '--', rel], { cwd: top, stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/** The host file's text ('' when it does not exist yet), or a refusal when it cannot be read. */
function readCurrent(file: string): string {
  try {
    return readHostFile(file)
  } catch (e) {
    throw new Refusal(`cannot read ${file} (${(e as NodeJS.ErrnoException).code ?? String(e)})`, 1)
  }
}

function show(fmt: HostFormat, name: string, entry: ServerEntry): string {
  if (fmt.format === 'toml') {
    const args = entry.args.map((a) => JSON.stringify(a)).join(', ')
    return `  [${fmt.key}.${name}]\n  command = ${JSON.stringify(entry.command)}\n  args = [${args}]`
  }
  return JSON.stringify({ [fmt.key]: { [name]: { ...fmt.extra, ...entry } } }, null, 2).replace(/^/gm, '  ')
}

/** What the scope means for the person, in one sentence: where the entry is seen, and the other choice. */
function scopeNote(p: Plan, host: string, file: string | undefined): string {
  if (file !== undefined) return ''
  if (p.project)
    return `Project scope: only this repository's ${p.fmt.label} sessions see it. The file is in your work tree, written by you (the agent never writes there); for ${p.fmt.label}'s user file instead: ag-mcp install ${host} --local ${p.project.top} --scope user.`
  if (p.entry.args.includes('--local'))
    return `User scope: every ${p.fmt.label} project sees this entry, and it serves ${p.entry.args[p.entry.args.indexOf('--local') + 1]} wherever it is started.`
  return ''
}

export async function install(argv: readonly string[], io: Io, bundle: Bundle): Promise<number> {
  return guarded(io, async () => {
    const o = parse(argv, 'install')
    const p = await plan(o, io, bundle)
    const { fmt, name, entry } = p
    const existed = existsSync(fmt.file)
    if (p.project && existed && tracked(p.project.top, p.project.rel) && !o.force)
      throw new Refusal(
        `install: ${fmt.file} is tracked by git: adding the entry would change a tracked file (it would show in git status, and ag-mcp proposals integrate refuses uncommitted changes); use --scope user, or pass --force to edit it anyway`,
        1,
      )
    const edit = addEntry(fmt, readCurrent(fmt.file), name, entry, o.force)
    if (!edit.ok) throw new Refusal(`install: ${fmt.file}: ${edit.reason}`, 1)
    const notes = [scopeNote(p, o.host, o.file), ...p.warnings.map((w) => `Note: ag-mcp will warn: ${w}`)].filter(
      Boolean,
    )
    const what = `${edit.replaced ? 'replace' : 'add'} the server "${name}" in ${fmt.file}`
    if (!o.write) {
      io.out(
        [
          `${fmt.label}: would ${what}:`,
          show(fmt, name, entry),
          ...notes,
          'Nothing was written; run again with --write to apply.',
        ].join('\n'),
      )
      return 0
    }
    writeAtomic(fmt.file, edit.text)
    // A project file this command created holds this machine's paths: kept out of git status.
    const excluded =
      p.project && !existed
        ? await addExcludes(p.project.top, [`/${p.project.rel}`], `${fmt.label} entry written by ag-mcp install`)
        : []
    io.out(
      [
        `${fmt.label}: ${edit.replaced ? 'replaced' : 'added'} the server "${name}" in ${fmt.file}; restart ${fmt.label} (or reload its MCP servers) to use it.`,
        ...notes,
        ...(excluded.length > 0
          ? [
              `Listed ${excluded.join(', ')} in .git/info/exclude: it names this machine's paths, so git does not offer to commit it.`,
            ]
          : []),
      ].join('\n'),
    )
    return 0
  })
}

export async function uninstall(argv: readonly string[], io: Io): Promise<number> {
  return guarded(io, async () => {
    const o = parse(argv, 'uninstall')
    const user = hostFormat(o.host, { home: homedir(), platform: process.platform, env: io.env, exists: existsSync })
    const top = o.local !== undefined ? repositoryOf(resolve(io.cwd, o.local), 'uninstall') : undefined
    const scope = o.scope ?? (top !== undefined && user.project !== undefined ? 'project' : 'user')
    const project =
      top !== undefined && scope === 'project' && o.file === undefined && user.project
        ? { top, rel: user.project }
        : undefined
    const fmt = {
      ...user,
      file: o.file !== undefined ? resolve(io.cwd, o.file) : project ? join(project.top, project.rel) : user.file,
    }
    const name = o.name ?? (top !== undefined ? localEntryName(top) : 'agentgit')
    const text = readCurrent(fmt.file)
    const current = findEntry(fmt, text, name)
    if (current !== undefined && !isOurs(current) && !o.force)
      throw new Refusal(
        `uninstall: ${fmt.file}: the server "${name}" does not start ag-mcp, so it is not ours; pass --force to remove it anyway`,
        1,
      )
    const edit = removeEntry(fmt, text, name)
    if (!edit.ok) throw new Refusal(`uninstall: ${fmt.file}: ${edit.reason}`, 1)
    // A project file left with nothing but our (now removed) entry goes, with its exclude line.
    if (project && isEmptyConfig(fmt, edit.text) && !tracked(project.top, project.rel)) {
      rmSync(fmt.file)
      await removeExcludes(project.top, [`/${project.rel}`])
      io.out(`${fmt.label}: removed the server "${name}" and ${fmt.file}, which held nothing else.`)
      return 0
    }
    writeAtomic(fmt.file, edit.text)
    io.out(`${fmt.label}: removed the server "${name}" from ${fmt.file}.`)
    return 0
  })
}

/** A host file that holds nothing (an empty object, or only an empty servers table). */
function isEmptyConfig(fmt: HostFormat, text: string): boolean {
  const t = text.replace(/\s+/g, '')
  return t === '' || t === '{}' || t === `{"${fmt.key}":{}}`
}

async function guarded(io: Io, run: () => Promise<number>): Promise<number> {
  try {
    return await run()
  } catch (e) {
    if (!(e instanceof Refusal)) throw e
    io.err(`ag-mcp ${e.message}`)
    return e.code
  }
}
