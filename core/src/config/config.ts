// One frozen Config from flags, environment and config file (in that order of precedence),
// validated as a whole: a bad combination stops start-up with a message naming the fix. The
// flags are the core's and every bundled plugin's options (one table, see flags.ts).
import { envName, FLAGS, flagTable, pluginFlag } from './flags.ts'
import type { FlagName, FlagSpec, FlagTable, PluginOptionsEntry } from './flags.ts'
import { JsoncError, parseJsonc } from './jsonc.ts'
import { parseArgv, setValue, UsageError } from './parse.ts'
import type { ParsedArgs, RawFlags, RawValue } from './parse.ts'

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent'

/** A plugin option's resolved value (undefined: not given and no default). */
export type OptionValue = string | number | boolean | readonly string[] | undefined

/** A precompiled JSON Schema check of one option's value (ajv standalone, see build.mjs). */
export interface OptionValidate {
  (value: unknown): boolean
  errors?: { message?: string }[] | null
}

/** What the core knows of a bundled plugin before loading it: its options, and their checks. */
export interface PluginOptionsWithChecks extends PluginOptionsEntry {
  validators: Readonly<Record<string, OptionValidate>>
}

export interface Config {
  /** Local mode's repository (`.`: the one the working directory is in); ag-mcp itself never reads it. */
  local: string | undefined
  /** Local mode's identity for the agent's commits (--agent-name, --agent-email); checked there. */
  agent: { name: string | undefined; email: string | undefined }
  /** undefined: the groups marked default. */
  allow: readonly string[] | undefined
  enable: readonly string[]
  repo: readonly string[]
  writePath: readonly string[]
  requireLease: boolean
  allowInsecureHttp: boolean
  maxOutputBytes: number
  maxMessageBytes: number
  rate: { perSec: number; burst: number }
  pageSize: number
  shutdownTimeoutMs: number
  logLevel: LogLevel
  logFile: string | undefined
  /** --server-name: the advertised serverInfo name, when the operator sets one. */
  serverName: string | undefined
  /** Each plugin's options by option name (without its prefix), defaults applied, checked. */
  plugins: Readonly<Record<string, Readonly<Record<string, OptionValue>>>>
}

export interface Startup {
  config: Readonly<Config>
  info: ParsedArgs['info']
  /** The flags some source set (argv, environment, config file), whatever their value. */
  given: ReadonlySet<string>
}

/** Keys a config file may never hold: a token value belongs in a 0600 file or the environment. */
const SECRET_KEYS = /^(token|token[-_]?value|password|secret|api[-_]?key|bearer|authorization)$/i

export function loadConfig(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  looksSecret: (v: string) => boolean,
  plugins: Readonly<Record<string, PluginOptionsWithChecks>> = {},
): Startup {
  const table = flagTable(plugins)
  const parsed = parseArgv(argv, table)
  const merged: RawFlags = {}
  const configPath = parsed.flags['config']
  if (typeof configPath === 'string') Object.assign(merged, readConfigFile(configPath, looksSecret, table))
  for (const [name, spec] of Object.entries(table)) {
    const v = env[envName(name)]
    if (v !== undefined && !spec.cliOnly) {
      delete merged[name]
      setValue(merged, name, spec, v, envName(name))
    }
  }
  Object.assign(merged, parsed.flags)
  const config: Config = { ...build(merged, parsed.enable), plugins: pluginValues(merged, plugins) }
  return { config: Object.freeze(config), info: parsed.info, given: new Set(Object.keys(merged)) }
}

function readConfigFile(path: string, looksSecret: (v: string) => boolean, table: FlagTable): RawFlags {
  let text: string
  try {
    // Fetched, not imported: a static import of node:fs costs start-up time even when unused.
    text = process.getBuiltinModule('node:fs').readFileSync(path, 'utf8')
  } catch (e) {
    const why = (e as NodeJS.ErrnoException).code ?? (e as Error).message
    throw new UsageError(`--config ${path}: cannot read it (${why})`)
  }
  let data: unknown
  try {
    data = parseJsonc(text)
  } catch (e) {
    if (!(e instanceof JsoncError)) throw e
    throw new UsageError(
      `--config ${path}:${e.line}:${e.column}: not valid JSON (comments and trailing commas are allowed): ${e.reason}`,
    )
  }
  if (typeof data !== 'object' || data === null || Array.isArray(data))
    throw new UsageError(`--config ${path}: must hold one JSON object`)
  const out: RawFlags = {}
  for (const [key, value] of Object.entries(data)) {
    if (SECRET_KEYS.test(key)) {
      throw new UsageError(
        `--config ${path}: key "${key}" is refused: no config key takes a token value; use "token-file" (a 0600 file) or "token-env" (a variable name)`,
      )
    }
    if (typeof value === 'string' && looksSecret(value)) {
      throw new UsageError(
        `--config ${path}: the value of "${key}" looks like a credential; tokens go in a 0600 file named by "token-file"`,
      )
    }
    if (key === '$schema') continue
    const spec = table[key]
    if (spec === undefined || spec.cliOnly)
      throw new UsageError(
        `--config ${path}: unknown key "${key}"; keys are flag names without dashes, e.g. "max-output-bytes"`,
      )
    if (spec.bare !== undefined && typeof value === 'boolean') {
      if (value) out[key] = spec.bare
      continue
    }
    out[key] = coerce(spec, value, `--config ${path}: "${key}"`)
  }
  return out
}

