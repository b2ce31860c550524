// Start-up and the stdio loop. Everything here runs before the first request is answered,
// so it stays small: the plugins, the validators, minimatch and the help text are loaded on
// first use (see docs/performance.md, "Start-up").
import { LineReader } from './jsonrpc/lines.ts'
import { readStdin } from './stdio/stdin.ts'
import { StdioPump } from './stdio/pump.ts'
import { LineWriter } from './jsonrpc/writer.ts'
import { loadConfig } from './config/config.ts'
import type { Config } from './config/config.ts'
import { flagTable, pluginFlag } from './config/flags.ts'
import { flagValues, namedTokens } from './config/named-tokens.ts'
import { UsageError } from './config/parse.ts'
import { createPipeline } from './pipeline/pipeline.ts'
import { PluginSet } from './pipeline/plugins.ts'
import type { BundledPlugins } from './pipeline/plugins.ts'
import type { TokenSourceWithSecrets } from './pipeline/tokens.ts'
import { createLogger } from './log.ts'
import type { ClosableLogger } from './log.ts'
import { Registry } from './manifest/registry.ts'
import type { GroupManifest } from './manifest/types.ts'
import { McpServer } from './mcp/server.ts'
import { ALL_REVISIONS } from './mcp/revisions.ts'
import type { ServerInfo } from './plugin-api.ts'
import { createTokenBucket } from './policy/rate-limit.ts'
import { createScrubber } from './safety/scrub.ts'
import type { Scrubber } from './safety/scrub.ts'
import { sanitizeText } from './safety/sanitize.ts'
import { hideSecretValues, readCredentials, servedGroups } from './startup.ts'

export interface ServeOptions {
  name: string
  title: string
  version: string
  instructions: string
  manifests: readonly GroupManifest[]
  /** generated/plugins.js: every plugin under plugins/, its options, and its lazy loader. */
  plugins: BundledPlugins
  argv: readonly string[]
  env: NodeJS.ProcessEnv
}

/** Runs ag-mcp on this process's stdio; resolves with the exit code. */
export async function serveStdio(o: ServeOptions): Promise<number> {
  let secrets: () => readonly string[] = () => []
  const scrubber = createScrubber(() => secrets())
  let config: Readonly<Config>
  let info: ReturnType<typeof loadConfig>['info']
  // Start-up messages and --print-config may echo a flag's value: with the token the
  // configuration names known to the scrubber, a token typed into the wrong flag is not echoed.
  const knowNamedTokens = (): void => {
    const named = namedTokens(o.argv, o.env)
    secrets = () => named
  }
  const failScrubbed = (message: string): number => {
    knowNamedTokens()
    return fail(hideSecretValues(`ag-mcp: ${message}`, flagValues(o.argv, o.env), scrubber))
  }
  try {
    ;({ config, info } = loadConfig(o.argv, o.env, (v) => scrubber.scrub(v) !== v, o.plugins))
  } catch (e) {
    if (e instanceof UsageError) return failScrubbed(e.message)
    throw e
  }
  const registry = new Registry(o.manifests)
  if (info === 'version') return print(`${o.name} ${o.version}\n`)
  if (info === 'help') {
    const { renderHelp } = await import('./config/help.ts')
    return print(await renderHelp(o.name, registry, flagTable(o.plugins)))
  }
  const log = openLog(config, scrubber)
  if (typeof log === 'string') return fail(log)
  // Groups that cannot work here (no upstream given, no git repository) are left out of the
  // default set; server_info says why (startup.ts: `ag-mcp tools` asks the same function).
  const { resolution: groups, absent } = servedGroups(registry, o.plugins, config, process.cwd())
  if (!groups.ok) return failScrubbed(groups.error)
  if (info === 'print-config') {
    knowNamedTokens()
    const shown = scrubber.scrubDeep({ ...config, enabledGroups: [...groups.enabled] })
    return print(`${JSON.stringify(shown, null, 2)}\n`)
  }
  for (const w of groups.warnings) log.warn(w)
  // Each plugin's credential is read now, by the core: a missing or empty one stops start-up, and
  // the scrubber knows every value before anything can be logged or answered.
  let credentials: Record<string, TokenSourceWithSecrets>
  try {
    credentials = await readCredentials(o.plugins, config, o.env, log)
  } catch (e) {
    await log.idle() // the warnings above come first
    return failScrubbed((e as Error).message)
  }
  secrets = secretsOf(credentials)
  const serverInfo = describeServer(o, registry, config, groups.enabled, absent)
  const plugins = new PluginSet(o.plugins, {
    options: config.plugins,
    credentials,
    log,
    scrub: (s) => scrubber.scrub(s),
    groups: groupsByPlugin(registry, groups.enabled),
  })
  // One process has one serverInfo: a peer's name (and list ttl) when the groups the operator
  // named in --allow all stand in for that peer (e.g. continuity,bundles: agentpack), so its
  // clients' identity checks pass; a default start is ag-mcp's own; --server-name for any mix.
  const peer = config.allow !== undefined ? registry.peerOf(groups.enabled) : undefined
  const pipeline = createPipeline({
    identity: { name: config.serverName ?? peer?.name ?? o.name, title: o.title, version: o.version },
    instructions: o.instructions,
    registry,
    enabled: groups.enabled,
    plugins,
    log,
    scrubber,
    maxOutputBytes: config.maxOutputBytes,
    rateLimit: createTokenBucket({ ratePerSec: config.rate.perSec, burst: config.rate.burst }),
    policy: { repoGlobs: config.repo, writeGlobs: config.writePath, requireLease: config.requireLease },
    serverInfo,
  })
  keepYoungGenerationSmall()
  return runLoop(
    pipeline,
    config,
    { listTtlMs: peer?.listTtlMs ?? LIST_TTL_MS, handshakeOptional: !!peer },
    log,
    scrubber,
    {
      line: () => logStartup(o, config, [...groups.enabled], registry, log),
      checks: () => plugins.runStartChecks(),
      stopChecks: () => plugins.stopStartChecks(),
    },
  )
}

