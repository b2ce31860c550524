// Which groups the operator enabled, from --allow and --enable-<group>, following each
// group's declared access. Every refusal says what failed and which flag fixes it.
import type { GroupInfo } from '../manifest/registry.ts'

/** Group names that must never be enabled, with the reason shown to the operator. */
const FORBIDDEN: Record<string, string> = {
  admin:
    'there is no admin group: policy, roles and credentials are deliberately not reachable through MCP (a hijacked agent must not be able to widen its own authority); use the ag-server CLI for administration',
}

export type GroupResolution = { ok: true; enabled: Set<string>; warnings: string[] } | { ok: false; error: string }

export function resolveGroups(
  groups: ReadonlyMap<string, GroupInfo>,
  allow: readonly string[] | undefined,
  enableFlags: readonly string[],
  /** Groups that cannot work here (availability.ts): left out of the default set. */
  unavailable: ReadonlyMap<string, string> = new Map(),
): GroupResolution {
  const enabled = new Set<string>()
  const warnings: string[] = []
  for (const g of groups.values()) if (g.access === 'always') enabled.add(g.name)
  const selectable = [...groups.values()]
    .filter((g) => g.access === 'default' || g.access === 'opt-in')
    .map((g) => g.name)
  const requested =
    allow ?? [...groups.values()].filter((g) => g.access === 'default' && !unavailable.has(g.name)).map((g) => g.name)
  for (const raw of requested) {
    const name = raw.trim()
    if (name === '') continue
    const forbidden = FORBIDDEN[name]
    if (forbidden !== undefined) return { ok: false, error: `--allow ${name} is refused: ${forbidden}.` }
    const g = groups.get(name)
    if (!g)
      return { ok: false, error: `--allow names unknown group "${name}"; valid groups: ${selectable.join(', ')}.` }
    if (g.access === 'flag-only') {
      return {
        ok: false,
        error: `--allow ${name} is refused: the ${name} group can only be switched on with --enable-${name}, a separate, deliberate flag.`,
      }
    }
    enabled.add(name)
  }
  for (const name of enableFlags) {
    const g = groups.get(name)
    if (!g || g.access !== 'flag-only')
      return { ok: false, error: `--enable-${name} names no group that needs its own flag.` }
    enabled.add(name)
    warnings.push(`--enable-${name} is set: the ${name} group is enabled; every ${name} call is logged as a warning.`)
  }
  return { ok: true, enabled, warnings }
}

/** The explained refusal for a tool whose group is not enabled. */
export function disabledToolMessage(
  tool: string,
  g: GroupInfo,
  enabled: ReadonlySet<string>,
  groups: ReadonlyMap<string, GroupInfo>,
): string {
  const allowList = [...enabled].filter(
    (n) => groups.get(n)?.access === 'default' || groups.get(n)?.access === 'opt-in',
  )
  switch (g.access) {
    case 'flag-only':
      return `Tool ${tool} belongs to the "${g.name}" group, which this server has not enabled. The operator can enable it only with --enable-${g.name}.`
    case 'opt-in':
      return `Tool ${tool} belongs to the "${g.name}" group, which this server has not enabled. The operator can enable it by naming it in --allow (here: --allow ${[...allowList, g.name].join(',')}).`
    default:
      return `Tool ${tool} belongs to the "${g.name}" group, which the operator left out of --allow. The operator can enable it by adding it (here: --allow ${[...allowList, g.name].join(',')}).`
  }
}
