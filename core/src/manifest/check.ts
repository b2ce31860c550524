// Rules a set of manifests must satisfy beyond the JSON Schema. Run by build.mjs (a violation
// fails the build) and by a test, so a bad manifest never reaches a host application.
import type { GroupManifest, JsonSchema } from './types.ts'

export const NAME_PATTERN = /^[a-z][a-z0-9_]{0,63}$/
/**
 * Input and output property names: NAME_PATTERN, or lower camelCase. Groups that are
 * compatible with another tool's public surface keep its parameter names (the continuity
 * groups take Agentpack's `writeScope`, `nextActions`, … so its agent instructions keep
 * working); every major host accepts either form.
 */
export const PROPERTY_PATTERN = /^[a-z][A-Za-z0-9_]{0,63}$/

/**
 * Plugins as the build sees them: the handler names each one implements and, for a plugin with a
 * generic executor, its check of a tool's `operation` block (its schema and its own rules).
 */
export type PluginCatalog = Record<
  string,
  {
    handlers: readonly string[]
    checkOperation?: (operation: unknown, inputProperties: readonly string[]) => string[]
    /** Names of the attachments the plugin implements. */
    attachments?: readonly string[]
  }
>

export function checkManifests(manifests: readonly GroupManifest[], plugins: PluginCatalog): string[] {
  const problems: string[] = []
  const groups = new Set<string>()
  const tools = new Map<string, string>()
  const prompts = new Set<string>()
  for (const m of manifests) {
    const where = `manifest ${m.group}`
    if (groups.has(m.group)) problems.push(`${where}: group "${m.group}" is declared twice`)
    groups.add(m.group)
    const plugin = plugins[m.plugin]
    if (!plugin)
      problems.push(`${where}: plugin "${m.plugin}" does not exist (known: ${Object.keys(plugins).sort().join(', ')})`)
    for (const tool of m.tools) {
      const at = `${where}, tool ${tool.name}`
      if (!NAME_PATTERN.test(tool.name)) problems.push(`${at}: name must match ${NAME_PATTERN}`)
      const prior = tools.get(tool.name)
      if (prior !== undefined) problems.push(`${at}: name already used in group "${prior}"`)
      tools.set(tool.name, m.group)
      problems.push(...checkTool(m, tool, plugin, at))
    }
    for (const r of [...(m.resources ?? []), ...(m.resourceTemplates ?? [])]) {
      if (!m.tools.some((t) => t.name === r.tool))
        problems.push(`${where}, resource ${r.name}: tool "${r.tool}" is not in this group`)
    }
    problems.push(...checkPrompts(m, prompts))
  }
  const allTools = manifests.flatMap((m) => m.tools.map((t) => ({ group: m.group, tool: t })))
  problems.push(
    ...checkPeers(manifests),
    ...checkAltNames(allTools),
    ...checkAttachments(manifests, plugins, allTools),
    ...checkPluginsServe(manifests, plugins),
  )
  return problems
}

type ToolOf = GroupManifest['tools'][number]
type PluginEntry = PluginCatalog[string]
type GroupTool = { group: string; tool: ToolOf }

