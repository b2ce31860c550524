// `ag-mcp install <host>` and `ag-mcp uninstall <host>`: one server entry in an MCP host's
// configuration file. install is a dry run unless --write; it never replaces an entry of the same
// name without --force, and never writes a token value (only a token file's path or a variable's
// name). uninstall removes our entry and nothing else.
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
import { basename, dirname, resolve } from 'node:path'
import { checkUpstream } from '../core/src/config/config.ts'
import { closest } from '../lib/closest.ts'
import { createScrubber } from '../core/src/safety/scrub.ts'
import { addEntry, findEntry, removeEntry } from './host-config.ts'
import type { ServerEntry } from './host-config.ts'
import { HOSTS, hostFormat } from './hosts.ts'
import type { HostFormat, HostName } from './hosts.ts'

export interface Io {
  out(s: string): void
  err(s: string): void
  env: NodeJS.ProcessEnv
  cwd: string
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

const INSTALL_USAGE = `usage: ag-mcp install <${HOSTS.join('|')}> [--write] [--force] [--name NAME] [--file PATH]
         (--local [REPO] | --upstream URL (--token-file PATH | --token-env NAME)) [-- more ag-mcp flags]
       ag-mcp uninstall <host> [--name NAME] [--file PATH] [--force]`

interface Options {
  host: HostName
  write: boolean
  force: boolean
  name: string
  file: string | undefined
  upstream: string | undefined
  tokenFile: string | undefined
  tokenEnv: string | undefined
  /** --local [REPO]: the repository local mode serves (absolute), or undefined. */
  local: string | undefined
  rest: string[]
}

const VALUE_FLAGS = ['name', 'file', 'upstream', 'token-file', 'token-env'] as const
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
    name: 'agentgit',
    file: undefined,
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
    else if (flag === 'upstream') o.upstream = value
    else if (flag === 'token-file') o.tokenFile = value
    else o.tokenEnv = value
  }
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(o.name))
    throw usage(`${verb}: --name "${o.name}" must be 1-64 letters, digits, _ or -`)
  return o
}

/** How this very ag-mcp is started again: node and the bundle, or the standalone executable alone. */
function selfCommand(): ServerEntry {
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

function entryFor(o: Options, io: Io): ServerEntry {
  if (o.local !== undefined) {
    if (o.upstream !== undefined || o.tokenFile !== undefined || o.tokenEnv !== undefined)
      throw usage('install: --local starts its own ag-server and token; drop --upstream, --token-file and --token-env')
    const self = selfCommand()
    return { command: self.command, args: [...self.args, '--local', resolve(io.cwd, o.local), ...checkedRest(o.rest)] }
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
  const rest = checkedRest(o.rest)
  const self = selfCommand()
  const token =
    o.tokenFile !== undefined ? ['--token-file', resolve(io.cwd, o.tokenFile)] : ['--token-env', o.tokenEnv as string]
  return { command: self.command, args: [...self.args, '--upstream', upstream, ...token, ...rest] }
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

function readCurrent(file: string): string {
  try {
    return readFileSync(file, 'utf8')
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code
    if (code === 'ENOENT') return ''
    throw new Refusal(`cannot read ${file} (${code ?? String(e)})`, 1)
  }
}

/** Replaces the file in one step, keeping its mode (a new one is private: 0600). */
function writeAtomic(file: string, text: string): void {
  const mode = statSync(file, { throwIfNoEntry: false })?.mode ?? 0o600
  mkdirSync(dirname(file), { recursive: true })
  const tmp = `${file}.ag-mcp-${process.pid}.tmp`
  writeFileSync(tmp, text, { mode: mode & 0o777 })
  chmodSync(tmp, mode & 0o777)
  renameSync(tmp, file)
}

function target(o: Options, io: Io): HostFormat {
  const fmt = hostFormat(o.host, { home: homedir(), platform: process.platform, env: io.env, exists: existsSync })
  return o.file === undefined ? fmt : { ...fmt, file: resolve(io.cwd, o.file) }
}

function show(fmt: HostFormat, name: string, entry: ServerEntry): string {
  if (fmt.format === 'toml') {
    const args = entry.args.map((a) => JSON.stringify(a)).join(', ')
    return `  [${fmt.key}.${name}]\n  command = ${JSON.stringify(entry.command)}\n  args = [${args}]`
  }
  return JSON.stringify({ [fmt.key]: { [name]: { ...fmt.extra, ...entry } } }, null, 2).replace(/^/gm, '  ')
}

export function install(argv: readonly string[], io: Io): number {
  return guarded(io, () => {
    const o = parse(argv, 'install')
    const entry = entryFor(o, io)
    const fmt = target(o, io)
    const edit = addEntry(fmt, readCurrent(fmt.file), o.name, entry, o.force)
    if (!edit.ok) throw new Refusal(`install: ${fmt.file}: ${edit.reason}`, 1)
    const what = `${edit.replaced ? 'replace' : 'add'} the server "${o.name}" in ${fmt.file}`
    if (!o.write) {
      io.out(
        `${fmt.label}: would ${what}:\n${show(fmt, o.name, entry)}\nNothing was written; run again with --write to apply.`,
      )
      return 0
    }
    writeAtomic(fmt.file, edit.text)
    io.out(
      `${fmt.label}: ${edit.replaced ? 'replaced' : 'added'} the server "${o.name}" in ${fmt.file}; restart ${fmt.label} (or reload its MCP servers) to use it.`,
    )
    return 0
  })
}

export function uninstall(argv: readonly string[], io: Io): number {
  return guarded(io, () => {
    const o = parse(argv, 'uninstall')
    const fmt = target(o, io)
    const text = readCurrent(fmt.file)
    const current = findEntry(fmt, text, o.name)
    if (current !== undefined && !isOurs(current) && !o.force)
      throw new Refusal(
        `uninstall: ${fmt.file}: the server "${o.name}" does not start ag-mcp, so it is not ours; pass --force to remove it anyway`,
        1,
      )
    const edit = removeEntry(fmt, text, o.name)
    if (!edit.ok) throw new Refusal(`uninstall: ${fmt.file}: ${edit.reason}`, 1)
    writeAtomic(fmt.file, edit.text)
    io.out(`${fmt.label}: removed the server "${o.name}" from ${fmt.file}.`)
    return 0
  })
}

function guarded(io: Io, run: () => number): number {
  try {
    return run()
  } catch (e) {
    if (!(e instanceof Refusal)) throw e
    io.err(`ag-mcp ${e.message}`)
    return e.code
  }
}
