// The manifest format (manifests/manifest.schema.json is the truth; these types mirror it).
import type { Operation } from '../plugin-api.ts'

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
  title: string
  description: string
  annotations: ToolAnnotations
  input: ObjectSchema
  output: ObjectSchema
  dataKind: string
  textField?: string
  repoArg?: string
  writePathArgs?: string[]
  runArg?: string
  leaseArg?: string
  operation?: Operation
}

export interface ResourceManifest {
  uri: string
  name: string
  title?: string
  description: string
  mimeType: string
  tool: string
  arguments?: Record<string, unknown>
}

export interface ResourceTemplateManifest {
  uriTemplate: string
  name: string
  title?: string
  description: string
  mimeType: string
  tool: string
  arguments?: Record<string, unknown>
}

export interface PromptManifest {
  name: string
  title?: string
  description: string
  arguments?: { name: string; description: string; required?: boolean }[]
  messages: { role: 'user' | 'assistant'; text: string }[]
}

export type GroupAccess = 'always' | 'default' | 'opt-in' | 'flag-only'

export interface GroupManifest {
  group: string
  plugin: string
  description: string
  access: GroupAccess
  tools: ToolManifest[]
  resources?: ResourceManifest[]
  resourceTemplates?: ResourceTemplateManifest[]
  prompts?: PromptManifest[]
}

/** A tool with the group it belongs to, as the registry holds it. */
export interface RegisteredTool extends ToolManifest {
  group: string
  plugin: string
}