/** One tool's own rules: its schemas, the arguments and fields it names, its hints and its handler. */
function checkTool(m: GroupManifest, tool: ToolOf, plugin: PluginEntry | undefined, at: string): string[] {
  const problems: string[] = []
  for (const [label, schema] of [
    ['input', tool.input],
    ['output', tool.output],
  ] as const) {
    problems.push(...checkRootSchema(schema, `${at}, ${label} schema`))
  }
  for (const arg of [tool.repoArg, tool.runArg, tool.leaseArg, tool.sourceWriteArg, ...(tool.writePathArgs ?? [])]) {
    if (arg !== undefined && !(arg in tool.input.properties))
      problems.push(`${at}: "${arg}" is named for policy but is not an input property`)
  }
  for (const arg of tool.nameArgs ?? []) {
    if (!isNameArg(tool.input.properties[arg]))
      problems.push(`${at}: nameArg "${arg}" must be an input property of type string or array of strings`)
  }
  for (const field of tool.repoFields ?? []) {
    if (!(field in tool.output.properties)) problems.push(`${at}: repoField "${field}" is not an output property`)
  }
  const asked = new Set<string>()
  for (const ask of tool.asks ?? []) {
    if (!NAME_PATTERN.test(ask.name)) problems.push(`${at}, ask ${ask.name}: name must match ${NAME_PATTERN}`)
    if (asked.has(ask.name)) problems.push(`${at}, ask ${ask.name}: declared twice`)
    asked.add(ask.name)
    problems.push(...checkRootSchema(ask.input, `${at}, ask ${ask.name}, input schema`))
    problems.push(...checkRootSchema(ask.value, `${at}, ask ${ask.name}, value schema`))
  }
  if (tool.textField !== undefined && !(tool.textField in tool.output.properties)) {
    problems.push(`${at}: textField "${tool.textField}" is not an output property`)
  }
  // A peer group's first content item is the text: every result must have one.
  if (m.peer && (tool.textField === undefined || !(tool.output.required ?? []).includes(tool.textField)))
    problems.push(`${at}: a tool of a peer group needs a textField that its output requires`)
  for (const [key, field] of Object.entries(tool.resultMeta ?? {})) {
    if (!(field in tool.output.properties))
      problems.push(`${at}: resultMeta "${key}" names "${field}", which is not an output property`)
  }
  const a = tool.annotations as unknown as Record<string, unknown> | undefined
  for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint']) {
    if (typeof a?.[hint] !== 'boolean') problems.push(`${at}: annotation ${hint} must be set explicitly`)
  }
  if (tool.annotations.readOnlyHint && tool.annotations.destructiveHint)
    problems.push(`${at}: a read-only tool cannot be destructive`)
  if (plugin && !plugin.handlers.includes(tool.name) && !(tool.operation && plugin.checkOperation)) {
    problems.push(
      `${at}: plugin "${m.plugin}" has no handler for it${tool.operation ? ' and no generic operation executor' : ' and the tool declares no operation'}`,
    )
  }
  if (tool.operation !== undefined && plugin) {
    if (!plugin.checkOperation)
      problems.push(`${at}: declares an operation, but plugin "${m.plugin}" has no operation executor`)
    else
      for (const p of plugin.checkOperation(tool.operation, Object.keys(tool.input.properties)))
        problems.push(`${at}: ${p}`)
  }
  return problems
}

/** A group's prompts: names unique across groups (`prompts`: those seen so far), every `{{placeholder}}` a declared argument. */
function checkPrompts(m: GroupManifest, prompts: Set<string>): string[] {
  const problems: string[] = []
  const where = `manifest ${m.group}`
  for (const p of m.prompts ?? []) {
    if (!NAME_PATTERN.test(p.name)) problems.push(`${where}, prompt ${p.name}: name must match ${NAME_PATTERN}`)
    if (prompts.has(p.name)) problems.push(`${where}, prompt ${p.name}: name already used`)
    prompts.add(p.name)
    const declared = new Set((p.arguments ?? []).map((x) => x.name))
    for (const msg of p.messages) {
      for (const [, v] of msg.text.matchAll(/\{\{([a-z0-9_]+)\}\}/g)) {
        if (v !== undefined && !declared.has(v))
          problems.push(`${where}, prompt ${p.name}: {{${v}}} is not a declared argument`)
      }
    }
  }
  return problems
}

/** An altName is another group's tool name, and only one tool's. */
function checkAltNames(allTools: readonly GroupTool[]): string[] {
  const problems: string[] = []
  const altNames = new Set<string>()
  for (const { group, tool } of allTools) {
    if (tool.altName === undefined) continue
    const at = `manifest ${group}, tool ${tool.name}: altName "${tool.altName}"`
    const holder = allTools.find((x) => x.tool.name === tool.altName)
    // Only another group's name: a free name would simply be the tool's name.
    if (!holder) problems.push(`${at} is no tool's name (name the tool so instead)`)
    else if (holder.group === group) problems.push(`${at} is a tool of the same group`)
    if (altNames.has(tool.altName)) problems.push(`${at} is another tool's altName too`)
    altNames.add(tool.altName)
  }
  return problems
}

