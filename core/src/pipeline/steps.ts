// The call pipeline's steps, in order: resolve → admit → validate → policy → attach → invoke →
// check → render. Each takes the call's one state object and returns it (go on) or a refusal
// (stop; render says why). One state object per call, changed in place: a fresh object per
// step cost 2.5 MiB of peak RSS under a burst of calls.
import { protocolError, refusal } from '../errors.ts'
import type { Refusal } from '../errors.ts'
import type { Registry } from '../manifest/registry.ts'
import type { RegisteredTool } from '../manifest/types.ts'
import type { CallOptions, CallOutcome } from '../mcp/pipeline-api.ts'
import type { Logger, Plugin, ServerInfo, ToolArgs, ToolContext, ToolSpec } from '../plugin-api.ts'
import { isPluginFailure } from '../plugin-api.ts'
import { disabledToolMessage } from '../policy/groups.ts'
import type { Scrubber } from '../safety/scrub.ts'
import { sanitizeText, unescapeName } from '../safety/sanitize.ts'
import { ask, attach as attachContributions, settle } from './attachments.ts'
import type { AskEnv, Attached } from './attachments.ts'
import type { PluginSet } from './plugins.ts'
import { checkCallPolicy, scopeRepoFields } from './policy-check.ts'
import type { CallPolicy } from './policy-check.ts'
import { renderPeerFailure, renderRefusal, renderSuccess } from './render.ts'
import type { RenderEnv } from './render.ts'
import { describeErrors, loadValidators } from './validation.ts'
import type { Validate } from './validation.ts'

/** What every step may read: the pipeline's configuration, the same for every call. */
export interface StepEnv extends RenderEnv {
  registry: Registry
  enabled: ReadonlySet<string>
  plugins: PluginSet
  log: Logger
  rateLimit: { take(): { ok: true } | { ok: false; retryAfterMs: number } }
  policy: CallPolicy
  serverInfo: ServerInfo
  /** Default groups that cannot work here: a refusal's --allow suggestion leaves them out. */
  absentGroups: ReadonlyMap<string, string>
  /** Tools exposed under their altName, as shown (see createPipeline). */
  shownAs: ReadonlyMap<string, RegisteredTool>
}

/** Why a call stops: ag-mcp's refusal, and what travels with it untrusted. */
export interface Refused {
  refusal: Refusal
  /** An offending value or an upstream's message: fenced, cleaned, bounded. */
  quoted?: string | undefined
  /** A peer tool's words, shown first as the peer prints them. */
  peerText?: string | undefined
}

export type Next = CallState | Refused
type Step = (e: StepEnv, s: CallState) => Next | Promise<Next>

/** An error code shown as is in a trusted line: a short lowercase identifier (`not_found`). */
const PLAIN_CODE = /^(?=.{1,24}$)[a-z]+(?:_[a-z]+)*$/

/** One call's state, filled in by the steps in turn. */
export class CallState {
  /** The tool as shown: under its altName if it is exposed under one. */
  readonly view: RegisteredTool
  /** The arguments as they will be sent: unescaped names, normalized paths, attachments merged. */
  args: ToolArgs = {}
  validators: { input: Validate; output: Validate } | undefined = undefined
  plugin: Plugin | undefined = undefined
  ctx: ToolCall | undefined = undefined
  attached: Attached[] | undefined = undefined
  data: unknown = undefined
  /** Made when first needed (an attachment or an ask): most calls never need one. */
  private contributors: AskEnv | undefined = undefined

  constructor(
    private readonly env: StepEnv,
    readonly tool: RegisteredTool,
    readonly input: unknown,
    readonly opts: CallOptions,
  ) {
    this.view = env.shownAs.get(tool.name) ?? tool
  }

  /** What contributors (attachments, asks) run with: a context of their own, which asks nothing. */
  askEnv(): AskEnv {
    this.contributors ??= {
      registry: this.env.registry,
      enabled: this.env.enabled,
      plugins: this.env.plugins,
      log: this.env.log,
      context: (l, spec) => new ToolCall(this.opts, this.env.log, l.state, spec, this.env.serverInfo, NO_ASKS),
    }
    return this.contributors
  }

  /** A handler's ask: a provider sees the arguments the call has at that moment. */
  ask(name: string, input: Readonly<Record<string, unknown>>): Promise<unknown> {
    return ask(this.askEnv(), this.tool.name, this.args, name, input)
  }
}

const stop = (r: Refusal, quoted?: string, peerText?: string): Refused => ({ refusal: r, quoted, peerText })

/** resolve: the tool a name calls, or a protocol error (a name that exists nowhere is no refusal). */
export function resolve(e: StepEnv, name: string): RegisteredTool {
  const tool = e.registry.resolve(name, e.enabled)
  if (!tool) throw protocolError('unknown_tool', { name: clip(name, e.scrubber) })
  return tool
}

