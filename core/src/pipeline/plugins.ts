// Plugins are loaded on their first call (a plugin's code and its upstream client cost
// start-up time nobody should pay for tools/list) and initialised once. Which plugins exist,
// and their options, comes from generated/plugins.js: build.mjs writes it from plugins/*/.
import type { OptionValue, PluginOptionsWithChecks } from '../config/config.ts'
import { pluginFlag } from '../config/flags.ts'
import type { Logger, OptionTable, Plugin, PluginCommand, PluginInit, TokenSource } from '../plugin-api.ts'
import { localFailure } from '../plugin-api.ts'

/** One bundled plugin: its options (known at start-up) and its code (loaded on first use). */
export interface BundledPlugin extends PluginOptionsWithChecks {
  load(): Promise<Plugin>
  /** The plugin declares a start-up check (`start`): build.mjs says so, so no code is loaded to ask. */
  starts?: boolean
  /** Its commands as declared, without their code (build.mjs records them; operator/commands.ts runs them). */
  commands?: Readonly<Record<string, Omit<PluginCommand, 'load'>>>
}

export type BundledPlugins = Readonly<Record<string, BundledPlugin>>

export interface LoadedPlugin {
  plugin: Plugin
  state: unknown
  /** A local plugin's root (real path): the core checks its writePathArgs under it. */
  root: string | undefined
  /** What init got (the start-up check gets it too). */
  init: PluginInit<OptionTable>
}

export interface PluginSetEnv {
  /** Each plugin's resolved option values (Config.plugins). */
  options: Readonly<Record<string, Readonly<Record<string, OptionValue>>>>
  /** Each plugin's credential, read by the core at start-up. */
  credentials: Readonly<Record<string, TokenSource>>
  log: Logger
  /** The core's token scrubber, handed to plugins for what they store (identity when absent). */
  scrub?: (s: string) => string
  /** Each plugin's enabled groups (none when absent). */
  groups?: Readonly<Record<string, readonly string[]>>
}

const NO_CREDENTIAL: TokenSource = { current: async () => undefined, refresh: async () => undefined }

export class PluginSet {
  private readonly loaded = new Map<string, Promise<LoadedPlugin>>()
  private started = false
  /** Aborted when the session ends: start-up checks still running stop, and say nothing. */
  private readonly ending = new AbortController()
  private readonly checks: Promise<void>[] = []

  constructor(
    private readonly bundled: BundledPlugins,
    private readonly env: PluginSetEnv,
  ) {}

  get(name: string): Promise<LoadedPlugin> {
    let p = this.loaded.get(name)
    if (!p) {
      const entry = this.bundled[name]
      if (!entry) return Promise.reject(new Error(`plugin ${name} is not bundled`))
      p = this.start(name, entry)
      // A failed init (say, no --upstream) is retried on the next call, not cached forever.
      p.catch(() => this.loaded.delete(name))
      this.loaded.set(name, p)
    }
    return p
  }

  /**
   * Runs, once and in the background, the start-up check of every plugin that declares one and
   * serves an enabled group. Nothing waits for it and nothing it does can fail the process: a
   * plugin that cannot even start (say, no --upstream, already warned about) is logged at debug.
   */
  runStartChecks(): void {
    if (this.started) return
    this.started = true
    const signal = this.ending.signal
    for (const [name, entry] of Object.entries(this.bundled)) {
      if (entry.starts !== true || (this.env.groups?.[name]?.length ?? 0) === 0) continue
      const check = this.get(name)
        .then(({ plugin, state, init }) => (signal.aborted ? undefined : plugin.start?.(state, init, signal)))
        .catch((e: unknown) =>
          this.env.log.debug('start-up check not run', {
            plugin: name,
            error: e instanceof Error ? e.message : ((e as { message?: unknown }).message ?? String(e)),
          }),
        )
      this.checks.push(check)
    }
  }

  /**
   * At the end of the session: start-up checks still running are aborted, and settle before the
   * process goes on (local mode then revokes the token a check may be using: a 401 from that is
   * the session's end, not a problem to warn about).
   */
  async stopStartChecks(): Promise<void> {
    this.ending.abort()
    await Promise.allSettled(this.checks)
  }

  private async start(name: string, entry: BundledPlugin): Promise<LoadedPlugin> {
    const plugin = await entry.load()
    const options = this.env.options[name] ?? {}
    const rootOption = Object.entries(entry.options).find(([, spec]) => spec.role === 'root')
    const root =
      rootOption === undefined
        ? undefined
        : await resolveRoot(options[rootOption[0]], pluginFlag(entry, rootOption[0]), rootOption[1].marker)
    const init: PluginInit<OptionTable> = {
      options: options as PluginInit<OptionTable>['options'],
      credential: this.env.credentials[name] ?? NO_CREDENTIAL,
      root,
      groups: this.env.groups?.[name] ?? [],
      log: this.env.log,
      scrub: this.env.scrub ?? ((s) => s),
    }
    return { plugin, state: plugin.init ? await plugin.init(init) : undefined, root, init }
  }
}

let gitTopLevel: Promise<string | undefined> | undefined

/**
 * A local plugin's root: the directory its option names, or else the git top level of the
 * working directory, asked of git once per process and only when a local plugin first runs
 * (a process that never calls one never spawns git). With a `marker` (Agentpack's
 * `.agentpack`), the nearest ancestor of the working directory holding it wins, so a pack in a
 * sub-project is the root its tools and their path checks use; the walk stops at the git top
 * level, so a stray marker above the repository never widens what the plugin may write; outside
 * a repository only the working directory itself, when it holds the marker. Always a real path:
 * symlinks resolved, so the path checks compare like with like.
 */
async function resolveRoot(given: OptionValue, flag: string, marker: string | undefined): Promise<string> {
  const { realpath, stat } = process.getBuiltinModule('node:fs/promises')
  if (typeof given === 'string') return realpath(given)
  gitTopLevel ??= new Promise((resolve) => {
    process
      .getBuiltinModule('node:child_process')
      .execFile('git', ['rev-parse', '--show-toplevel'], { encoding: 'utf8' }, (err, stdout) =>
        resolve(err ? undefined : stdout.trim()),
      )
  })
  const top = await gitTopLevel
  const { dirname, join, sep } = process.getBuiltinModule('node:path')
  const holds = (dir: string) =>
    stat(join(dir, marker ?? '')).then(
      (s) => s.isDirectory(),
      () => false,
    )
  // Outside a repository nothing bounds a walk up, so only the working directory itself may be
  // the root, when it holds the marker (a pack made with `agentpack init` in a plain folder).
  if ((top === undefined || top === '') && marker !== undefined && (await holds(process.cwd())))
    return realpath(process.cwd())
  if (top === undefined || top === '')
    throw localFailure(
      'not_configured',
      `no root directory: the working directory is not inside a git repository; start ag-mcp with --${flag} DIR`,
    )
  const real = await realpath(top)
  if (marker === undefined) return real
  let dir = await realpath(process.cwd())
  if (!dir.startsWith(real + sep)) return real
  for (; dir !== real; dir = dirname(dir)) if (await holds(dir)) return dir
  return real
}
