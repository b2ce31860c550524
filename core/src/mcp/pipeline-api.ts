// What the protocol layer needs from the call pipeline: era-neutral views and calls. The pipeline knows
// manifests, policy and plugins; this layer knows only how each MCP revision shapes them.
import type { RequestId } from '../jsonrpc/message.ts'

export interface ServerIdentity {
  name: string
  title: string
  version: string
}

export interface ToolView {
  name: string
  title: string
  description: string
  inputSchema: Record<string, unknown>
  outputSchema: Record<string, unknown>
  annotations: Record<string, boolean>
}

export interface ResourceView {
  uri: string
  name: string
  title?: string
  description: string
  mimeType: string
}

export interface ResourceTemplateView {
  uriTemplate: string
  name: string
  title?: string
  description: string
  mimeType: string
}

export interface PromptView {
  name: string
  title?: string
  description: string
  arguments: { name: string; description: string; required: boolean }[]
}

export interface CallOptions {
  /** Made on first access (see lazy-abort.ts): read it only when the work can be cancelled. */
  readonly signal: AbortSignal
  /** The era can carry structuredContent (every revision but 2025-03-26). */
  structured: boolean
  requestId: RequestId
}

export interface CallOutcome {
  /** The first content item. */
  text: string
  /** A second text item after it (a peer group's trusted summary), when there is one. */
  trailer?: string
  structured?: Record<string, unknown>
  /** Entries of the result's `_meta` (the modern era adds its own beside them). */
  meta?: Record<string, unknown>
  isError: boolean
}

export interface ResourceContents {
  uri: string
  mimeType: string
  text: string
}

export interface PromptResult {
  description: string
  messages: { role: 'user' | 'assistant'; content: { type: 'text'; text: string } }[]
}

export interface CallPipeline {
  identity: ServerIdentity
  instructions: string
  tools(): readonly ToolView[]
  resources(): readonly ResourceView[]
  resourceTemplates(): readonly ResourceTemplateView[]
  prompts(): readonly PromptView[]
  /** Throws RpcError(-32602) for a tool name that exists nowhere; refusals are outcomes. */
  callTool(name: string, args: unknown, opts: CallOptions): Promise<CallOutcome>
  /** Throws RpcError(-32602) for an unknown or disabled resource URI. */
  readResource(uri: string, opts: CallOptions): Promise<ResourceContents[]>
  /** Throws RpcError(-32602) for an unknown prompt or missing required arguments. */
  getPrompt(name: string, args: Record<string, string>): PromptResult
}
