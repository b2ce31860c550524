// The call pipeline: the one tools/call path every tool of every plugin goes through.
// lookup → enabled? → rate limit → validate input → policy (repo, write paths, lease), all
// before any request leaves the process → plugin handler → validate output → render.
import { INVALID_PARAMS } from '../jsonrpc/message.ts'
import { RpcError } from '../mcp/errors.ts'
import type {
  CallOptions,
  CallOutcome,
  CallPipeline,
  PromptResult,
  ResourceContents,
  ServerIdentity,
  ToolView,
} from '../mcp/pipeline-api.ts'
import type { Registry } from '../manifest/registry.ts'
import type { RegisteredTool } from '../manifest/types.ts'
import type { ServerInfo, Logger, ToolArgs, ToolContext, ToolSpec } from '../plugin-api.ts'
import { isPluginFailure } from '../plugin-api.ts'
import { disabledToolMessage } from '../policy/groups.ts'
import type { Scrubber } from '../safety/scrub.ts'
import { sanitizeText, unescapeName } from '../safety/sanitize.ts'
import { ask, attach, settle } from './attachments.ts'
import type { AskEnv } from './attachments.ts'
import type { LoadedPlugin, PluginSet } from './plugins.ts'
import { checkCallPolicy, scopeRepoFields } from './policy-check.ts'
import type { CallPolicy } from './policy-check.ts'
import { renderError, renderPeerFailure, renderSuccess } from './render.ts'
import type { RenderEnv } from './render.ts'
import { matchTemplate } from './uri-template.ts'
import { describeErrors, loadValidators } from './validation.ts'

/** An error code shown as is in a trusted line: a short lowercase identifier (`not_found`). */
const PLAIN_CODE = /^(?=.{1,24}$)[a-z]+(?:_[a-z]+)*$/
export interface PipelineOptions {
  identity: ServerIdentity
  instructions: string
  registry: Registry
  enabled: ReadonlySet<string>
  plugins: PluginSet
  log: Logger
  scrubber: Scrubber
  maxOutputBytes: number
  rateLimit: { take(): { ok: true } | { ok: false; retryAfterMs: number } }
  policy: CallPolicy
  serverInfo: ServerInfo
}

