// The call pipeline: the one tools/call path every tool of every plugin goes through, as the
// named steps of steps.ts: resolve → admit → validate → policy (all before any request leaves
// the process) → attach → invoke → check → render.
import { protocolError } from '../errors.ts'
import type {
  CallOptions,
  CallOutcome,
  CallPipeline,
  PromptResult,
  ResourceContents,
  ServerIdentity,
} from '../mcp/pipeline-api.ts'
import type { Registry } from '../manifest/registry.ts'
import type { Logger, ServerInfo } from '../plugin-api.ts'
import type { Scrubber } from '../safety/scrub.ts'
import { fillPrompt, promptView, resourceTemplateView, resourceView, toolListing } from './listings.ts'
import type { PluginSet } from './plugins.ts'
import type { CallPolicy } from './policy-check.ts'
import { CallState, clip, render, resolve, STEPS } from './steps.ts'
import type { Next, StepEnv } from './steps.ts'
import { matchTemplate } from './uri-template.ts'

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
  const { views: toolViews, shownAs } = toolListing(o.registry, o.enabled)
  const env: StepEnv = {
    ...o,
    absentGroups: new Map(Object.entries(o.serverInfo.absent ?? {})),
    shownAs,
  }
  const call = caller(env)
  const rendered = (s: CallState, r: Next): CallOutcome => render(env, s, r)

  /** A resource is its tool's text; a refusal is a protocol error in its own words (never rendered and parsed back). */
  function contents(uri: string, mimeType: string) {
    return (s: CallState, r: Next): ResourceContents[] => {
      if (r !== s && !(r instanceof CallState))
        throw protocolError('resource_refused', { tool: s.view.name, reason: r.refusal.message })
      return [{ uri, mimeType, text: render(env, s, r).text }]
    }
  }

  return {
    identity: o.identity,
    instructions: o.instructions,
    tools: () => toolViews,
    resources: () => o.registry.resources(o.enabled).map(resourceView),
    resourceTemplates: () => o.registry.resourceTemplates(o.enabled).map(resourceTemplateView),
    prompts: () => o.registry.prompts(o.enabled).map(promptView),
    callTool: (name, args, opts) => call(name, args, opts, rendered),
    async readResource(uri: string, opts: CallOptions): Promise<ResourceContents[]> {
      for (const r of o.registry.resources(o.enabled)) {
        if (r.uri === uri) return call(r.tool, { ...(r.arguments ?? {}) }, opts, contents(uri, r.mimeType))
      }
      for (const t of o.registry.resourceTemplates(o.enabled)) {
        const vars = matchTemplate(t.uriTemplate, uri)
        if (vars) return call(t.tool, { ...(t.arguments ?? {}), ...vars }, opts, contents(uri, t.mimeType))
      }
      throw protocolError('unknown_resource', { uri: clip(uri, o.scrubber) })
    },
    getPrompt(name: string, args: Record<string, string>): PromptResult {
      const p = o.registry.prompts(o.enabled).find((x) => x.name === name)
      if (!p) throw protocolError('unknown_prompt', { name: clip(name, o.scrubber) })
      for (const a of p.arguments ?? []) {
        if (a.required && (args[a.name] === undefined || args[a.name] === ''))
          throw protocolError('prompt_argument_missing', { prompt: p.name, argument: a.name })
      }
      return fillPrompt(p, args, o.scrubber)
    },
  }
}

/** Runs the steps after resolve until one refuses or all pass; sync steps stay sync. */
async function run(env: StepEnv, s: CallState): Promise<Next> {
  let r: Next = s
  for (const step of STEPS) {
    const next = step(env, s)
    r = next instanceof Promise ? await next : next
    if (r !== s) break
  }
  return r
}

/** One call, timed and logged; `finish` turns the last step's answer into what the caller gets. */
function caller(env: StepEnv) {
  return async function call<T>(
    name: string,
    args: unknown,
    opts: CallOptions,
    finish: (s: CallState, r: Next) => T,
  ): Promise<T> {
    const tool = resolve(env, name)
    const t0 = performance.now()
    let outcome = 'error'
    try {
      const s = new CallState(env, tool, args, opts)
      const r = await run(env, s)
      outcome = r === s ? 'ok' : 'refused-or-failed'
      return finish(s, r)
    } catch (e) {
      outcome = opts.signal.aborted ? 'cancelled' : 'error'
      throw e
    } finally {
      env.log.info('tool call', { tool: tool.name, group: tool.group, ms: Math.round(performance.now() - t0), outcome })
    }
  }
}
