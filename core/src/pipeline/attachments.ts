// Attachments: data one group's plugin contributes to another group's tool call (e.g. staged
// AGIT thoughts travelling as a proposal's `reasoning`). The contributing plugin declares them
// in its manifest (`attachments`) and implements them (definePlugin `attachments`); the core
// asks for the value after the target call passed its policy checks, re-validates the merged
// arguments, and, once the target succeeded, hands the declared result fields to `settle`.
// Late ones (`ask`): when only the target's handler knows what to ask for (the run a passport
// names), it asks the core during its call with an input; the core checks it against the
// tool's manifest `asks`, routes it to the enabled group that answers, and checks the answer.
// An attachment never fails the call it rides on: a contributor that fails is logged and left out.
import type { RegisteredAttachment, Registry } from '../manifest/registry.ts'
import type { AttachmentSupport, Logger, ToolArgs, ToolContext, ToolSpec } from '../plugin-api.ts'
import type { LoadedPlugin, PluginSet } from './plugins.ts'
import { describeErrors, loadValidators } from './validation.ts'

export interface Attached {
  attachment: RegisteredAttachment
  support: AttachmentSupport<unknown>
  ctx: ToolContext
  receipt: unknown
}

export interface AttachEnv {
  registry: Registry
  enabled: ReadonlySet<string>
  plugins: PluginSet
  log: Logger
  /** The context a contributor's provide/settle run with (same signal as the call). */
  context(loaded: LoadedPlugin, spec: ToolSpec): ToolContext
  /** The target tool's input validator: merged arguments must still pass it. */
  valid(args: ToolArgs): boolean
}

/** The call's arguments with every enabled attachment merged in, and what to settle afterwards. */
export async function attach(
  env: AttachEnv,
  tool: string,
  args: ToolArgs,
): Promise<{ args: ToolArgs; attached: Attached[] }> {
  const list = env.registry.attachments(tool, env.enabled)
  if (list.length === 0) return { args, attached: [] }
  let merged: Record<string, unknown> = { ...args }
  const attached: Attached[] = []
  for (const a of list) {
    const argument = a.argument
    if (argument === undefined) continue
    try {
      const loaded = await env.plugins.get(a.plugin)
      const support = loaded.plugin.attachments?.[a.name]
      if (!support) throw new Error(`the ${a.plugin} plugin does not implement attachment ${a.name}`)
      const ctx = env.context(loaded, { name: a.name, group: a.group, dataKind: 'attachment' })
      const got = await support.provide({ tool, args: merged }, ctx)
      if (!got) continue
      const own = merged[argument]
      const value =
        typeof got.value === 'string' && typeof own === 'string' && own !== '' ? `${own}\n\n${got.value}` : got.value
      const next = { ...merged, [argument]: value }
      if (!env.valid(next)) throw new Error(`the value for "${argument}" does not fit ${tool}'s input schema`)
      merged = next
      attached.push({ attachment: a, support, ctx, receipt: got.receipt })
    } catch (e) {
      env.log.warn('attachment left out', { tool, attachment: a.name, error: (e as Error).message })
    }
  }
  return { args: merged, attached }
}

export type AskEnv = Omit<AttachEnv, 'valid'>

/**
 * A handler's ask during its call (ToolContext.attachment): the answer of the enabled group that
 * provides `name` for `tool`, checked against the ask's value schema, or undefined (none
 * enabled, or it failed: logged). An input that fails the ask's schema is the asking plugin's
 * defect: it is logged and nothing is asked.
 */
export async function ask(
  env: AskEnv,
  tool: string,
  args: ToolArgs,
  name: string,
  input: Readonly<Record<string, unknown>>,
): Promise<unknown> {
  const group = env.registry.tool(tool)?.group
  const checks = group === undefined ? undefined : (await loadValidators(group)).asks[`${tool}/${name}`]
  if (!checks) {
    env.log.error('a tool asked for an attachment its manifest does not declare', { tool, attachment: name })
    return undefined
  }
  if (!checks.input(input)) {
    env.log.error('attachment not asked: the input does not fit the ask', {
      tool,
      attachment: name,
      problems: describeErrors(checks.input.errors),
    })
    return undefined
  }
  const a = env.registry.answer(tool, name, env.enabled)
  if (!a) return undefined
  try {
    const loaded = await env.plugins.get(a.plugin)
    const support = loaded.plugin.attachments?.[a.name]
    if (!support) throw new Error(`the ${a.plugin} plugin does not implement attachment ${a.name}`)
    const ctx = env.context(loaded, { name: a.name, group: a.group, dataKind: 'attachment' })
    const got = await support.provide({ tool, args, input }, ctx)
    if (!got) return undefined
    if (!checks.value(got.value))
      throw new Error(`the answer does not fit the ask: ${describeErrors(checks.value.errors).join('; ')}`)
    return got.value
  } catch (e) {
    env.log.warn('attachment left out', { tool, attachment: a.name, error: (e as Error).message })
    return undefined
  }
}

/** After the target succeeded: each contributor learns the declared fields of the result. */
export async function settle(env: { log: Logger }, attached: readonly Attached[], data: unknown): Promise<void> {
  for (const x of attached) {
    if (!x.support.settle) continue
    const out = (typeof data === 'object' && data !== null ? data : {}) as Record<string, unknown>
    const result: Record<string, unknown> = {}
    for (const [ours, field] of Object.entries(x.attachment.result ?? {})) result[ours] = out[field]
    try {
      await x.support.settle(x.receipt, result, x.ctx)
    } catch (e) {
      env.log.warn('attachment settle failed', { attachment: x.attachment.name, error: (e as Error).message })
    }
  }
}