export function createPipeline(o: PipelineOptions): CallPipeline {
  const env: RenderEnv = { maxOutputBytes: o.maxOutputBytes, scrubber: o.scrubber }
  // A tool exposed under its altName (no enabled group has a tool of that name) is listed,
  // called and named in its results by that name; the plugin still sees its own.
  const shownAs = new Map<string, RegisteredTool>()
  const toolViews: ToolView[] = o.registry.tools(o.enabled).map((t) => {
    const name = o.registry.exposedName(t.name, o.enabled)
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

  // Default groups that cannot work here: the refusal's --allow suggestion leaves them out too.
  const absentGroups = new Map(Object.entries(o.serverInfo.absent ?? {}))

  async function run(tool: RegisteredTool, args: unknown, opts: CallOptions): Promise<CallOutcome> {
    const view = shownAs.get(tool.name) ?? tool
    const group = o.registry.groups.get(tool.group)
    if (!group || !o.enabled.has(tool.group))
      return renderError(
        view,
        `refused: ${group ? disabledToolMessage(view.name, group, o.enabled, o.registry.groups, absentGroups) : 'its group is unknown'}`,
        undefined,
        env,
      )
    if (group.access === 'flag-only') o.log.warn(`${tool.group} tool called`, { tool: tool.name })
    const slot = o.rateLimit.take()
    if (!slot.ok) {
      return renderError(
        view,
        `refused by the rate limit (--rate-limit): too many tool calls; retry in ${Math.ceil(slot.retryAfterMs / 100) / 10} s.`,
        undefined,
        env,
      )
    }
    if (typeof args !== 'object' || args === null || Array.isArray(args))
      return renderError(view, 'refused: "arguments" must be a JSON object.', undefined, env)
    const validators = (await loadValidators(tool.group)).validators[tool.name]
    if (!validators)
      return renderError(
        view,
        'refused: no validator was built for this tool (a build defect; see the log).',
        undefined,
        env,
      )
    if (!validators.input(args)) {
      const problems = describeErrors(validators.input.errors).join('; ')
      const peerWords = view.peer ? await peerRefusal(tool, args as Record<string, unknown>) : undefined
      if (peerWords !== undefined && view.peer)
        return renderPeerFailure(
          { name: view.name, peer: view.peer },
          'refused: its arguments; the reason is above.',
          peerWords,
          env,
        )
      return renderError(view, `refused: the arguments do not match the input schema: ${problems}.`, undefined, env)
    }
    // A name ag-mcp showed escaped (a file whose name holds a hidden or control character)
    // is taken back as the real name, before any policy check sees it.
    const argv = unescapeNameArgs(args as Record<string, unknown>)
    const loaded = await o.plugins.get(tool.plugin).catch((e: unknown) => e)
    if (isPluginFailure(loaded)) return renderError(view, `not sent: ${loaded.message}`, undefined, env)
    if (loaded instanceof Error || !loaded || typeof loaded !== 'object') {
      o.log.error('plugin failed to load', {
        plugin: tool.plugin,
        error: loaded instanceof Error ? loaded.message : String(loaded),
      })
      return renderError(
        view,
        `failed: the ${tool.plugin} plugin could not start (see the ag-mcp log).`,
        undefined,
        env,
      )
    }
    const { plugin, state, root } = loaded as LoadedPlugin
    // Contributors run with a context of their own, which asks nothing (no chains of asks).
    const contributors: AskEnv = {
      registry: o.registry,
      enabled: o.enabled,
      plugins: o.plugins,
      log: o.log,
      context: (l, spec) => new ToolCall(opts, o.log, l.state, spec, o.serverInfo, NO_ASKS),
    }
    // What the handler's asks show a provider: the arguments it was called with (set below).
    let askArgs: ToolArgs = argv
    const ctx = new ToolCall(opts, o.log, state, toolSpec(tool), o.serverInfo, (name, input) =>
      ask(contributors, tool.name, askArgs, name, input),
    )
    // Nothing to check (no --repo, no paths written): no extra promise on the common path.
    const policy =
      o.policy.repoGlobs.length === 0 && !tool.writePathArgs?.length && tool.sourceWriteArg === undefined
        ? { args: argv }
        : await checkCallPolicy(o.policy, tool, argv, plugin, ctx, root)
    if ('refusal' in policy)
      return renderError(view, `refused by ${policy.refusal.rule}: ${policy.refusal.reason}`, policy.refusal.value, env)
    const handler = plugin.handlers[tool.name] ?? plugin.operation?.run
    if (!handler) return renderError(view, `failed: the ${tool.plugin} plugin has no handler for it.`, undefined, env)
    // Other groups' contributions to this call (see attachments.ts); none: no extra work.
    const { args: callArgs, attached } = await attach(
      { ...contributors, valid: (a) => validators.input(a) },
      tool.name,
      policy.args,
    )
    askArgs = callArgs
    let data: unknown
    try {
      data = await handler(callArgs, ctx)
    } catch (e) {
      if (isPluginFailure(e)) {
        // Only a failure the upstream answered is worded as the upstream's; the rest are the plugin's own.
        const who =
          e.origin === 'upstream'
            ? `the upstream answered${typeof e.status === 'number' ? ` ${e.status}` : ''}`
            : `the ${tool.plugin} plugin reported`
        const retry = typeof e.retryAfterS === 'number' ? ` Retry after ${e.retryAfterS} s.` : ''
        // The code may come from the upstream: named in the trusted line only when it is a plain
        // error code; anything else travels with the quoted message.
        const plain = PLAIN_CODE.test(e.code)
        if (view.peer)
          return renderPeerFailure(
            { name: view.name, peer: view.peer },
            `failed: ${who} ${plain ? e.code : 'an unrecognised error code'}.${retry} Its message is above.`,
            e.message,
            env,
          )
        return renderError(
          view,
          `failed: ${who} ${plain ? e.code : 'an unrecognised error code'}.${retry} Its message, quoted:`,
          plain ? e.message : `code ${JSON.stringify(e.code)}: ${e.message}`,
          env,
        )
      }
      if (opts.signal.aborted) throw e
      o.log.error('handler threw', { tool: tool.name, error: e instanceof Error ? e.message : String(e) })
      return renderError(view, 'failed inside ag-mcp (see its log); nothing more is known.', undefined, env)
    }
    if (!validators.output(data)) {
      o.log.error('result does not match the output schema', {
        tool: tool.name,
        problems: describeErrors(validators.output.errors),
      })
      return renderError(
        view,
        `failed: the ${tool.plugin} plugin's answer did not have the expected shape, so it is not shown (see the ag-mcp log).`,
        undefined,
        env,
      )
    }
    if (attached.length > 0) await settle(o, attached, data)
    if (tool.repoFields !== undefined && o.policy.repoGlobs.length > 0)
      data = await scopeRepoFields(o.policy.repoGlobs, tool.repoFields, data)
    return renderSuccess(view, data, env, opts.structured)
  }

  /** The peer's words for arguments the schema refused, if the tool's plugin has them (never fatal). */
  async function peerRefusal(tool: RegisteredTool, args: Record<string, unknown>): Promise<string | undefined> {
    const loaded = await o.plugins.get(tool.plugin).catch(() => undefined)
    try {
      return loaded?.plugin.peerRefusal?.(tool.name, args)
    } catch {
      return undefined
    }
  }

  async function call(name: string, args: unknown, opts: CallOptions): Promise<CallOutcome> {
    const tool = o.registry.resolve(name, o.enabled)
    if (!tool)
      throw new RpcError(
        INVALID_PARAMS,
        `Invalid params: unknown tool "${clip(name, o.scrubber)}"; tools/list shows the tools this server offers`,
      )
    const t0 = performance.now()
    let outcome = 'error'
    try {
      const result = await run(tool, args, opts)
      outcome = result.isError ? 'refused-or-failed' : 'ok'
      return result
    } catch (e) {
      outcome = opts.signal.aborted ? 'cancelled' : 'error'
      throw e
    } finally {
      o.log.info('tool call', { tool: tool.name, group: tool.group, ms: Math.round(performance.now() - t0), outcome })
    }
  }

  return {
    identity: o.identity,
    instructions: o.instructions,
    tools: () => toolViews,
    resources: () =>
      o.registry.resources(o.enabled).map(({ uri, name, title, description, mimeType }) => ({
        uri,
        name,
        description,
        mimeType,
        ...(title ? { title } : {}),
      })),
    resourceTemplates: () =>
      o.registry.resourceTemplates(o.enabled).map(({ uriTemplate, name, title, description, mimeType }) => ({
        uriTemplate,
        name,
        description,
        mimeType,
        ...(title ? { title } : {}),
      })),
    prompts: () =>
      o.registry.prompts(o.enabled).map((p) => ({
        name: p.name,
        description: p.description,
        arguments: (p.arguments ?? []).map((a) => ({
          name: a.name,
          description: a.description,
          required: a.required ?? false,
        })),
        ...(p.title ? { title: p.title } : {}),
      })),
    callTool: call,
    async readResource(uri: string, opts: CallOptions): Promise<ResourceContents[]> {
      for (const r of o.registry.resources(o.enabled)) {
        if (r.uri === uri)
          return resourceContents(uri, r.mimeType, await call(r.tool, { ...(r.arguments ?? {}) }, opts))
      }
      for (const t of o.registry.resourceTemplates(o.enabled)) {
        const vars = matchTemplate(t.uriTemplate, uri)
        if (vars)
          return resourceContents(uri, t.mimeType, await call(t.tool, { ...(t.arguments ?? {}), ...vars }, opts))
      }
      throw new RpcError(
        INVALID_PARAMS,
        `Invalid params: no resource matches "${clip(uri, o.scrubber)}"; resources/list and resources/templates/list show what can be read`,
      )
    },
    getPrompt(name: string, args: Record<string, string>): PromptResult {
      const p = o.registry.prompts(o.enabled).find((x) => x.name === name)
      if (!p) throw new RpcError(INVALID_PARAMS, `Invalid params: unknown prompt "${clip(name, o.scrubber)}"`)
      for (const a of p.arguments ?? []) {
        if (a.required && (args[a.name] === undefined || args[a.name] === ''))
          throw new RpcError(INVALID_PARAMS, `Invalid params: prompt ${p.name} needs argument "${a.name}"`)
      }
      const fill = (text: string): string =>
        text.replace(/\{\{([a-z0-9_]+)\}\}/g, (_, k: string) => o.scrubber.scrub(sanitizeText(args[k] ?? '').text))
      return {
        description: p.description,
        messages: p.messages.map((m) => ({ role: m.role, content: { type: 'text', text: fill(m.text) } })),
      }
    },
  }
}

type Asker = (name: string, input: Readonly<Record<string, unknown>>) => Promise<unknown>
const NO_ASKS: Asker = async () => undefined

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
    return this.asker(name, input)
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

function resourceContents(uri: string, mimeType: string, outcome: CallOutcome): ResourceContents[] {
  if (outcome.isError)
    throw new RpcError(
      INVALID_PARAMS,
      `Invalid params: ${outcome.text.split('\n')[0] ?? 'the resource could not be read'}`,
    )
  return [{ uri, mimeType, text: outcome.text }]
}

/** Echoes a client-supplied name safely: cleaned and scrubbed (before the cut: see scrub.ts), and short. */
function clip(s: string, scrubber: Scrubber): string {
  const t = scrubber.scrub(sanitizeText(s).text)
  return t.length > 80 ? `${t.slice(0, 80)}…` : t
}

/** Arguments that name files: where an escaped name (`\u{202e}`) from a listing comes back. */
const NAME_ARGS = ['path', 'paths', 'from', 'to'] as const

function unescapeNameArgs(args: Record<string, unknown>): Record<string, unknown> {
  let out: Record<string, unknown> | undefined
  for (const k of NAME_ARGS) {
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
