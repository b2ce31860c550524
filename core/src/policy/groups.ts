// Which groups the operator enabled, from --allow and --enable-<group>, following each
// group's declared access. Every refusal says what failed and which flag fixes it.
//
// --allow (a flag, AG_MCP_ALLOW or the config file's "allow": one list) names groups, and two
// words that save spelling the defaults out: `default` (the default set, as it would be without
// --allow) and `+GROUP` (GROUP added to the default set). `--allow +continuity` is
// `--allow default,continuity`.
import type { GroupInfo } from '../manifest/registry.ts'

/** Group names that must never be enabled, with the reason shown to the operator. */
const FORBIDDEN: Record<string, string> = {
  admin:
    'there is no admin group: policy, roles and credentials are deliberately not reachable through MCP (a hijacked agent must not be able to widen its own authority); use the ag-server CLI for administration',
}

/** The word in --allow that stands for the default set. */
export const DEFAULT_WORD = 'default'

export type GroupResolution = { ok: true; enabled: Set<string>; warnings: string[] } | { ok: false; error: string }

/** The groups on when --allow is not given: every `default` group that can work here. */
export function defaultGroups(
  groups: ReadonlyMap<string, GroupInfo>,
  unavailable: ReadonlyMap<string, string> = new Map(),
): string[] {
  return [...groups.values()].filter((g) => g.access === 'default' && !unavailable.has(g.name)).map((g) => g.name)
}

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
  const words = (allow ?? [DEFAULT_WORD]).map((w) => w.trim()).filter((w) => w !== '')
  const requested = words.some((w) => w === DEFAULT_WORD || w.startsWith('+'))
    ? [
        ...defaultGroups(groups, unavailable),
        ...words.filter((w) => w !== DEFAULT_WORD).map((w) => w.replace(/^\+/, '')),
      ]
    : words
  for (const name of requested) {
    const forbidden = FORBIDDEN[name]
    if (forbidden !== undefined) return { ok: false, error: `--allow ${name} is refused: ${forbidden}.` }
    const g = groups.get(name)
    if (!g)
      return {
        ok: false,
        error: `--allow names unknown group "${name}"; valid groups: ${selectable.join(', ')} (and ${DEFAULT_WORD} for the default set, or +GROUP to add one to it).`,
      }
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

/**
 * The --allow value that enables `group` beside what is enabled now: `+group` when the rest is
 * exactly the default set, else the whole list spelled out.
 */
export function allowWith(
  group: string,
  enabled: ReadonlySet<string>,
  groups: ReadonlyMap<string, GroupInfo>,
  unavailable: ReadonlyMap<string, string> = new Map(),
): string {
  const named = [...enabled].filter((n) => groups.get(n)?.access === 'default' || groups.get(n)?.access === 'opt-in')
  const defaults = defaultGroups(groups, unavailable)
  const isDefault = named.length === defaults.length && defaults.every((d) => named.includes(d))
  return `--allow ${isDefault ? `+${group}` : [...named, group].join(',')}`
}

/** The explained refusal for a tool whose group is not enabled. */
export function disabledToolMessage(
  tool: string,
  g: GroupInfo,
  enabled: ReadonlySet<string>,
  groups: ReadonlyMap<string, GroupInfo>,
  unavailable: ReadonlyMap<string, string> = new Map(),
): string {
  const allow = allowWith(g.name, enabled, groups, unavailable)
  switch (g.access) {
    case 'flag-only':
      return `Tool ${tool} belongs to the "${g.name}" group, which this server has not enabled. The operator can enable it only with --enable-${g.name}.`
    case 'opt-in':
      return `Tool ${tool} belongs to the "${g.name}" group, which this server has not enabled. The operator can enable it by naming it in --allow (here: ${allow}).`
    default:
      return `Tool ${tool} belongs to the "${g.name}" group, which the operator left out of --allow. The operator can enable it by adding it (here: ${allow}).`
  }
}
