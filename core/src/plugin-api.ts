// The whole surface a plugin sees of the core. Plugins import types from this file only:
// never from core/src/mcp (a plugin knows its upstream, not the protocol that carries it).

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void
  info(msg: string, fields?: Record<string, unknown>): void
  warn(msg: string, fields?: Record<string, unknown>): void
  error(msg: string, fields?: Record<string, unknown>): void
}

/** The credential, owned by the core. `refresh()` re-reads the token file (after a 401). */
export interface TokenSource {
  current(): Promise<string | undefined>
  refresh(): Promise<string | undefined>
}

/** The upstream connection settings, validated by the core at startup. */
export interface UpstreamSettings {
  /** Base URL of the AGWP server, without the `/agwp/v1` suffix, e.g. `http://127.0.0.1:7420`. */
  url: string
  /** Per-call overall deadline in milliseconds. */
  timeoutMs: number
  /** Connect timeout in milliseconds. */
  connectTimeoutMs: number
  /** Largest response body accepted, in bytes. */
  maxResponseBytes: number
}

export interface PluginEnv {
  /** undefined when the operator gave no --upstream: a plugin that needs one refuses politely. */
  upstream: UpstreamSettings | undefined
  tokens: TokenSource
  log: Logger
}

/** How a tool maps onto one HTTP operation of its upstream (read by the agwp plugin only). */
export interface Operation {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE'
  /** Path template under the API root, e.g. `/repos/{repo}/file`; every `{arg}` is URL-encoded. */
  path: string
  /** Arguments sent as query parameters (absent ones are omitted). */
  query?: string[]
  /** Arguments sent as JSON body fields; `{"bodyField": "argName"}` or a list of same-named fields. */
  body?: string[] | Record<string, string>
  /** Argument whose value is sent as the `AGWP-Run` header. */
  runHeader?: string
}

/** What a handler knows about the tool it serves (from the manifest; never from the model). */
export interface ToolSpec {
  name: string
  group: string
  dataKind: string
  operation?: Operation
  /** The argument naming the repository the call acts on (checked by the core against --repo). */
  repoArg?: string
}

export interface ServerInfo {
  name: string
  version: string
  groups: readonly string[]
  revisions: readonly string[]
  limits: Readonly<Record<string, number>>
}

/**
 * What a handler gets besides its arguments. The core passes an object whose `signal` is an
 * accessor, made on first read (most quick tools never need one): copy the fields you need
 * into a new context rather than spreading it (`{ ...ctx }` would drop `signal`).
 */
export interface ToolContext<U = unknown> {
  /** Always present, always honoured: aborted on cancellation, deadline or shutdown. */
  readonly signal: AbortSignal
  log: Logger
  upstream: U
  tool: ToolSpec
  server: ServerInfo
}

/** Validated arguments (the core has checked them against the tool's input schema). */
export type ToolArgs = Record<string, unknown>

export type Handler<U = unknown> = (args: ToolArgs, ctx: ToolContext<U>) => Promise<unknown>

/** A lease check asked by the core before a write leaves the process (`--require-lease`). */
export interface LeaseQuery {
  leaseId: string
  runId: string | undefined
  repo: string | undefined
  paths: string[]
  /** The call's validated arguments (e.g. a workspace id that tells the plugin the repository). */
  args: Readonly<ToolArgs>
}
export type LeaseVerdict = { ok: true } | { ok: false; reason: string }

export interface Plugin<U = unknown> {
  name: string
  /** Builds the plugin's upstream client; called once, lazily, before the first call. */
  init?(env: PluginEnv): U | Promise<U>
  /** Handlers by tool name, for tools that need logic beyond their manifest `operation`. */
  handlers: Record<string, Handler<U>>
  /** Generic executor for tools that declare an `operation` and have no handler of their own. */
  operation?: Handler<U>
  confirmLease?(query: LeaseQuery, ctx: ToolContext<U>): Promise<LeaseVerdict>
}

/**
 * What a plugin throws when its upstream refuses or fails. Plain data (checked by shape,
 * not instanceof) because plugins are bundled apart from the core. `message` is untrusted:
 * the core quotes, sanitizes, scrubs and bounds it before the model sees it.
 */
export interface PluginFailure {
  pluginFailure: true
  /** AGWP error code (`unauthenticated`, `forbidden`, `not_found`, `conflict`, `invalid`,
   *  `rate_limited`, …) or a transport code (`timeout`, `unreachable`, `bad_response`, `redirect`). */
  code: string
  message: string
  status?: number
  retryAfterS?: number
  details?: unknown
}

export function pluginFailure(code: string, message: string, extra: Partial<PluginFailure> = {}): PluginFailure {
  return { ...extra, pluginFailure: true, code, message }
}

export function isPluginFailure(x: unknown): x is PluginFailure {
  return typeof x === 'object' && x !== null && (x as { pluginFailure?: unknown }).pluginFailure === true
}
