// The whole surface a plugin sees of the core. Plugins import from this file only: never from
// core/src/mcp (a plugin knows its upstream or its directory, not the protocol that carries it).
//
// A plugin declares itself once with definePlugin: its options (which join the one flag table),
// how it builds its state (init), its handlers (typed from its manifests' generated types), and,
// for plugins whose tools are mostly declarative, the `operation` block its manifests carry.
// build.mjs reads the declaration at build time: the options, the operation schema and the
// handler names are known before the plugin's code is ever loaded at run time.
import type { Command, CommandArgs } from '../../lib/cli/commands.ts'

export type { CommandArgs } from '../../lib/cli/commands.ts'
// The failures a plugin throws (their codes, and the helpers that build them) live in their own
// module; plugins still import them from here, their one door to the core.
export { FAILURE_CODES, isPluginFailure, localFailure, relayed, upstreamFailure } from './plugin-failures.ts'
export type { FailureCode, PluginFailure } from './plugin-failures.ts'

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void
  info(msg: string, fields?: Record<string, unknown>): void
  warn(msg: string, fields?: Record<string, unknown>): void
  error(msg: string, fields?: Record<string, unknown>): void
}

/** The credential, owned by the core. `refresh()` re-reads the credential file (after a 401). */
export interface TokenSource {
  current(): Promise<string | undefined>
  refresh(): Promise<string | undefined>
}

export type JsonSchema = { [key: string]: unknown }

// ---------------------------------------------------------------------------------------------
// Options

export type OptionType = 'string' | 'number' | 'boolean' | 'list'

/**
 * What the core does for an option beyond parsing it. The core owns these because they are
 * safety rules no plugin may get wrong:
 * - `upstream-url`: a base URL; http:// is refused unless the host is loopback or the operator
 *   passes --allow-insecure-http; no credentials, query or fragment.
 * - `credential-file` / `credential-env`: where the plugin's credential is (a 0600 file, re-read
 *   on refresh, or a variable name). The core reads it at start-up, scrubs it from everything,
 *   and hands the plugin a TokenSource. At most one of the two may be given.
 * - `root`: the directory a local plugin works under. Unset: the git top level of the working
 *   directory (or, with `marker`, the nearest ancestor up to it holding that entry), found on the
 *   plugin's first call. The core applies path safety to the plugin's writePathArgs under this root.
 */
export type OptionRole = 'upstream-url' | 'credential-file' | 'credential-env' | 'root'

export interface OptionSpec {
  type: OptionType
  /** One sentence for --help and docs/flags.md. */
  description: string
  default?: string | number | boolean | readonly string[]
  /** The value's placeholder in --help, e.g. `URL`, `MS`. */
  value?: string
  /** Further constraints (minimum, enum, pattern, …), checked at start-up; errors name the flag. */
  schema?: JsonSchema
  role?: OptionRole
  /**
   * Only with role `root`: a directory name (e.g. `.agentpack`) that marks the root when the
   * operator gives none. The root is then the nearest ancestor of the working directory, up to
   * its git top level, that holds such a directory; else the git top level. Outside a git
   * repository: the working directory when it holds one.
   */
  marker?: string
}

export type OptionTable = Readonly<Record<string, OptionSpec>>

type ValueOf<S extends OptionSpec> = S['type'] extends 'string'
  ? string
  : S['type'] extends 'number'
    ? number
    : S['type'] extends 'boolean'
      ? boolean
      : readonly string[]

/** The resolved values of a plugin's options: an option without a default may be undefined. */
export type OptionValues<O extends OptionTable> = {
  readonly [K in keyof O]:
    | ValueOf<O[K]>
    | (O[K] extends { default: string | number | boolean | readonly string[] }
        ? never
        : O[K]['type'] extends 'boolean' | 'list'
          ? never
          : undefined)
}

// ---------------------------------------------------------------------------------------------
// Calls

/** Facts about this ag-mcp process (what server_info reports). */
export interface ServerInfo {
  name: string
  version: string
  groups: readonly string[]
  /** Default groups left out because they cannot work here, with the reason (e.g. no upstream). */
  absent?: Readonly<Record<string, string>>
  revisions: readonly string[]
  limits: Readonly<Record<string, number>>
}

/** What a handler knows about the tool it serves (from the manifest; never from the model). */
export interface ToolSpec {
  name: string
  group: string
  dataKind: string
  /** The tool's `operation` block, owned by its plugin and checked at build time by its schema. */
  operation?: unknown
  /** The argument naming the repository the call acts on (checked by the core against --repo). */
  repoArg?: string
}

/**
 * What a handler gets besides its arguments. The core passes an object whose `signal` is an
 * accessor, made on first read (most quick tools never need one): copy the fields you need
 * into a new context rather than spreading it (`{ ...ctx }` would drop `signal`).
 */
