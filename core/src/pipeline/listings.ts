// What the lists show (tools/list, resources/list, resources/templates/list, prompts/list) and
// what prompts/get answers: the manifests mapped to the views the MCP layer sends, one mapper
// each. Tools are mapped once per process (their groups are fixed); the rest on each list.
import type { PromptResult, PromptView, ResourceTemplateView, ResourceView, ToolView } from '../mcp/pipeline-api.ts'
import type { PromptManifest, RegisteredTool, ResourceManifest, ResourceTemplateManifest } from '../manifest/types.ts'
import type { Registry } from '../manifest/registry.ts'
import type { Scrubber } from '../safety/scrub.ts'
import { sanitizeText } from '../safety/sanitize.ts'

/**
 * The enabled tools as listed, and those exposed under their altName (no enabled group has a
 * tool of that name): listed, called and named in results by that name; the plugin still sees
 * its own.
 */
export function toolListing(
  registry: Registry,
  enabled: ReadonlySet<string>,
): { views: ToolView[]; shownAs: Map<string, RegisteredTool> } {
  const shownAs = new Map<string, RegisteredTool>()
  const views = registry.tools(enabled).map((t): ToolView => {
    const name = registry.exposedName(t.name, enabled)
    if (name !== t.name) shownAs.set(t.name, { ...t, name })
    return {
      name,
      title: t.title,
      description: t.description,
      inputSchema: t.input,
      outputSchema: t.output,
      annotations: { ...t.annotations },
    }
  })
  return { views, shownAs }
}

export const resourceView = ({ uri, name, title, description, mimeType }: ResourceManifest): ResourceView => ({
  uri,
  name,
  description,
  mimeType,
  ...(title ? { title } : {}),
})

export const resourceTemplateView = ({
  uriTemplate,
  name,
  title,
  description,
  mimeType,
}: ResourceTemplateManifest): ResourceTemplateView => ({
  uriTemplate,
  name,
  description,
  mimeType,
  ...(title ? { title } : {}),
})

export const promptView = (p: PromptManifest): PromptView => ({
  name: p.name,
  description: p.description,
  arguments: (p.arguments ?? []).map((a) => ({
    name: a.name,
    description: a.description,
    required: a.required ?? false,
  })),
  ...(p.title ? { title: p.title } : {}),
})

/** A prompt's messages with `{{name}}` filled from its arguments, cleaned and scrubbed (they are the client's). */
export function fillPrompt(p: PromptManifest, args: Record<string, string>, scrubber: Scrubber): PromptResult {
  const fill = (text: string): string =>
    text.replace(/\{\{([a-z0-9_]+)\}\}/g, (_, k: string) => scrubber.scrub(sanitizeText(args[k] ?? '').text))
  return {
    description: p.description,
    messages: p.messages.map((m) => ({ role: m.role, content: { type: 'text', text: fill(m.text) } })),
  }
}
