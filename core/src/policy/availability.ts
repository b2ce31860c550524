// Which groups can work in this process at all, decided at start-up from their plugins' option
// roles (no plugin code is loaded and no process is spawned): a group whose plugin needs an
// upstream URL that was not given, or a local root that is not inside a git work tree, is left
// out of the default set, and server_info says why. Naming it in --allow still enables it.
import { existsSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import type { OptionSpec } from '../plugin-api.ts'
import type { GroupInfo } from '../manifest/registry.ts'

export interface AvailabilityInput {
  groups: ReadonlyMap<string, GroupInfo>
  /** Each plugin's option table (roles), from the bundled plugin list. */
  pluginOptions: Readonly<Record<string, Readonly<Record<string, OptionSpec>>>>
  /** Each plugin's resolved option values. */
  values: Readonly<Record<string, Readonly<Record<string, unknown>>>>
  /** The flag that sets an option, for the explanation. */
  flagOf(plugin: string, option: string): string
  cwd: string
}

/** Group → why it is absent by default (groups that can work are not listed). */
export function unavailableGroups(o: AvailabilityInput): Map<string, string> {
  const out = new Map<string, string>()
  for (const g of o.groups.values()) {
    const options = o.pluginOptions[g.plugin] ?? {}
    const values = o.values[g.plugin] ?? {}
    for (const [name, spec] of Object.entries(options)) {
      const value = values[name]
      if (spec.role === 'upstream-url' && (value === undefined || value === '')) {
        out.set(
          g.name,
          `no upstream: the ${g.name} group needs an AGWP server; start ag-mcp with ${o.flagOf(g.plugin, name)} URL`,
        )
        break
      }
      if (spec.role === 'root') {
        const dir = typeof value === 'string' ? resolve(o.cwd, value) : o.cwd
        if (!insideGitWorkTree(dir)) {
          out.set(
            g.name,
            `not in a git repository: the ${g.name} group works on a repository; start ag-mcp inside one or pass ${o.flagOf(g.plugin, name)} DIR`,
          )
          break
        }
      }
    }
  }
  return out
}

/** A `.git` (directory, or file of a worktree/submodule) in `dir` or an ancestor. */
export function insideGitWorkTree(dir: string): boolean {
  let d = resolve(dir)
  for (;;) {
    if (existsSync(join(d, '.git'))) return true
    const up = dirname(d)
    if (up === d) return false
    d = up
  }
}
