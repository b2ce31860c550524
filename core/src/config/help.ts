// --help, rendered from the same flag table the start-up parser uses, in lib/cli's columns.
// Loaded only when asked for: the serve path does not parse it.
import { columns, wrap } from '../../../lib/cli/columns.ts'
import { envName } from './flags.ts'
import type { FlagSpec, FlagTable } from './flags.ts'
import type { Registry } from '../manifest/registry.ts'

export async function renderHelp(name: string, registry: Registry, table: FlagTable): Promise<string> {
  const row = (flag: string, spec: FlagSpec): [string, string] => {
    const value = spec.type === 'boolean' ? '' : ` ${spec.value ?? spec.type.toUpperCase()}`
    const notes = [
      spec.cliOnly ? '' : `env ${envName(flag)}`,
      spec.default !== undefined && spec.default !== false ? `default ${String(spec.default)}` : '',
    ].filter((n) => n !== '')
    return [`--${flag}${value}`, `${spec.describe}${notes.length > 0 ? ` [${notes.join(', ')}]` : ''}`]
  }
  const own: [string, string][] = []
  // A plugin's options under its own heading: the operator sees whose flag it is.
  const byPlugin = new Map<string, [string, string][]>()
  for (const [flag, spec] of Object.entries(table)) {
    if (spec.plugin === undefined) own.push(row(flag, spec))
    else byPlugin.set(spec.plugin.name, [...(byPlugin.get(spec.plugin.name) ?? []), row(flag, spec)])
  }
  for (const g of registry.groups.values())
    if (g.access === 'flag-only')
      own.push([
        `--enable-${g.name}`,
        `Enable the ${g.name} group (${g.description}); refused through --allow, warned about on every call.`,
      ])
  own.push(['--print-config', 'Print the resolved configuration as JSON (never the token) and exit.'])
  own.push(['--version', 'Print the version and exit.'])
  own.push(['--help', 'Print this help and exit.'])
  const groups = [...registry.groups.values()]
    .map((g) => `  ${g.name.padEnd(12)} ${g.access.padEnd(10)} ${g.tools.join(', ')}`)
    .join('\n')
  return `${[
    `usage: ${name} [flags]`,
    wrap(
      'An MCP server on stdio: tools for reading, writing and proposing changes to AgentGit repositories, within what the operator allows.',
      100,
    ),
    `Flags:\n${columns(own)}`,
    ...[...byPlugin].map(([plugin, rows]) => `Options of the ${plugin} plugin:\n${columns(rows)}`),
    wrap(
      'Groups (access: always, default = on unless --allow leaves it out, opt-in = only when named in --allow, flag-only = only with --enable-<group>):',
      100,
    ),
  ].join('\n\n')}\n${groups}\n\n${[
    wrap(defaultSets(registry, table), 100),
    'The token is never a flag value: use --token-file (re-read after a 401) or --token-env.',
    `Commands: ${name} --local [REPO] (your repository, nothing deployed; docs/local-mode.md) · ${name} doctor [flags] · ${name} tools [flags] · ${name} config init|schema · ${name} install|uninstall <host> · ${name} proposals list|show|diff|review|integrate|reject|open · ${name} local status|remove · ${name} agit … · ${name} continuity …`,
    `${name} help <command> (or ${name} <command> --help) tells more of each.`,
  ]
    .map((p) => wrap(p, 100))
    .join('\n\n')}\n`
}

/** What the default set is in each mode, from the groups' access and their plugins' option roles. */
function defaultSets(registry: Registry, table: FlagTable): string {
  const withRole = (role: string) =>
    new Set(Object.values(table).flatMap((s) => (s.plugin?.role === role ? [s.plugin.name] : [])))
  const upstream = withRole('upstream-url')
  const rooted = withRole('root')
  const defaults = [...registry.groups.values()].filter((g) => g.access === 'default')
  const name = (g: { name: string; plugin: string }) =>
    rooted.has(g.plugin) ? `${g.name} (in a git repository)` : g.name
  const remote = defaults.map(name).join(', ')
  const alone =
    defaults
      .filter((g) => !upstream.has(g.plugin))
      .map(name)
      .join(', ') || 'none'
  return `Default set: with --upstream, or --local (your repository): ${remote}. Without an upstream: ${alone}. --allow default,GROUP or --allow +GROUP adds GROUP to the default set; the same words work in AG_MCP_ALLOW and the config file's "allow".`
}
