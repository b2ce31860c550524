// `ag-mcp tools [flags] [--json]`: the tools this configuration exposes, by group, and the ones it
// hides with the flag that would show them. Same flags, environment and config file as ag-mcp
// (`--local` included), and the same function decides the groups (core/src/startup.ts), so it
// says exactly what ag-mcp with these flags would list.
import { resolve } from 'node:path'
import { loadConfig } from '../core/src/config/config.ts'
import type { BundledPlugins } from '../core/src/pipeline/plugins.ts'
import { Registry } from '../core/src/manifest/registry.ts'
import type { GroupManifest } from '../core/src/manifest/types.ts'
import { allowWith } from '../core/src/policy/groups.ts'
import { createScrubber } from '../core/src/safety/scrub.ts'
import { servedGroups } from '../core/src/startup.ts'
import { LOCAL_UPSTREAM_STAND_IN, localMode } from './local-args.ts'

export interface Io {
  out(s: string): void
  err(s: string): void
  env: NodeJS.ProcessEnv
  cwd: string
}

interface GroupView {
  group: string
  access: string
  enabled: boolean
  tools: string[]
  /** For a hidden group: why, and the flag that would show it. */
  why?: string
}

/** The command line and directory ag-mcp would serve with: a local session's, or these. */
export async function servedArgv(
  argv: readonly string[],
  io: Io,
  manifests: readonly GroupManifest[],
  plugins: BundledPlugins,
): Promise<{ argv: readonly string[]; cwd: string; local: string | undefined } | { error: string }> {
  const local = await localMode(argv, io, manifests, plugins)
  if (local?.error !== undefined) return { error: local.error }
  if (local === undefined) return { argv, cwd: io.cwd, local: undefined }
  const repo = resolve(io.cwd, local.request.repo)
  return { argv: [...local.request.rest, '--upstream', LOCAL_UPSTREAM_STAND_IN], cwd: repo, local: repo }
}

export async function tools(
  argv: readonly string[],
  io: Io,
  manifests: readonly GroupManifest[],
  plugins: BundledPlugins,
): Promise<number> {
  const json = argv.includes('--json')
  const fail = (m: string): number => {
    io.err(`ag-mcp tools: ${m}`)
    return 2
  }
  const scrubber = createScrubber(() => [])
  const target = await servedArgv(
    argv.filter((a) => a !== '--json'),
    io,
    manifests,
    plugins,
  )
  if ('error' in target) return fail(target.error)
  let config: ReturnType<typeof loadConfig>['config']
  try {
    ;({ config } = loadConfig(target.argv, io.env, (v) => scrubber.scrub(v) !== v, plugins))
  } catch (e) {
    return fail((e as Error).message)
  }
  const registry = new Registry(manifests)
  const { resolution: groups, absent } = servedGroups(registry, plugins, config, target.cwd)
  if (!groups.ok) return fail(groups.error)
  const views: GroupView[] = [...registry.groups.values()].map((g) => {
    const enabled = groups.enabled.has(g.name)
    // An enabled tool by the name it is exposed under (its altName when that name is free).
    const tools = g.tools.map((n) => (enabled ? registry.exposedName(n, groups.enabled) : n))
    const view: GroupView = { group: g.name, access: g.access, enabled, tools }
    if (!enabled) {
      const allow = allowWith(g.name, groups.enabled, registry.groups, absent)
      view.why =
        g.access === 'flag-only'
          ? `only with --enable-${g.name}`
          : g.access === 'opt-in'
            ? `opt-in: name it in --allow (${allow})`
            : absent.has(g.name)
              ? `${absent.get(g.name)}`
              : `left out of --allow (${allow})`
    }
    return view
  })
  if (json) {
    io.out(JSON.stringify({ ...(target.local ? { local: target.local } : {}), groups: views }, null, 2))
    return 0
  }
  const shown = views.filter((v) => v.enabled)
  const where = target.local ? ` (local mode on ${target.local})` : ''
  io.out(`exposed: ${shown.reduce((n, v) => n + v.tools.length, 0)} tools in ${shown.length} groups${where}`)
  for (const v of shown) io.out(`  ${v.group.padEnd(12)} ${v.tools.join(', ')}`)
  const hidden = views.filter((v) => !v.enabled)
  if (hidden.length > 0) {
    io.out(`hidden: ${hidden.reduce((n, v) => n + v.tools.length, 0)} tools in ${hidden.length} groups`)
    for (const v of hidden) io.out(`  ${v.group.padEnd(12)} ${v.tools.join(', ')}\n  ${''.padEnd(12)} ${v.why ?? ''}`)
  }
  return 0
}
