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

/**
 * Checks a call against the operator's rules. On success returns the arguments to send, with
 * every write path in its normalized form: what was checked is exactly what leaves. `root` is a
 * local plugin's root directory: its write paths are then checked on the real filesystem under it.
 */
export async function checkCallPolicy(
  p: CallPolicy,
  tool: RegisteredTool,
  args: Record<string, unknown>,
  plugin: Plugin,
  ctx: ToolContext,
  root: string | undefined,
): Promise<{ refusal: Refusal } | { args: Record<string, unknown> }> {
  const r = await check(p, tool, args, plugin, ctx, root)
  return 'rule' in r ? { refusal: r } : { args: r.args }
}

async function check(
  p: CallPolicy,
  tool: RegisteredTool,
  args: Record<string, unknown>,
  plugin: Plugin,
  ctx: ToolContext,
  root: string | undefined,
): Promise<Refusal | { args: Record<string, unknown> }> {
  const writeArgs = tool.writePathArgs ?? []
  const repo = tool.repoArg !== undefined ? args[tool.repoArg] : undefined
  const sourceChecked = tool.sourceWriteArg !== undefined && p.writeGlobs.length > 0
  if (p.repoGlobs.length === 0 && writeArgs.length === 0 && !sourceChecked) return { args }
  // A tool that can name its repository must, under --repo: a call by id alone (a workspace,
  // a proposal, …) would otherwise act on whatever repository the id belongs to. The named
  // repository is checked below and sent along, and the server refuses an id outside it.
  if (p.repoGlobs.length > 0 && tool.repoArg !== undefined && (repo === undefined || repo === '')) {
    return {
      rule: '--repo',
      reason: `this server may only touch repositories matching ${p.repoGlobs.join(', ')}; pass ${tool.repoArg} (the repository the call acts on: for an id, the one it belongs to).`,
    }
  }
  pathsModule ??= import('../policy/paths.ts')
  const paths = await pathsModule
  if (typeof repo === 'string' && p.repoGlobs.length > 0) {
    const r = paths.checkRepo(repo, await matcherFor(paths, p.repoGlobs))
    if (!r.ok)
      return { rule: '--repo', reason: `${r.reason} Allowed repositories: ${p.repoGlobs.join(', ')}.`, value: repo }
  }
  if (sourceChecked) {
    const refusal = await checkSourceWrites(p, tool, args, plugin, ctx, paths)
    if (refusal) return refusal
  }
  if (writeArgs.length === 0) return { args }
  const written = await checkWriteArgs(p, writeArgs, args, root, paths)
  if ('rule' in written) return written
  if (!p.requireLease) return { args: written.sent }
  const verdict = await checkLease(tool, args, written, plugin, ctx, repo)
  return verdict ?? { args: written.sent }
}

/** Each write path argument, checked (on the real filesystem under a local `root`) and normalized. */
async function checkWriteArgs(
  p: CallPolicy,
  writeArgs: readonly string[],
  args: Record<string, unknown>,
  root: string | undefined,
  paths: PathsModule,
): Promise<Refusal | { sent: Record<string, unknown>; checked: string[] }> {
  const matcher = p.writeGlobs.length > 0 ? await matcherFor(paths, p.writeGlobs) : undefined
  const sent: Record<string, unknown> = { ...args }
  const checked: string[] = []
  for (const a of writeArgs) {
    const v = args[a]
    if (v === undefined) continue
    const list = Array.isArray(v) ? v : [v]
    if (!list.every((x): x is string => typeof x === 'string'))
      return { rule: 'path safety', reason: `"${a}" must name paths as strings.` }
    const w =
      root === undefined ? paths.checkWritePaths(list, matcher) : await paths.checkLocalWritePaths(root, list, matcher)
    if (!w.ok) {
      const allowed = matcher ? ` Allowed write paths: ${p.writeGlobs.join(', ')}.` : ''
      return {
        rule: w.reason.startsWith('path') ? 'path safety' : '--write-path',
        reason: `${w.reason}${allowed}`,
        value: w.value,
      }
    }
    sent[a] = Array.isArray(v) ? w.paths : w.paths[0]
    checked.push(...w.paths)
  }
  return { sent, checked }
}

