// `ag-mcp tools [flags] [--json]`: the tools this configuration exposes, by group, and the ones it
// hides with the flag that would show them. Same flags, environment and config file as ag-mcp.
import { loadConfig } from '../core/src/config/config.ts'
import type { BundledPlugins } from '../core/src/pipeline/plugins.ts'
import { Registry } from '../core/src/manifest/registry.ts'
import type { GroupManifest } from '../core/src/manifest/types.ts'
import { resolveGroups } from '../core/src/policy/groups.ts'
import { createScrubber } from '../core/src/safety/scrub.ts'

export interface Io {
  out(s: string): void
  err(s: string): void
  env: NodeJS.ProcessEnv
}

interface GroupView {
  group: string
  access: string
  enabled: boolean
  tools: string[]
  /** For a hidden group: why, and the flag that would show it. */
  why?: string
}

export function tools(
  argv: readonly string[],
  io: Io,
  manifests: readonly GroupManifest[],
  plugins: BundledPlugins,
): number {
  const json = argv.includes('--json')
  const scrubber = createScrubber(() => [])
  let allow: readonly string[] | undefined
  let enable: readonly string[]
  try {
    const { config } = loadConfig(
      argv.filter((a) => a !== '--json'),
      io.env,
      (v) => scrubber.scrub(v) !== v,
      plugins,
    )
    allow = config.allow
    enable = config.enable
  } catch (e) {
    io.err(`ag-mcp tools: ${(e as Error).message}`)
    return 2
  }
  const registry = new Registry(manifests)
  const groups = resolveGroups(registry.groups, allow, enable)
  if (!groups.ok) {
    io.err(`ag-mcp tools: ${groups.error}`)
    return 2
  }
  const views: GroupView[] = [...registry.groups.values()].map((g) => {
    const enabled = groups.enabled.has(g.name)
    // An enabled tool by the name it is exposed under (its altName when that name is free).
    const tools = g.tools.map((n) => (enabled ? registry.exposedName(n, groups.enabled) : n))
    const view: GroupView = { group: g.name, access: g.access, enabled, tools }
    if (!enabled)
      view.why =
        g.access === 'flag-only'
          ? `only with --enable-${g.name}`
          : g.access === 'opt-in'
            ? `opt-in: name it in --allow (--allow ${[...groups.enabled]
                .filter((n) => registry.groups.get(n)?.access !== 'always')
                .concat(g.name)
                .join(',')})`
            : `left out of --allow (add ${g.name} to it)`
    return view
  })
  if (json) {
    io.out(JSON.stringify({ groups: views }, null, 2))
    return 0
  }
  const shown = views.filter((v) => v.enabled)
  io.out(`exposed: ${shown.reduce((n, v) => n + v.tools.length, 0)} tools in ${shown.length} groups`)
  for (const v of shown) io.out(`  ${v.group.padEnd(12)} ${v.tools.join(', ')}`)
  const hidden = views.filter((v) => !v.enabled)
  if (hidden.length > 0) {
    io.out(`hidden: ${hidden.reduce((n, v) => n + v.tools.length, 0)} tools in ${hidden.length} groups`)
    for (const v of hidden) io.out(`  ${v.group.padEnd(12)} ${v.tools.join(', ')}\n  ${''.padEnd(12)} ${v.why ?? ''}`)
  }
  return 0
}