/** admit: its group is enabled, the rate limit has room, the arguments are an object. */
export function admit(e: StepEnv, s: CallState): Next {
  const tool = s.tool
  const group = e.registry.groups.get(tool.group)
  if (!group) return stop(refusal('group_unknown'))
  if (!e.enabled.has(tool.group)) {
    const explanation = disabledToolMessage(s.view.name, group, e.enabled, e.registry.groups, e.absentGroups)
    return stop(refusal('group_disabled', { group: group.name, explanation }))
  }
  if (group.access === 'flag-only') e.log.warn(`${tool.group} tool called`, { tool: tool.name })
  const slot = e.rateLimit.take()
  if (!slot.ok) return stop(refusal('rate_limited', { retryAfterS: Math.ceil(slot.retryAfterMs / 100) / 10 }))
  const args = s.input
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return stop(refusal('arguments_not_object'))
  s.args = args as ToolArgs
  return s
}

/** validate: the arguments match the input schema; escaped file names come back as the real ones. */
export async function validate(e: StepEnv, s: CallState): Promise<Next> {
  const validators = (await loadValidators(s.tool.group)).validators[s.tool.name]
  if (!validators) return stop(refusal('no_validator'))
  if (!validators.input(s.args)) {
    const peerWords = s.view.peer ? await peerRefusal(e, s.tool, s.args) : undefined
    if (peerWords !== undefined) return stop(refusal('peer_input_invalid'), undefined, peerWords)
    return stop(refusal('input_invalid', { problems: describeErrors(validators.input.errors).join('; ') }))
  }
  s.validators = validators
  // A name ag-mcp showed escaped (a file whose name holds a hidden or control character) is
  // taken back as the real name, before any policy check sees it.
  if (s.tool.nameArgs !== undefined) s.args = unescapeNameArgs(s.tool.nameArgs, s.args)
  return s
}

/** policy: the plugin is ready, and the call keeps to --repo, --write-path and --require-lease. */
export async function policy(e: StepEnv, s: CallState): Promise<Next> {
  const tool = s.tool
  const loaded = await e.plugins.get(tool.plugin).catch((x: unknown) => x)
  if (isPluginFailure(loaded)) return stop(refusal('not_sent', { failure: loaded.code, reason: loaded.message }))
  if (loaded instanceof Error || !loaded || typeof loaded !== 'object') {
    e.log.error('plugin failed to load', {
      plugin: tool.plugin,
      error: loaded instanceof Error ? loaded.message : String(loaded),
    })
    return stop(refusal('plugin_unavailable', { plugin: tool.plugin }))
  }
  const { plugin, state, root } = loaded as { plugin: Plugin; state: unknown; root: string | undefined }
  s.plugin = plugin
  s.ctx = new ToolCall(s.opts, e.log, state, toolSpec(tool), e.serverInfo, s)
  // Nothing to check (no --repo, no paths written): no extra promise on the common path.
  if (e.policy.repoGlobs.length === 0 && !tool.writePathArgs?.length && tool.sourceWriteArg === undefined) return s
  const checked = await checkCallPolicy(e.policy, tool, s.args, plugin, s.ctx, root)
  if ('refusal' in checked) {
    const { rule, reason, value } = checked.refusal
    return stop(refusal('policy_refused', { rule, reason }), value)
  }
  s.args = checked.args
  return s
}

/** attach: other groups' contributions to this call (see attachments.ts); none: no extra work. */
export function attach(e: StepEnv, s: CallState): Next | Promise<Next> {
  if (e.registry.attachments(s.tool.name, e.enabled).length === 0) return s
  const input = (s.validators as { input: Validate }).input
  return attachContributions({ ...s.askEnv(), valid: (a) => input(a) }, s.tool.name, s.args).then((r) => {
    s.args = r.args
    s.attached = r.attached
    return s
  })
}

/** invoke: the plugin's handler; a failure it reports is worded as whose it is. */
export async function invoke(e: StepEnv, s: CallState): Promise<Next> {
  const tool = s.tool
  const handler = s.plugin?.handlers[tool.name] ?? s.plugin?.operation?.run
  if (!handler) return stop(refusal('no_handler', { plugin: tool.plugin }))
  try {
    s.data = await handler(s.args, s.ctx as ToolCall)
    return s
  } catch (x) {
    if (isPluginFailure(x)) {
      // The code may come from the upstream: named in the trusted line only when it is a plain
      // error code; anything else travels with the quoted message.
      const plain = PLAIN_CODE.test(x.code)
      const failure = plain ? x.code : 'an unrecognised error code'
      const shown = s.view.peer ? 'above' : 'quoted'
      // Only a failure the upstream answered is worded as the upstream's; the rest are the plugin's own.
      const r =
        x.origin === 'upstream'
          ? refusal('upstream_failed', { failure, status: x.status, retryAfterS: x.retryAfterS, shown })
          : refusal('plugin_failed', { plugin: tool.plugin, failure, retryAfterS: x.retryAfterS, shown })
      if (s.view.peer) return stop(r, undefined, x.message)
      return stop(r, plain ? x.message : `code ${JSON.stringify(x.code)}: ${x.message}`)
    }
    if (s.opts.signal.aborted) throw x
    e.log.error('handler threw', { tool: tool.name, error: x instanceof Error ? x.message : String(x) })
    return stop(refusal('internal'))
  }
}