function coerce(spec: FlagSpec, value: unknown, where: string): RawValue {
  switch (spec.type) {
    case 'list':
      if (Array.isArray(value) && value.every((x) => typeof x === 'string')) return value
      if (typeof value === 'string')
        return value
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      break
    case 'number':
      if (typeof value === 'number' && Number.isFinite(value) && value >= 0) return value
      break
    case 'boolean':
      if (typeof value === 'boolean') return value
      break
    case 'string':
      if (typeof value === 'string') return value
  }
  throw new UsageError(`${where} must be a ${spec.type}`)
}

/** A part of a git identity: git would drop <, > and line breaks, so they are refused. */
function agentPart(flag: string, v: string | undefined): string | undefined {
  if (v === undefined) return undefined
  if (v.trim() === '') throw new UsageError(`--${flag} needs a value`)
  if (/[<>\n]/.test(v)) throw new UsageError(`--${flag} cannot contain <, > or a line break (git would drop them)`)
  return v
}

function build(raw: RawFlags, enable: readonly string[]): Omit<Config, 'plugins'> {
  const get = <T extends RawValue>(name: FlagName): T | undefined =>
    (raw[name] ?? (FLAGS[name] as FlagSpec).default) as T | undefined
  const logLevel = get<string>('log-level') ?? 'info'
  if (!['debug', 'info', 'warn', 'error', 'silent'].includes(logLevel))
    throw new UsageError(`--log-level must be debug, info, warn, error or silent, got "${logLevel}"`)
  const allowInsecureHttp = get<boolean>('allow-insecure-http') ?? false
  return {
    local: get<string>('local'),
    agent: {
      name: agentPart('agent-name', get<string>('agent-name')),
      email: agentPart('agent-email', get<string>('agent-email')),
    },
    allow: checkAllow(get<string[]>('allow')),
    enable: [...enable],
    repo: checkGlobs('repo', get<string[]>('repo') ?? []),
    writePath: checkGlobs('write-path', get<string[]>('write-path') ?? []),
    requireLease: get<boolean>('require-lease') ?? false,
    allowInsecureHttp,
    maxOutputBytes: atLeast('max-output-bytes', get<number>('max-output-bytes'), 1024),
    maxMessageBytes: atLeast('max-message-bytes', get<number>('max-message-bytes'), 1024),
    rate: parseRate(get<string>('rate-limit') ?? '20/s'),
    pageSize: atLeast('page-size', get<number>('page-size'), 1),
    shutdownTimeoutMs: atLeast('shutdown-timeout-ms', get<number>('shutdown-timeout-ms'), 0),
    logLevel: logLevel as LogLevel,
    logFile: get<string>('log-file'),
    serverName: checkServerName(get<string>('server-name')),
  }
}

/** A name a client compares with a peer's: plain, short, and nothing a terminal would act on. */
function checkServerName(name: string | undefined): string | undefined {
  if (name === undefined || /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(name)) return name
  throw new UsageError(
    `--server-name must be 1-64 letters, digits, dots, dashes or underscores (starting with a letter or digit), got ${JSON.stringify(name)}`,
  )
}

/**
 * Each plugin's option values: defaults applied, the plugin's JSON Schema checks run on what the
 * operator gave (defaults were checked by the build), and the core's rules for each option's role
 * (see OptionRole in plugin-api.ts). Every error names the flag.
 */
function pluginValues(
  raw: RawFlags,
  plugins: Readonly<Record<string, PluginOptionsWithChecks>>,
): Record<string, Record<string, OptionValue>> {
  const allowInsecureHttp = (raw['allow-insecure-http'] ?? false) === true
  const out: Record<string, Record<string, OptionValue>> = {}
  for (const [name, entry] of Object.entries(plugins)) {
    const values: Record<string, OptionValue> = {}
    const credentials: string[] = []
    for (const [option, spec] of Object.entries(entry.options)) {
      const flag = pluginFlag(entry, option)
      const given = raw[flag]
      let value: OptionValue =
        given ?? spec.default ?? (spec.type === 'boolean' ? false : spec.type === 'list' ? [] : undefined)
      if (given !== undefined) {
        const validate = entry.validators[option]
        if (validate && !validate(given)) {
          const why = (validate.errors ?? []).map((e) => e.message ?? 'is invalid').join('; ')
          throw new UsageError(`--${flag} ${why}, got ${JSON.stringify(given)}`)
        }
        if (spec.role === 'upstream-url') value = checkUpstream(String(given), allowInsecureHttp, flag)
        if (spec.role === 'root') value = checkDirectory(String(given), flag)
        if (spec.role === 'credential-file' || spec.role === 'credential-env') credentials.push(`--${flag}`)
      }
      values[option] = value
    }
    if (credentials.length > 1)
      throw new UsageError(`${credentials.join(' and ')} are exclusive: name one source of the token`)
    out[name] = values
  }
  return out
}

