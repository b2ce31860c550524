// --help, rendered by yargs from the same flag table the start-up parser uses. Loaded only
// when asked for: yargs costs more start-up time than the whole serve path.
import yargs from 'yargs'
import type { Options } from 'yargs'
import { envName } from './flags.ts'
import type { FlagTable } from './flags.ts'
import type { Registry } from '../manifest/registry.ts'

export async function renderHelp(name: string, registry: Registry, table: FlagTable): Promise<string> {
  let y = yargs([])
    .scriptName(name)
    .usage(
      `${name} [flags]\n\nAn MCP server on stdio: tools for reading, writing and proposing changes to AgentGit repositories, within what the operator allows.`,
    )
    .wrap(100)
    .version(false)
  for (const [flag, spec] of Object.entries(table)) {
    const opt: Options = {
      describe: `${spec.describe}${spec.cliOnly ? '' : ` [env ${envName(flag)}]`}`,
      type: spec.type === 'list' ? 'array' : spec.type,
      // A plugin's options under its own heading: the operator sees whose flag it is.
      group: spec.plugin ? `Options of the ${spec.plugin.name} plugin:` : 'Flags:',
    }
    if (spec.default !== undefined) opt.default = spec.default
    y = y.option(flag, opt)
  }
  for (const g of registry.groups.values()) {
    if (g.access === 'flag-only')
      y = y.option(`enable-${g.name}`, {
        type: 'boolean',
        group: 'Flags:',
        describe: `Enable the ${g.name} group (${g.description}); refused through --allow, warned about on every call.`,
      })
  }
  y = y
    .option('print-config', {
      type: 'boolean',
      group: 'Flags:',
      describe: 'Print the resolved configuration as JSON (never the token) and exit.',
    })
    .option('version', { type: 'boolean', group: 'Flags:', describe: 'Print the version and exit.' })
  const groups = [...registry.groups.values()]
    .map((g) => `  ${g.name.padEnd(12)} ${g.access.padEnd(10)} ${g.tools.join(', ')}`)
    .join('\n')
  y = y.epilogue(
    `Groups (access: always, default = on unless --allow leaves it out, opt-in = only when named in --allow, flag-only = only with --enable-<group>):\n${groups}\n\n${defaultSets(registry, table)}\n\nThe token is never a flag value: use --token-file (re-read after a 401) or --token-env.\n\nCommands: ${name} --local [REPO] (your repository, nothing deployed; docs/local-mode.md) · ${name} doctor [flags] · ${name} tools [flags] · ${name} config init|schema · ${name} install|uninstall <host> · ${name} proposals list|show|diff|review|integrate|reject|open · ${name} local status|remove`,
  )
  return `${await y.getHelp()}\n`
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
