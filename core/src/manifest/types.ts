// The manifest format (manifests/manifest.schema.json is the truth; these types mirror it).

export type JsonSchema = { [key: string]: unknown }

export interface ObjectSchema extends JsonSchema {
  type: 'object'
  properties: Record<string, JsonSchema>
  required?: string[]
}

export interface ToolAnnotations {
  readOnlyHint: boolean
  destructiveHint: boolean
  idempotentHint: boolean
  openWorldHint: boolean
}

export interface ToolManifest {
  name: string
  /**
   * Another group's tool name this tool is exposed under (tools/list, calls, results) whenever
   * no enabled group has a tool of that name: a group mirroring another product's tools keeps
   * that product's names where they are free (docs/contributing.md, "altName").
   */
  altName?: string
  title: string
  description: string
  annotations: ToolAnnotations
  input: ObjectSchema
  output: ObjectSchema
  dataKind: string
  textField?: string
  /** Result `_meta` entries: each key gets the named top-level output field, when the result has it. */
  resultMeta?: Record<string, string>
  /** Top-level output fields naming repositories (a list, or an object keyed by name): filtered to --repo. */
  repoFields?: string[]
  repoArg?: string
  writePathArgs?: string[]
  /** Arguments naming files as a listing showed them: an escaped name (`\u{202e}`) there comes back as the real one. */
  nameArgs?: string[]
  /** Names a source (a workspace) whose changed paths the tool writes: checked through Plugin.writtenPaths. */
  sourceWriteArg?: string
  runArg?: string
  leaseArg?: string
  /** Data the handler may ask other groups for while it runs (ctx.attachment). */
  asks?: AskManifest[]
  /** Owned by the tool's plugin: checked at build time by the schema the plugin declares. */
  operation?: Record<string, unknown>
}

/**
 * Something a tool's handler may ask for during its call, with an input only it knows (e.g. the
 * run id a passport names). Another group answers it by declaring an attachment of the same
 * name for this tool without an `argument`; no enabled group answering means no value.
 */
export interface AskManifest {
  name: string
  /** What the handler passes; checked before a provider sees it. */
  input: ObjectSchema
  /** What an answer must be; one that does not fit is logged and dropped. */
  value: ObjectSchema
  description: string
}

/** What a resource and a resource template share: listed to the host application, served by one tool. */
interface ResourceCommon {
  name: string
  title?: string
  description: string
  mimeType: string
  /** The tool whose result is the content. */
  tool: string
  /** Fixed arguments added to the call. */
  arguments?: Record<string, unknown>
}

export interface ResourceManifest extends ResourceCommon {
  uri: string
}

export interface ResourceTemplateManifest extends ResourceCommon {
  uriTemplate: string
}

export interface PromptManifest {
  name: string
  title?: string
  description: string
  arguments?: { name: string; description: string; required?: boolean }[]
  messages: { role: 'user' | 'assistant'; text: string }[]
}

/**
 * Data one group's plugin contributes to another group's tool call, declared here so the core
 * can pass it through: plugins never import each other. With an `argument`: before the target
 * tool runs, the contributing plugin's `attachments[name].provide` returns a value for it; after
 * the target succeeds, `settle` gets the `result` fields named here (its output field by our
 * name). Without one: `provide` answers the target tool's ask of the same name, when its
 * handler asks (late, with the ask's input).
 */
export interface AttachmentManifest {
  name: string
  /** The tool (of another group) whose call carries the attachment. */
  tool: string
  /** The input argument of that tool the value goes in (a string is appended after the caller's own); absent for an answer to an ask. */
  argument?: string
  /** Output fields of the target passed to settle: `{ ourName: "outputField" }`. */
  result?: Record<string, string>
  description: string
}

export type GroupAccess = 'always' | 'default' | 'opt-in' | 'flag-only'

/**
 * A group that is a drop-in for another MCP server (its peer): what a peer client parses is the
 * peer's text, so each tool's textField is the first content item as the peer prints it (after
 * sanitize, scrub and bound) and ag-mcp's trusted summary is a second item, not a wrapper.
 */
export interface PeerManifest {
  /** The peer's serverInfo name, advertised when every enabled group that is not always on names it. */
  name: string
  /** The peer's ttlMs on discover and list results, under the same condition. */
  listTtlMs?: number
  /** The plugin's refusals: isError results (`result`) or JSON-RPC -32000 errors (`json-rpc`), as the peer answers them. */
  failures: 'result' | 'json-rpc'
}

export interface GroupManifest {
  group: string
  plugin: string
  description: string
  access: GroupAccess
  tools: ToolManifest[]
  resources?: ResourceManifest[]
  resourceTemplates?: ResourceTemplateManifest[]
  prompts?: PromptManifest[]
  attachments?: AttachmentManifest[]
  peer?: PeerManifest
}

/**
 * A group as generated/manifests.js bundles it: `tools`, `resources`, `resourceTemplates` and
 * `prompts` are parsed the first time one is read, and `toolNames` lets the registry index the
 * group without that (a process parses only the groups it serves).
 */
export interface BundledGroupManifest extends GroupManifest {
  readonly toolNames: readonly string[]
  /** Each tool's altName by tool name, when any has one (read without parsing the tools). */
  readonly altNames?: Readonly<Record<string, string>>
}

/** A tool with the group it belongs to, as the registry holds it. */
export interface RegisteredTool extends ToolManifest {
  group: string
  plugin: string
  /** The group's peer, when it is a drop-in for one (rendering follows the peer's text). */
  peer?: PeerManifest
}
