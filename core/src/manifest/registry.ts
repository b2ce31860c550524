// Every tool, resource and prompt the bundled manifests declare, in a deterministic order,
// and the subset the operator enabled. Built once at start-up from data; no tool is special.
import type {
  AttachmentManifest,
  GroupAccess,
  GroupManifest,
  PromptManifest,
  RegisteredTool,
  ResourceManifest,
  ResourceTemplateManifest,
} from './types.ts'

export interface GroupInfo {
  name: string
  plugin: string
  description: string
  access: GroupAccess
  tools: readonly string[]
}

export interface RegisteredAttachment extends AttachmentManifest {
  group: string
  plugin: string
}

const NONE: readonly RegisteredAttachment[] = []

export class Registry {
  readonly groups: ReadonlyMap<string, GroupInfo>
  private readonly toolsByName = new Map<string, RegisteredTool>()
  private readonly ordered: RegisteredTool[] = []
  private readonly resourcesList: (ResourceManifest & { group: string })[] = []
  private readonly templatesList: (ResourceTemplateManifest & { group: string })[] = []
  private readonly promptsList: (PromptManifest & { group: string })[] = []
  private readonly attachmentsByTool = new Map<string, RegisteredAttachment[]>()

  constructor(manifests: readonly GroupManifest[]) {
    const groups = new Map<string, GroupInfo>()
    for (const m of manifests) {
      groups.set(m.group, {
        name: m.group,
        plugin: m.plugin,
        description: m.description,
        access: m.access,
        tools: m.tools.map((t) => t.name),
      })
      for (const t of m.tools) {
        const tool: RegisteredTool = { ...t, group: m.group, plugin: m.plugin }
        this.toolsByName.set(t.name, tool)
        this.ordered.push(tool)
      }
      for (const r of m.resources ?? []) this.resourcesList.push({ ...r, group: m.group })
      for (const r of m.resourceTemplates ?? []) this.templatesList.push({ ...r, group: m.group })
      for (const p of m.prompts ?? []) this.promptsList.push({ ...p, group: m.group })
      for (const a of m.attachments ?? []) {
        const list = this.attachmentsByTool.get(a.tool) ?? []
        list.push({ ...a, group: m.group, plugin: m.plugin })
        this.attachmentsByTool.set(a.tool, list)
      }
    }
    this.groups = groups
  }

  /** Attachments other enabled groups contribute to the arguments of calls of `tool`. */
  attachments(tool: string, enabled: ReadonlySet<string>): readonly RegisteredAttachment[] {
    const list = this.attachmentsByTool.get(tool)
    return list ? list.filter((a) => a.argument !== undefined && enabled.has(a.group)) : NONE
  }

  /** The enabled group's attachment that answers `tool`'s ask `name`, if any (at most one: checked by the build). */
  answer(tool: string, name: string, enabled: ReadonlySet<string>): RegisteredAttachment | undefined {
    return this.attachmentsByTool
      .get(tool)
      ?.find((a) => a.argument === undefined && a.name === name && enabled.has(a.group))
  }

  tool(name: string): RegisteredTool | undefined {
    return this.toolsByName.get(name)
  }

  /** Tools of the enabled groups, in manifest order. */
  tools(enabled: ReadonlySet<string>): RegisteredTool[] {
    return this.ordered.filter((t) => enabled.has(t.group))
  }

  resources(enabled: ReadonlySet<string>): (ResourceManifest & { group: string })[] {
    return this.resourcesList.filter((r) => enabled.has(r.group))
  }

  resourceTemplates(enabled: ReadonlySet<string>): (ResourceTemplateManifest & { group: string })[] {
    return this.templatesList.filter((r) => enabled.has(r.group))
  }

  prompts(enabled: ReadonlySet<string>): (PromptManifest & { group: string })[] {
    return this.promptsList.filter((p) => enabled.has(p.group))
  }
}
