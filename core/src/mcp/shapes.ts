// How each revision shapes what the host offers. Pure functions of (era, view).
import type { Era } from './revisions.ts'
import type {
  CallOutcome,
  PromptView,
  ResourceTemplateView,
  ResourceView,
  ServerIdentity,
  ToolView,
} from './pipeline-api.ts'

export function toolShape(era: Era, t: ToolView): Record<string, unknown> {
  if (!era.structured) {
    // 2025-03-26 has no tool title or outputSchema; annotations.title keeps the display name.
    return {
      name: t.name,
      description: t.description,
      inputSchema: t.inputSchema,
      annotations: { title: t.title, ...t.annotations },
    }
  }
  return {
    name: t.name,
    title: t.title,
    description: t.description,
    inputSchema: t.inputSchema,
    outputSchema: t.outputSchema,
    annotations: t.annotations,
  }
}

export function resourceShape(era: Era, r: ResourceView): Record<string, unknown> {
  const out: Record<string, unknown> = { uri: r.uri, name: r.name, description: r.description, mimeType: r.mimeType }
  if (era.structured && r.title !== undefined) out['title'] = r.title
  return out
}

export function resourceTemplateShape(era: Era, r: ResourceTemplateView): Record<string, unknown> {
  const out: Record<string, unknown> = {
    uriTemplate: r.uriTemplate,
    name: r.name,
    description: r.description,
    mimeType: r.mimeType,
  }
  if (era.structured && r.title !== undefined) out['title'] = r.title
  return out
}

export function promptShape(era: Era, p: PromptView): Record<string, unknown> {
  const out: Record<string, unknown> = { name: p.name, description: p.description, arguments: p.arguments }
  if (era.structured && p.title !== undefined) out['title'] = p.title
  return out
}

export function callResultShape(era: Era, o: CallOutcome): Record<string, unknown> {
  const content = [{ type: 'text', text: o.text }]
  if (o.trailer !== undefined) content.push({ type: 'text', text: o.trailer })
  const out: Record<string, unknown> = { content }
  if (era.structured && o.structured !== undefined) out['structuredContent'] = o.structured
  if (o.isError) out['isError'] = true
  if (o.meta !== undefined) out['_meta'] = o.meta
  return out
}

export function implementationShape(era: Era, id: ServerIdentity): Record<string, unknown> {
  return era.structured
    ? { name: id.name, title: id.title, version: id.version }
    : { name: id.name, version: id.version }
}