/** The logger the configuration asks for, or the message that stops start-up if its file cannot be opened. */
function openLog(config: Readonly<Config>, scrubber: Scrubber): ClosableLogger | string {
  try {
    return createLogger({
      level: config.logLevel,
      scrub: (s) => scrubber.scrub(s),
      ...(config.logFile ? { file: config.logFile } : {}),
    })
  } catch (e) {
    const why = (e as NodeJS.ErrnoException).code ?? (e as Error).message
    return `ag-mcp: --log-file ${config.logFile ?? ''}: cannot open it for appending (${why}); create its folder, or name a file this user can write`
  }
}

/** Every credential's secrets, as the scrubber asks for them. */
function secretsOf(credentials: Record<string, TokenSourceWithSecrets>): () => readonly string[] {
  const sources = Object.values(credentials)
  // One source (the usual case) hands over its own list: the scrubber may ask on every string.
  const only = sources.length === 1 ? sources[0] : undefined
  return only ? () => only.secrets() : () => sources.flatMap((c) => c.secrets())
}

/** What server_info reports: the served groups, the default ones that cannot work here and why, the limits. */
function describeServer(
  o: ServeOptions,
  registry: Registry,
  config: Readonly<Config>,
  enabled: ReadonlySet<string>,
  absent: ReadonlyMap<string, string>,
): ServerInfo {
  return {
    name: o.name,
    version: o.version,
    groups: [...enabled],
    absent: Object.fromEntries(
      [...absent].filter(([g]) => registry.groups.get(g)?.access === 'default' && !enabled.has(g)),
    ),
    revisions: ALL_REVISIONS,
    limits: {
      maxOutputBytes: config.maxOutputBytes,
      maxMessageBytes: config.maxMessageBytes,
      rateLimitPerSec: config.rate.perSec,
    },
  }
}

/** Each plugin's enabled groups (a plugin may serve several), as the plugin set hands them to its init. */
function groupsByPlugin(registry: Registry, enabled: ReadonlySet<string>): Record<string, string[]> {
  const groupsOf: Record<string, string[]> = {}
  for (const g of enabled) {
    const plugin = registry.groups.get(g)?.plugin
    if (plugin !== undefined) groupsOf[plugin] = [...(groupsOf[plugin] ?? []), g]
  }
  return groupsOf
}

/**
 * Keeps V8's young generation at its initial size: under a burst of calls it would otherwise
 * double repeatedly (to 16 MiB a semi-space) and hold RSS there; a small one is scavenged more
 * often, at no measurable cost here. Off the start-up path: node:v8 costs time to load.
 */
function keepYoungGenerationSmall(): void {
  setTimeout(() => {
    const v8 = process.getBuiltinModule('node:v8')
    v8.setFlagsFromString('--semi-space-growth-factor=1')
  }, 20).unref()
}

/** With no request by then, the start-up line is written this long after start. */
const STARTUP_LINE_MS = 100

/** At exit, how long log lines still queued for stderr may take to leave. */
const LOG_FLUSH_MS = 1000

/** Lists never change within a process: an hour is a safe cache hint (a peer may ask for 0). */
const LIST_TTL_MS = 3_600_000

