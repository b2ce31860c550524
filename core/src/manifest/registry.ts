// Every tool, resource and prompt the bundled manifests declare, in a deterministic order,
// and the subset the operator enabled. Built once at start-up from data; no tool is special.
import type {
  AttachmentManifest,
  BundledGroupManifest,
  GroupAccess,
  GroupManifest,
  PeerManifest,
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
  peer?: PeerManifest
}

export interface RegisteredAttachment extends AttachmentManifest {
  group: string
  plugin: string
}

const NONE: readonly RegisteredAttachment[] = []

interface GroupParts {
  resources: (ResourceManifest & { group: string })[]
  templates: (ResourceTemplateManifest & { group: string })[]
  prompts: (PromptManifest & { group: string })[]
}

export class Registry {
  readonly groups: ReadonlyMap<string, GroupInfo>
  /** Every group in manifest order; a group's tools, resources and prompts are read on first use. */
  private readonly manifests: readonly GroupManifest[]
  private readonly groupOfTool = new Map<string, GroupManifest>()
  private readonly toolsOf = new Map<GroupManifest, Map<string, RegisteredTool>>()
  private readonly partsOf = new Map<GroupManifest, GroupParts>()
  /** A tool's altName, and back (known without parsing a group's tools). */
  private readonly altOf = new Map<string, string>()
  private readonly ownerOfAlt = new Map<string, string>()
  private readonly attachmentsByTool = new Map<string, RegisteredAttachment[]>()

  constructor(manifests: readonly (GroupManifest | BundledGroupManifest)[]) {
    const groups = new Map<string, GroupInfo>()
    for (const m of manifests) {
      const tools = 'toolNames' in m ? m.toolNames : m.tools.map((t) => t.name)
      groups.set(m.group, {
        name: m.group,
        plugin: m.plugin,
        description: m.description,
        access: m.access,
        tools,
        ...(m.peer ? { peer: m.peer } : {}),
      })
      for (const name of tools) this.groupOfTool.set(name, m)
      const alts =
        'toolNames' in m
          ? Object.entries(m.altNames ?? {})
          : m.tools.flatMap((t) => (t.altName !== undefined ? [[t.name, t.altName] as const] : []))
      for (const [name, alt] of alts) {
        this.altOf.set(name, alt)
        this.ownerOfAlt.set(alt, name)
      }
      for (const a of m.attachments ?? []) {
        const list = this.attachmentsByTool.get(a.tool) ?? []
        list.push({ ...a, group: m.group, plugin: m.plugin })
        this.attachmentsByTool.set(a.tool, list)
      }
    }
    this.groups = groups
    this.manifests = manifests
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

  /** Any bundled tool, enabled or not (to say why a disabled one is refused). */
  tool(name: string): RegisteredTool | undefined {
    const m = this.groupOfTool.get(name)
    return m ? this.registered(m).get(name) : undefined
  }

  /**
   * The name a tool is exposed under with these groups enabled: its altName when no enabled
   * group has a tool of that name, else its own. Fixed for a process (its groups are).
   */
  exposedName(name: string, enabled: ReadonlySet<string>): string {
    const alt = this.altOf.get(name)
    if (alt === undefined) return name
    const holder = this.groupOfTool.get(alt)
    return holder && enabled.has(holder.group) ? name : alt
  }

  /**
   * The tool a call names: an enabled tool exposed under that name (its altName) first, else
   * the tool of that name (a tool stays callable by its own name when exposed under another).
   */
  resolve(name: string, enabled: ReadonlySet<string>): RegisteredTool | undefined {
    const own = this.ownerOfAlt.get(name)
    const m = own === undefined ? undefined : this.groupOfTool.get(own)
    if (own !== undefined && m && enabled.has(m.group) && this.exposedName(own, enabled) === name) return this.tool(own)
    return this.tool(name)
  }

  /** The enabled groups' tools, in manifest order. */
  tools(enabled: ReadonlySet<string>): RegisteredTool[] {
    return this.enabledGroups(enabled).flatMap((m) => [...this.registered(m).values()])
  }

  resources(enabled: ReadonlySet<string>): (ResourceManifest & { group: string })[] {
    return this.enabledGroups(enabled).flatMap((m) => this.parts(m).resources)
  }

  resourceTemplates(enabled: ReadonlySet<string>): (ResourceTemplateManifest & { group: string })[] {
    return this.enabledGroups(enabled).flatMap((m) => this.parts(m).templates)
  }

  prompts(enabled: ReadonlySet<string>): (PromptManifest & { group: string })[] {
    return this.enabledGroups(enabled).flatMap((m) => this.parts(m).prompts)
  }

  /**
   * The peer the enabled groups stand in for: one named by every enabled group that is not
   * always on (the core's own), else none. A process has one serverInfo, so a mix has none.
   */
  peerOf(enabled: ReadonlySet<string>): PeerManifest | undefined {
    const own = [...enabled].map((g) => this.groups.get(g)).filter((g) => g !== undefined && g.access !== 'always')
    const first = own[0]?.peer
    return first && own.every((g) => g?.peer?.name === first.name) ? first : undefined
  }

  private enabledGroups(enabled: ReadonlySet<string>): GroupManifest[] {
    return this.manifests.filter((m) => enabled.has(m.group))
  }

  /** A group's resources, templates and prompts with their group, built once (read per request). */
  private parts(m: GroupManifest): GroupParts {
    let parts = this.partsOf.get(m)
    if (!parts) {
      const group = m.group
      parts = {
        resources: (m.resources ?? []).map((r) => ({ ...r, group })),
        templates: (m.resourceTemplates ?? []).map((r) => ({ ...r, group })),
        prompts: (m.prompts ?? []).map((p) => ({ ...p, group })),
      }
      this.partsOf.set(m, parts)
    }
    return parts
  }

  private registered(m: GroupManifest): Map<string, RegisteredTool> {
    let tools = this.toolsOf.get(m)
    if (!tools) {
      const peer = m.peer ? { peer: m.peer } : {}
      tools = new Map(m.tools.map((t) => [t.name, { ...t, group: m.group, plugin: m.plugin, ...peer }]))
      this.toolsOf.set(m, tools)
    }
    return tools
  }
}