/** check: the answer matches the output schema; contributors settle; results outside --repo are cut. */
export async function check(e: StepEnv, s: CallState): Promise<Next> {
  const tool = s.tool
  const output = (s.validators as { output: Validate }).output
  if (!output(s.data)) {
    e.log.error('result does not match the output schema', {
      tool: tool.name,
      problems: describeErrors(output.errors),
    })
    return stop(refusal('output_invalid', { plugin: tool.plugin }))
  }
  if (s.attached !== undefined && s.attached.length > 0) await settle(e, s.attached, s.data)
  if (tool.repoFields !== undefined && e.policy.repoGlobs.length > 0)
    s.data = await scopeRepoFields(e.policy.repoGlobs, tool.repoFields, s.data)
  return s
}

/** The steps after resolve, in order; render is apart (resources/read does not render refusals). */
export const STEPS: readonly Step[] = [admit, validate, policy, attach, invoke, check]

/** render: the result the model sees, or the refusal. */
export function render(e: StepEnv, s: CallState, r: Next): CallOutcome {
  if (r instanceof CallState) return renderSuccess(s.view, r.data, e, s.opts.structured)
  if (r.peerText !== undefined && s.view.peer)
    return renderPeerFailure({ name: s.view.name, peer: s.view.peer }, r.refusal, r.peerText, e)
  return renderRefusal(s.view, r.refusal, r.quoted, e)
}

/** The peer's words for arguments the schema refused, if the tool's plugin has them (never fatal). */
async function peerRefusal(e: StepEnv, tool: RegisteredTool, args: ToolArgs): Promise<string | undefined> {
  const loaded = await e.plugins.get(tool.plugin).catch(() => undefined)
  try {
    return loaded?.plugin.peerRefusal?.(tool.name, args)
  } catch {
    return undefined
  }
}

interface Asker {
  ask(name: string, input: Readonly<Record<string, unknown>>): Promise<unknown>
}
const NO_ASKS: Asker = { ask: async () => undefined }

/** A handler's context; `signal` is read through, so it is made only if the handler looks (see mcp/lazy-abort.ts). */
class ToolCall implements ToolContext {
  constructor(
    private readonly opts: CallOptions,
    readonly log: Logger,
    readonly state: unknown,
    readonly tool: ToolSpec,
    readonly server: ServerInfo,
    private readonly asker: Asker,
  ) {}

  get signal(): AbortSignal {
    return this.opts.signal
  }

  attachment(name: string, input: Readonly<Record<string, unknown>>): Promise<unknown> {
    return this.asker.ask(name, input)
  }
}

/** What a handler may know of its tool, built once per tool (it is the same for every call). */
const specs = new WeakMap<RegisteredTool, ToolSpec>()
function toolSpec(tool: RegisteredTool): ToolSpec {
  let spec = specs.get(tool)
  if (!spec) {
    spec = {
      name: tool.name,
      group: tool.group,
      dataKind: tool.dataKind,
      ...(tool.operation ? { operation: tool.operation } : {}),
      ...(tool.repoArg !== undefined ? { repoArg: tool.repoArg } : {}),
    }
    specs.set(tool, spec)
  }
  return spec
}

/** The tool's `nameArgs` (manifest) with escaped names taken back; the same object if none was escaped. */
function unescapeNameArgs(names: readonly string[], args: ToolArgs): ToolArgs {
  let out: Record<string, unknown> | undefined
  for (const k of names) {
    const v = args[k]
    const back =
      typeof v === 'string'
        ? unescapeName(v)
        : Array.isArray(v)
          ? v.map((x: unknown) => (typeof x === 'string' ? unescapeName(x) : x))
          : v
    if (typeof v === 'string' ? back !== v : Array.isArray(v) && (back as unknown[]).some((x, i) => x !== v[i])) {
      out ??= { ...args }
      out[k] = back
    }
  }
  return out ?? args
}

/** Echoes a client-supplied name safely: cleaned and scrubbed (before the cut: see scrub.ts), and short. */
export function clip(s: string, scrubber: Scrubber): string {
  const t = scrubber.scrub(sanitizeText(s).text)
  return t.length > 80 ? `${t.slice(0, 80)}…` : t
}