/** A root directory given by the operator: it must exist (resolved against the working directory). */
function checkDirectory(dir: string, flag: string): string {
  const { resolve } = process.getBuiltinModule('node:path')
  const abs = resolve(dir)
  let ok = false
  try {
    ok = process.getBuiltinModule('node:fs').statSync(abs).isDirectory()
  } catch {
    ok = false
  }
  if (!ok) throw new UsageError(`--${flag} ${dir}: not a directory`)
  return abs
}

function checkAllow(allow: string[] | undefined): string[] | undefined {
  if (allow !== undefined && allow.length === 0)
    throw new UsageError(
      '--allow is empty: name the groups to enable (e.g. --allow read,workspace,propose, or --allow +continuity to add one to the defaults), or leave --allow out for the default groups',
    )
  return allow
}

/**
 * Globs are checked now, not at the first call they would fail: an absolute or escaping
 * --write-path can never match a repository path, so every write would be refused later.
 */
function checkGlobs(flag: 'repo' | 'write-path', globs: readonly string[]): readonly string[] {
  const example = flag === 'repo' ? "--repo 'team-*'" : "--write-path 'docs/**'"
  for (const g of globs) {
    if (g.startsWith('/') || g.startsWith('\\') || /^[A-Za-z]:/.test(g))
      throw new UsageError(
        `--${flag} '${g}' is absolute; ${flag === 'repo' ? 'it names repositories' : 'paths are relative to the repository root'} (e.g. ${example})`,
      )
    if (g.split(/[\\/]/).includes('..'))
      throw new UsageError(`--${flag} '${g}' leaves the repository with '..'; name paths inside it (e.g. ${example})`)
    const problem = globProblem(g)
    if (problem) throw new UsageError(`--${flag} '${g}' is not a valid glob: ${problem} (e.g. ${example})`)
  }
  return globs
}

/** An unclosed [class] or {alternation}: minimatch would read it literally, matching nothing meant. */
function globProblem(g: string): string | undefined {
  let braces = 0
  for (let i = 0; i < g.length; i++) {
    const c = g[i]
    if (c === '\\') i++
    else if (c === '[') {
      const close = g.indexOf(']', i + 2)
      if (close === -1) return `the [ at ${i + 1} is never closed`
      i = close
    } else if (c === '{') braces++
    else if (c === '}' && --braces < 0) return `the } at ${i + 1} closes nothing`
  }
  return braces > 0 ? 'a { is never closed' : undefined
}

function atLeast(name: string, v: number | undefined, min: number): number {
  if (v === undefined || !Number.isInteger(v) || v < min)
    throw new UsageError(`--${name} must be an integer of at least ${min}`)
  return v
}

function parseRate(s: string): { perSec: number; burst: number } {
  const m = /^(\d+(?:\.\d+)?)\s*\/\s*s$/.exec(s.trim())
  const n = m ? Number(m[1]) : NaN
  if (!(n > 0)) throw new UsageError(`--rate-limit must look like 20/s (calls per second), got "${s}"`)
  return { perSec: n, burst: Math.max(1, Math.ceil(n * 2)) }
}

const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i

/** An upstream base URL (an `upstream-url` option), refused when the token would cross a network in clear. */
export function checkUpstream(raw: string, allowInsecureHttp: boolean, flag = 'upstream'): string {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new UsageError(
      `--${flag} "${raw}" is not a URL (expected e.g. https://agentgit.example.com or http://127.0.0.1:7420)`,
    )
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new UsageError(`--${flag} must be http:// or https://, got ${url.protocol}`)
  if (url.username !== '' || url.password !== '')
    throw new UsageError(`--${flag} must not carry credentials; use --token-file or --token-env`)
  if (url.search !== '' || url.hash !== '') throw new UsageError(`--${flag} must not have a query or fragment`)
  if (url.protocol === 'http:' && !LOOPBACK.test(url.hostname) && !allowInsecureHttp) {
    throw new UsageError(
      `--${flag} ${url.origin} is refused: plain http:// would send the token in clear to a non-loopback host; use https://, or pass --allow-insecure-http if this network is trusted`,
    )
  }
  // ag-server prints its URL with the API prefix; the base is what comes before it.
  return url.href.replace(/\/+$/, '').replace(/\/agwp\/v1$/, '')
}