function runLoop(
  pipeline: ReturnType<typeof createPipeline>,
  config: Readonly<Config>,
  /** What a peer's clients expect of the protocol layer (see McpServerOptions). */
  peer: { listTtlMs: number; handshakeOptional: boolean },
  log: ClosableLogger,
  scrubber: Scrubber,
  startup: { line: () => void; checks: () => void; stopChecks: () => Promise<void> },
): Promise<number> {
  const writer = new LineWriter(process.stdout)
  // The start-up line is written once the first answer has left, or after STARTUP_LINE_MS with no
  // request, or at the end, whichever comes first: formatting it, and building process.stderr,
  // cost about 2 ms of CPU that the client's first answer need not wait for. Plugins' start-up
  // checks (a plugin's code, an upstream request) wait for the first answer too, so they never
  // delay it; hosts ask at once, so they still run at start.
  let linePending = true
  const startupLine = (): void => {
    if (!linePending) return
    linePending = false
    startup.line()
  }
  setTimeout(startupLine, STARTUP_LINE_MS).unref()
  let answered = false
  const server = new McpServer({
    pipeline,
    send: (line) => {
      writer.write(line)
      if (answered) return
      answered = true
      setImmediate(() => {
        startupLine()
        startup.checks()
      })
    },
    pageSize: config.pageSize,
    listTtlMs: peer.listTtlMs,
    handshakeOptional: peer.handshakeOptional,
    onCallSettled: () => pump.callSettled(),
    clean: (s) => scrubber.scrub(sanitizeText(s).text),
    onInternalError: (method, e) =>
      log.error('internal error', { method, error: e instanceof Error ? (e.stack ?? e.message) : String(e) }),
  })
  let deadline: NodeJS.Timeout | undefined
  let done!: (code: number) => void
  const exited = new Promise<number>((resolve) => (done = resolve))
  // Requests read but not yet dispatched stay in the reader as bytes; the pump (stdio/pump.ts)
  // decides when to dispatch, read or hold, so memory stays bounded.
  const pump = new StdioPump({
    reader: new LineReader(config.maxMessageBytes),
    writer,
    server,
    maxMessageBytes: config.maxMessageBytes,
    later: (fn) => setImmediate(fn),
    onDrained: () => {
      if (deadline) clearTimeout(deadline)
      startupLine()
      // Every answer reaches the client; a start-up check still running stops (a session that
      // only initialized and closed ends quietly); the log gets a moment more, but a host
      // application that never reads stderr must not keep the process from exiting.
      void Promise.all([writer.idle(), startup.stopChecks()])
        .then(() => Promise.race([log.idle(), new Promise((r) => setTimeout(r, LOG_FLUSH_MS).unref())]))
        .then(() => done(0))
    },
  })
  pump.connect(readStdin({ data: (bytes) => pump.data(bytes), end: () => pump.end(true) }))
  process.on('SIGTERM', () => {
    log.info('SIGTERM: finishing in-flight calls', { inFlight: server.inFlightCount })
    deadline ??= setTimeout(() => server.abortAll('shutting down'), config.shutdownTimeoutMs)
    pump.end(false)
  })
  return exited
}

/** --help, --version, --print-config: the process prints and exits; no MCP session exists. */
function print(text: string): number {
  process.stdout.write(text)
  return 0
}

function fail(message: string): number {
  process.stderr.write(`${message}\n`)
  return 2
}

/**
 * One line that says what this process serves (never the token), and a warning for each upstream
 * plugin that has enabled groups but no upstream: such a process answers, but every call fails.
 */
function logStartup(
  o: ServeOptions,
  config: Readonly<Config>,
  enabled: readonly string[],
  registry: Registry,
  log: ClosableLogger,
): void {
  const upstreams: string[] = []
  for (const [name, entry] of Object.entries(o.plugins)) {
    const urlOption = Object.entries(entry.options).find(([, s]) => s.role === 'upstream-url')?.[0]
    if (urlOption === undefined) continue
    const url = config.plugins[name]?.[urlOption]
    if (typeof url === 'string') {
      upstreams.push(new URL(url).origin)
      continue
    }
    const idle = enabled.filter((g) => registry.groups.get(g)?.plugin === name)
    const flag = pluginFlag(entry, urlOption)
    if (idle.length > 0)
      log.warn(
        `no --${flag}: the ${idle.join(', ')} group(s) have no server to call; pass --${flag} URL (the URL ag-server prints), or run ag-mcp --local in your repository`,
      )
  }
  log.info(`${o.name} ${o.version} serving MCP on stdio`, {
    groups: enabled.join(','),
    upstream: upstreams.join(',') || 'none',
    revisions: ALL_REVISIONS.join(','),
  })
}