/** Under --require-lease: the call names a lease, and its plugin confirms the lease covers the paths written. */
async function checkLease(
  tool: RegisteredTool,
  args: Record<string, unknown>,
  written: { sent: Record<string, unknown>; checked: string[] },
  plugin: Plugin,
  ctx: ToolContext,
  repo: unknown,
): Promise<Refusal | undefined> {
  const { sent, checked } = written
  const leaseId = tool.leaseArg !== undefined ? args[tool.leaseArg] : undefined
  if (typeof leaseId !== 'string' || leaseId === '') {
    return {
      rule: '--require-lease',
      reason: `writes need a lease: acquire one over the path(s) with the lease tool, then pass its id as "${tool.leaseArg ?? 'lease_id'}".`,
    }
  }
  if (!plugin.confirmLease)
    return {
      rule: '--require-lease',
      reason: `the ${tool.plugin} plugin cannot confirm leases, so no write can be made under --require-lease.`,
    }
  const runId = tool.runArg !== undefined ? args[tool.runArg] : undefined
  const verdict = await plugin.confirmLease(
    {
      leaseId,
      runId: typeof runId === 'string' ? runId : undefined,
      repo: typeof repo === 'string' ? repo : undefined,
      paths: checked,
      args: sent,
    },
    ctx,
  )
  return verdict.ok ? undefined : { rule: '--require-lease', reason: verdict.reason, value: leaseId }
}

/**
 * A tool that writes a source's changes (propose: a workspace's) writes every path the source
 * changed, whoever wrote them (an earlier, unrestricted process too): under --write-path each
 * one is checked like a path argument, before anything is sent.
 */
async function checkSourceWrites(
  p: CallPolicy,
  tool: RegisteredTool,
  args: Record<string, unknown>,
  plugin: Plugin,
  ctx: ToolContext,
  paths: PathsModule,
): Promise<Refusal | undefined> {
  const arg = tool.sourceWriteArg ?? ''
  if (!plugin.writtenPaths)
    return {
      rule: '--write-path',
      reason: `the ${tool.plugin} plugin cannot list the paths "${arg}" changes, so they cannot be checked against --write-path.`,
    }
  let list: string[]
  try {
    list = await plugin.writtenPaths(args, ctx)
  } catch (e) {
    if (ctx.signal.aborted) throw e
    return {
      rule: '--write-path',
      reason: `the paths "${arg}" changes could not be listed, so they cannot be checked against --write-path; nothing was sent.`,
    }
  }
  const w = paths.checkWritePaths(list, await matcherFor(paths, p.writeGlobs))
  if (w.ok) return undefined
  return {
    rule: '--write-path',
    reason: `"${arg}" changes a path this server may not write: ${w.reason} Allowed write paths: ${p.writeGlobs.join(', ')}.`,
    value: w.value,
  }
}

/**
 * Under --repo, the output fields a tool declares as naming repositories (`repoFields`: an
 * array of names, or an object keyed by name) keep only the allowed repositories, so a call
 * does not reveal the others the credential reaches (whoami's repositories and roles). A `*`
 * (every repository) names none and stays.
 */
export async function scopeRepoFields(
  repoGlobs: readonly string[],
  fields: readonly string[],
  data: unknown,
): Promise<unknown> {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return data
  pathsModule ??= import('../policy/paths.ts')
  const paths = await pathsModule
  const matcher = await matcherFor(paths, repoGlobs)
  const allowed = (name: unknown): boolean =>
    name === '*' || (typeof name === 'string' && paths.checkRepo(name, matcher).ok)
  const out: Record<string, unknown> = { ...(data as Record<string, unknown>) }
  for (const f of fields) {
    const v = out[f]
    if (Array.isArray(v)) out[f] = v.filter(allowed)
    else if (typeof v === 'object' && v !== null)
      out[f] = Object.fromEntries(Object.entries(v).filter(([k]) => allowed(k)))
  }
  return out
}