export interface ToolContext<S = unknown> {
  /** Always present, always honoured: aborted on cancellation, deadline or shutdown. */
  readonly signal: AbortSignal
  log: Logger
  /** What the plugin's init built (a client, an index, …); undefined without init. */
  state: S
  tool: ToolSpec
  server: ServerInfo
  /**
   * Asks, during the call, for data another group provides (one of the tool's manifest `asks`),
   * passing `input`, which is checked against the ask's input schema. Resolves to the answer,
   * checked against the ask's value schema, or to undefined when no enabled group answers, or
   * the one that does failed (logged): an ask never fails the call that makes it.
   */
  attachment(name: string, input: Readonly<Record<string, unknown>>): Promise<unknown>
}

/** The input and output types of one tool, as build.mjs generates them (generated/types/tools.ts). */
export interface ToolTypes {
  input: object
  output: object
}

/**
 * A handler: typed arguments in (validated against the tool's input schema before it runs),
 * plain data out (validated against its output schema after). With the generated tool types a
 * handler that reads an undeclared argument, or returns a field the schema lacks, does not compile.
 */
export type Handler<T extends ToolTypes = ToolTypes, S = unknown> = (
  args: Readonly<T['input']>,
  ctx: ToolContext<S>,
) => Promise<T['output']>

/** Handlers by tool name, for the tools of `T` (a map from tool name to its ToolTypes). */
export type Handlers<T, S = unknown> = {
  [K in keyof T]?: T[K] extends ToolTypes ? Handler<T[K], S> : never
}

/** Arguments as the core holds them before a plugin sees them (already schema-checked). */
export type ToolArgs = Readonly<Record<string, unknown>>

/**
 * A lease check asked by the core before a write leaves the process (`--require-lease`). Every
 * field comes from an argument the core polices (leaseArg, runArg, repoArg, writePathArgs).
 */
export interface LeaseCheck {
  leaseId: string
  runId: string | undefined
  repo: string | undefined
  /** The written paths, as checked (normalized). */
  paths: string[]
  /** The call's validated arguments (e.g. a workspace id that tells the plugin the repository). */
  args: ToolArgs
}
export type LeaseVerdict = { ok: true } | { ok: false; reason: string }

// ---------------------------------------------------------------------------------------------
// The declaration

/** What init gets: the plugin's resolved options, its credential and the log. */
export interface PluginInit<O extends OptionTable> {
  options: OptionValues<O>
  /** The credential the operator named through the plugin's credential options (undefined values when none). */
  credential: TokenSource
  /** A local plugin's root directory (its real path); undefined for a plugin without a root option. */
  root: string | undefined
  /** The enabled groups whose manifests name this plugin: what the operator expects it to serve. */
  groups: readonly string[]
  log: Logger
  /**
   * The core's token scrubber (token shapes, the configured credentials), for what a plugin
   * stores or exports; results are scrubbed by the core anyway. One definition of a token.
   */
  scrub: (s: string) => string
}

/** The generic executor of a plugin whose manifests carry an `operation` block. */
export interface OperationSupport<S> {
  /** JSON Schema of the block; build.mjs checks every tool's `operation` against it. */
  schema: JsonSchema
  /** Build-time checks beyond the schema (e.g. that each argument it names is an input property). */
  check?(operation: unknown, inputProperties: readonly string[]): string[]
  /** One line for docs/tools.md, e.g. "AGWP: `GET /repos/{repo}`". */
  describe?(operation: unknown): string
  /** Runs a tool that has an `operation` and no handler of its own. */
  run(args: ToolArgs, ctx: ToolContext<S>): Promise<unknown>
}

/**
 * What a plugin contributes to another group's tool call (declared in its manifest's
 * `attachments`; see docs/contributing.md). Neither side imports the other: the core carries it.
 */
export interface AttachmentSupport<S> {
  /**
   * Before the target tool runs (after its policy checks): the value for the declared argument,
   * and a receipt that settle gets back; undefined to attach nothing. For an attachment without
   * an argument, while the target runs: the answer to its handler's ask, whose checked input is
   * `input`. A failure here is logged and the call goes on without the attachment.
   */
  provide(
    call: { tool: string; args: ToolArgs; input?: Readonly<Record<string, unknown>> },
    ctx: ToolContext<S>,
  ): Promise<{ value: unknown; receipt?: unknown } | undefined>
  /** After the target succeeded: the receipt, and the declared result fields of its answer. */
  settle?(receipt: unknown, result: Readonly<Record<string, unknown>>, ctx: ToolContext<S>): Promise<void>
}