/** Attachments name another group's tool and its argument, an ask it declares, or fields it answers; their plugin implements them. */
function checkAttachments(
  manifests: readonly GroupManifest[],
  plugins: PluginCatalog,
  allTools: readonly GroupTool[],
): string[] {
  const problems: string[] = []
  const answered = new Map<string, string>()
  for (const m of manifests) {
    for (const a of m.attachments ?? []) {
      const at = `manifest ${m.group}, attachment ${a.name}`
      const target = allTools.find((x) => x.tool.name === a.tool)
      if (!target) problems.push(`${at}: tool "${a.tool}" does not exist`)
      else {
        if (target.group === m.group) problems.push(`${at}: attachments are for another group's tools`)
        if (a.argument === undefined) {
          // An answer to an ask: the target must ask for it, and one group answers each ask.
          if (!(target.tool.asks ?? []).some((x) => x.name === a.name))
            problems.push(`${at}: ${a.tool} has no ask "${a.name}" (give an argument, or declare the ask on ${a.tool})`)
          if (a.result !== undefined) problems.push(`${at}: an answer to an ask has no result to settle`)
          const key = `${a.tool}/${a.name}`
          const prior = answered.get(key)
          if (prior !== undefined)
            problems.push(`${at}: ${a.tool}'s ask "${a.name}" is already answered by group "${prior}"`)
          answered.set(key, m.group)
        } else if (!(a.argument in target.tool.input.properties))
          problems.push(`${at}: "${a.argument}" is not an input property of ${a.tool}`)
        for (const field of Object.values(a.result ?? {}))
          if (!(field in target.tool.output.properties))
            problems.push(`${at}: result field "${field}" is not an output property of ${a.tool}`)
      }
      const plugin = plugins[m.plugin]
      if (plugin && !(plugin.attachments ?? []).includes(a.name))
        problems.push(`${at}: plugin "${m.plugin}" does not implement it (definePlugin attachments)`)
    }
  }
  return problems
}

/** Every attachment and handler a plugin implements serves a manifest naming that plugin. */
function checkPluginsServe(manifests: readonly GroupManifest[], plugins: PluginCatalog): string[] {
  const problems: string[] = []
  for (const [name, p] of Object.entries(plugins)) {
    for (const a of p.attachments ?? []) {
      if (!manifests.some((m) => m.plugin === name && (m.attachments ?? []).some((x) => x.name === a)))
        problems.push(`plugin ${name}: attachment "${a}" is declared by no manifest naming this plugin`)
    }
    for (const h of p.handlers) {
      const m = manifests.find((x) => x.plugin === name && x.tools.some((t) => t.name === h))
      if (!m) problems.push(`plugin ${name}: handler "${h}" serves no tool of a manifest naming this plugin`)
    }
  }
  return problems
}

function checkRootSchema(schema: JsonSchema, at: string): string[] {
  const out: string[] = []
  if (schema['type'] !== 'object') out.push(`${at}: root must be type "object"`)
  for (const k of ['oneOf', 'anyOf', 'allOf', 'not'])
    if (k in schema) out.push(`${at}: root must not use ${k} (host applications reject it)`)
  if (containsKey(schema, '$ref'))
    out.push(`${at}: must not use $ref (inline the schema; not every host application resolves references)`)
  const props = schema['properties']
  if (props && typeof props === 'object') {
    for (const key of Object.keys(props))
      if (!PROPERTY_PATTERN.test(key)) out.push(`${at}: property "${key}" must match ${PROPERTY_PATTERN}`)
  }
  for (const r of (schema['required'] as string[] | undefined) ?? []) {
    if (!props || !(r in (props as object))) out.push(`${at}: required "${r}" is not a property`)
  }
  return out
}

function containsKey(value: unknown, key: string): boolean {
  if (Array.isArray(value)) return value.some((v) => containsKey(v, key))
  if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) if (k === key || containsKey(v, key)) return true
  }
  return false
}

/** Groups naming one peer advertise one identity: they must agree on what it says. */
function checkPeers(manifests: readonly GroupManifest[]): string[] {
  const problems: string[] = []
  const seen = new Map<string, { group: string; listTtlMs: number | undefined }>()
  for (const m of manifests) {
    if (!m.peer) continue
    const prior = seen.get(m.peer.name)
    if (prior && prior.listTtlMs !== m.peer.listTtlMs)
      problems.push(`manifest ${m.group}: peer "${m.peer.name}" has another listTtlMs in group "${prior.group}"`)
    seen.set(m.peer.name, { group: m.group, listTtlMs: m.peer.listTtlMs })
  }
  return problems
}

/** A file name argument: a string, or an array of strings. */
function isNameArg(schema: unknown): boolean {
  if (typeof schema !== 'object' || schema === null) return false
  const s = schema as { type?: unknown; items?: { type?: unknown } }
  return s.type === 'string' || (s.type === 'array' && s.items?.type === 'string')
}
