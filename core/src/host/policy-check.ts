// The operator's narrowing rules, checked before a request leaves the process. Path rules
// load minimatch lazily: a process without --repo/--write-path never parses it.
import type { RegisteredTool } from '../manifest/types.ts'
import type { Plugin, ToolContext } from '../plugin-api.ts'
import type { PathMatcher } from '../policy/paths.ts'

export interface CallPolicy {
  repoGlobs: readonly string[]
  writeGlobs: readonly string[]
  requireLease: boolean
}

export interface Refusal {
  rule: string
  reason: string
  /** The offending value, shown to the model fenced and cleaned. */
  value?: string
}

type PathsModule = typeof import('../policy/paths.ts')
let pathsModule: Promise<PathsModule> | undefined
const matchers = new WeakMap<readonly string[], PathMatcher>()

async function matcherFor(paths: PathsModule, globs: readonly string[]): Promise<PathMatcher> {
  let m = matchers.get(globs)
  if (!m) {
    m = paths.compileGlobs(globs)
    matchers.set(globs, m)
  }
  return m
}

export async function checkCallPolicy(p: CallPolicy, tool: RegisteredTool, args: Record<string, unknown>, plugin: Plugin, ctx: ToolContext): Promise<Refusal | undefined> {
  const writeArgs = tool.writePathArgs ?? []
  const repo = tool.repoArg !== undefined ? args[tool.repoArg] : undefined
  if (p.repoGlobs.length === 0 && writeArgs.length === 0) return undefined
  pathsModule ??= import('../policy/paths.ts')
  const paths = await pathsModule
  if (typeof repo === 'string' && p.repoGlobs.length > 0) {
    const r = paths.checkRepo(repo, await matcherFor(paths, p.repoGlobs))
    if (!r.ok) return { rule: '--repo', reason: `${r.reason} Allowed repositories: ${p.repoGlobs.join(', ')}.`, value: repo }
  }
  if (writeArgs.length === 0) return undefined
  const named: string[] = []
  for (const a of writeArgs) {
    const v = args[a]
    if (typeof v === 'string') named.push(v)
    else if (Array.isArray(v)) for (const x of v) if (typeof x === 'string') named.push(x)
  }
  const w = paths.checkWritePaths(named, p.writeGlobs.length > 0 ? await matcherFor(paths, p.writeGlobs) : undefined)
  if (!w.ok) {
    const allowed = p.writeGlobs.length > 0 ? ` Allowed write paths: ${p.writeGlobs.join(', ')}.` : ''
    return { rule: w.reason.startsWith('path') ? 'path safety' : '--write-path', reason: `${w.reason}${allowed}`, value: w.value }
  }
  if (!p.requireLease) return undefined
  const leaseId = tool.leaseArg !== undefined ? args[tool.leaseArg] : undefined
  if (typeof leaseId !== 'string' || leaseId === '') {
    return { rule: '--require-lease', reason: `writes need a lease: acquire one over the path(s) with the lease tool, then pass its id as "${tool.leaseArg ?? 'lease_id'}".` }
  }
  if (!plugin.confirmLease) return { rule: '--require-lease', reason: `the ${tool.plugin} plugin cannot confirm leases, so no write can be made under --require-lease.` }
  const runId = tool.runArg !== undefined ? args[tool.runArg] : undefined
  const verdict = await plugin.confirmLease({ leaseId, runId: typeof runId === 'string' ? runId : undefined, repo: typeof repo === 'string' ? repo : undefined, paths: w.paths, args }, ctx)
  return verdict.ok ? undefined : { rule: '--require-lease', reason: verdict.reason, value: leaseId }
}