export interface PluginDefinition<O extends OptionTable, S> {
  /** The folder name under plugins/, and the `plugin` its manifests name. */
  name: string
  /** The plugin API version this plugin is written against. */
  api: 1
  /** Prefix of every option's flag, variable and config key; default `<name>-`. */
  optionPrefix?: string
  options?: O
  /** Builds the plugin's state once, lazily, before its first call (a rejection is retried next call). */
  init?(env: PluginInit<O>): S | Promise<S>
  /**
   * A check run once in the background at start-up, after ag-mcp wrote its first answer, when
   * one of the plugin's groups is enabled (init runs first): e.g. that the upstream accepts the
   * credential for every enabled group. It reports through `env.log`; it never delays an answer
   * and never stops ag-mcp (a rejection is logged at debug level). `signal` is aborted when the
   * session ends: a check still running then says nothing (the session ended normally).
   */
  start?(state: S, env: PluginInit<O>, signal: AbortSignal): Promise<void>
  /** Handlers by tool name (type them with Handlers<…> and the generated tool types). */
  handlers: object
  operation?: OperationSupport<S>
  /** Asked before a write under --require-lease leaves the process. */
  confirmLease?(check: LeaseCheck, ctx: ToolContext<S>): Promise<LeaseVerdict>
  /**
   * For a tool with `sourceWriteArg`: every repository path the call would write (e.g. each path
   * a workspace changes), asked under --write-path before the call is sent. Throw if unknown.
   */
  writtenPaths?(args: ToolArgs, ctx: ToolContext<S>): Promise<string[]>
  /** Attachments by the name its manifest declares. */
  attachments?: Readonly<Record<string, AttachmentSupport<S>>>
  /**
   * For a tool of a peer group (manifest `peer`): the refusal the peer gives for arguments the
   * input schema rejected (e.g. its message for an unknown enum value), or undefined for the
   * core's own words. `args` are unchecked: read them defensively.
   */
  peerRefusal?(tool: string, args: Readonly<Record<string, unknown>>): string | undefined
  /**
   * Commands of `ag-mcp <name> …` by name (`agit`, `continuity`): build.mjs records each one's
   * summary and flags, and `load` imports its code only when it runs.
   */
  commands?: Readonly<Record<string, PluginCommand>>
}

// ---------------------------------------------------------------------------------------------
// Commands

/**
 * What a plugin's command gets from the binary besides its words. Output goes through `out` and
 * `err`, which sanitize and scrub it (what a plugin prints may have been written by an agent).
 */
export interface CommandContext {
  out(line: string): void
  err(line: string): void
  cwd: string
  env: NodeJS.ProcessEnv
  /** ag-mcp's version. */
  version: string
  /** argv that runs this ag-mcp (node and its script, or the executable), for hooks that call back. */
  self: readonly string[]
  /** Token shapes replaced, for text the command keeps (written to a file) rather than prints. */
  scrub(text: string): string
  /**
   * The hosts' project files for a repository, with the entry `ag-mcp install <host> --local`
   * writes: written with `write`, else what would be.
   */
  projectConfigs(root: string, write: boolean): Promise<Array<{ path: string; action: string }>>
}

/** A plugin's command's code: its exit code. */
export type CommandRun = (args: CommandArgs, ctx: CommandContext) => Promise<number>

/**
 * A command of `ag-mcp <name> …`, declared like a tool: what build.mjs records (summary, words,
 * flags) is known without loading the plugin, and `load` imports its code when it runs.
 */
export interface PluginCommand extends Omit<Command<CommandContext>, 'name' | 'commands' | 'load'> {
  load(): Promise<CommandRun>
}

/** A plugin as the core holds it: the declaration with its types erased. */
export interface Plugin {
  name: string
  api: 1
  optionPrefix?: string
  options?: OptionTable
  init?(env: PluginInit<OptionTable>): unknown
  start?(state: unknown, env: PluginInit<OptionTable>, signal: AbortSignal): Promise<void>
  handlers: Readonly<Record<string, (args: ToolArgs, ctx: ToolContext) => Promise<unknown>>>
  operation?: OperationSupport<unknown>
  confirmLease?(check: LeaseCheck, ctx: ToolContext): Promise<LeaseVerdict>
  writtenPaths?(args: ToolArgs, ctx: ToolContext): Promise<string[]>
  attachments?: Readonly<Record<string, AttachmentSupport<unknown>>>
  peerRefusal?(tool: string, args: Readonly<Record<string, unknown>>): string | undefined
  commands?: Readonly<Record<string, PluginCommand>>
}

/** Declares a plugin: the default export of plugins/<name>/index.ts. */
export function definePlugin<const O extends OptionTable = Record<never, OptionSpec>, S = undefined>(
  p: PluginDefinition<O, S>,
): Plugin {
  // The core calls each handler only with arguments its tool's schema accepted, and gives it the
  // state this plugin's init built: the erased types below are what the declaration promised.
  return p as unknown as Plugin
}
