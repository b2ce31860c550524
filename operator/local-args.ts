// How local mode is asked for, and the command line a local session serves with. Local mode is
// one more flag of the one table (`--local [REPO]`, AG_MCP_LOCAL, the config file's "local": true
// or a path), so ag-mcp, `tools`, `doctor` and `install` all read it the same way; a session's
// flags are checked here, before its repository is touched, with ag-mcp's own messages.
import { realpathSync } from 'node:fs'
import { isAbsolute, relative, resolve, sep } from 'node:path'
import { loadConfig } from '../core/src/config/config.ts'
import type { Config } from '../core/src/config/config.ts'
import { envName, flagTable, pluginFlag } from '../core/src/config/flags.ts'
import { UsageError } from '../core/src/config/parse.ts'
import type { GroupManifest } from '../core/src/manifest/types.ts'
import type { BundledPlugins } from '../core/src/pipeline/plugins.ts'
import { createScrubber } from '../core/src/safety/scrub.ts'
import { startupVerdict } from '../core/src/startup.ts'

/**
 * The upstream a local session's flags are checked with before its private server is up: any
 * loopback URL does (the check only needs to know an upstream is given; it never connects).
 */
export const LOCAL_UPSTREAM_STAND_IN = 'http://127.0.0.1'

export interface LocalRequest {
  /** The repository as the configuration names it (`.`: the one the working directory is in). */
  repo: string
  /** ag-mcp's own arguments: the command line without `--local [REPO]`. */
  rest: string[]
  /** The local plugins' root flags nobody set: a session outside the repository points them at it. */
  roots: string[]
  /** The identity on the agent's commits, as --agent-name and --agent-email give it. */
  agent: { name: string | undefined; email: string | undefined }
  /** What local mode sets unless the operator did: exports stay in the pack (no work-tree file). */
  defaults: string[]
}

/**
 * Flags local mode turns on when nobody set them (a flag, a variable or the config file), and
 * why: an agent working on your own repository writes no work-tree file through MCP, so a bundle
 * export goes under .agentpack/exports/.
 */
const LOCAL_DEFAULTS = ['continuity-exports-in-pack']

export interface Io {
  cwd: string
  env: NodeJS.ProcessEnv
}

const looksSecret = (v: string): boolean => createScrubber(() => []).scrub(v) !== v

/** The command line without `--local`, `--local REPO` and `--local=REPO` (as the flag parser reads them). */
export function withoutLocal(argv: readonly string[]): string[] {
  const out: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string
    if (a.startsWith('--local=')) continue
    if (a === '--local') {
      const next = argv[i + 1]
      if (next !== undefined && !next.startsWith('--')) i++
      continue
    }
    out.push(a)
  }
  return out
}

/** The configuration's options with a role: which flags an operator set for the upstream, and which roots are free. */
function roleFlags(config: Readonly<Config>, plugins: BundledPlugins) {
  const given: string[] = []
  const roots: string[] = []
  for (const [name, entry] of Object.entries(plugins))
    for (const [option, spec] of Object.entries(entry.options)) {
      const set = config.plugins[name]?.[option] !== undefined
      const flag = pluginFlag(entry, option)
      if (spec.role === 'root' && !set) roots.push(flag)
      if (set && UPSTREAM_ROLES.includes(spec.role ?? '')) given.push(flag)
    }
  return { given, roots }
}

const UPSTREAM_ROLES = ['upstream-url', 'credential-file', 'credential-env']

/** The flags that name an upstream or its credential (what local mode provides itself). */
function upstreamFlags(plugins: BundledPlugins): string[] {
  return Object.values(plugins).flatMap((entry) =>
    Object.entries(entry.options).flatMap(([option, spec]) =>
      UPSTREAM_ROLES.includes(spec.role ?? '') ? [pluginFlag(entry, option)] : [],
    ),
  )
}

const conflict = (flags: readonly string[]): string =>
  `--local starts its own ag-server and token; drop --${flags.join(', --')}`

export type LocalMode = { request: LocalRequest; error?: undefined } | { error: string }

/**
 * Local mode as the configuration asks for it, checked as ag-mcp would check the session's flags
 * (unknown flags and groups, an upstream or token beside --local), or undefined when it is not
 * asked for. `error` is what ag-mcp prints (without its `ag-mcp: ` prefix); nothing was touched.
 */
export async function localMode(
  argv: readonly string[],
  io: Io,
  manifests: readonly GroupManifest[],
  plugins: BundledPlugins,
): Promise<LocalMode | undefined> {
  const check = (args: readonly string[], cwd: string) =>
    startupVerdict({ argv: args, env: io.env, manifests, plugins, cwd })
  // An upstream or token beside --local on the command line is named first, whatever else is wrong.
  if (argv.some((a) => a === '--local' || a.startsWith('--local='))) {
    const clash = upstreamFlags(plugins).filter((f) => argv.some((a) => a === `--${f}` || a.startsWith(`--${f}=`)))
    if (clash.length > 0) return { error: conflict(clash) }
  }
  let config: Readonly<Config>
  let info: string | undefined
  let set: ReadonlySet<string>
  try {
    ;({ config, info, given: set } = loadConfig(argv, io.env, looksSecret, plugins))
  } catch (e) {
    if (!(e instanceof UsageError)) throw e
    // A configuration ag-mcp refuses anyway: it says why, with the message (scrubbed) it gives.
    return { error: (await check(withoutLocal(argv), io.cwd)).error ?? e.message }
  }
  // --help and --version print without a server; ag-mcp answers them as it would anywhere.
  if (config.local === undefined || info === 'help' || info === 'version') return undefined
  const { given, roots } = roleFlags(config, plugins)
  if (given.length > 0) {
    // Named where it came from: a variable of the shell, or the config file.
    const where = given.map((f) => (io.env[envName(f)] !== undefined ? envName(f) : `"${f}" in the config file`))
    return { error: `--local starts its own ag-server and token; drop ${where.join(', ')}` }
  }
  const rest = withoutLocal(argv)
  const verdict = await check([...rest, '--upstream', LOCAL_UPSTREAM_STAND_IN], resolve(io.cwd, config.local))
  if (verdict.error !== undefined) return { error: verdict.error }
  const table = flagTable(plugins)
  const defaults = LOCAL_DEFAULTS.filter((f) => f in table && !set.has(f)).map((f) => `--${f}`)
  return { request: { repo: config.local, rest, roots, defaults, agent: config.agent } }
}

/**
 * What a local session serves with: its own arguments, local mode's defaults, the private server
 * and its token, and, when ag-mcp runs outside the repository (a host started it elsewhere), that repository as the
 * root of every local plugin nobody pointed elsewhere, so agit and continuity work on the
 * repository the agent proposes to.
 */
export function localServeArgs(
  request: LocalRequest,
  session: { top: string; cwd: string; upstream: string; tokenFile: string },
): string[] {
  const roots = within(session.top, session.cwd) ? [] : request.roots.flatMap((f) => [`--${f}`, session.top])
  return [
    ...request.rest,
    ...roots,
    ...request.defaults,
    '--upstream',
    session.upstream,
    '--token-file',
    session.tokenFile,
  ]
}

/** `dir` is `top` or inside it (real paths, so a symlinked checkout compares equal). */
function within(top: string, dir: string): boolean {
  const real = (p: string) => {
    try {
      return realpathSync(p)
    } catch {
      return resolve(p)
    }
  }
  const rel = relative(real(top), real(dir))
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel))
}
