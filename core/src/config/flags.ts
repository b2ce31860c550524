// Every ag-mcp flag, defined once: the core's own here, and each plugin's options (declared
// with definePlugin, collected by build.mjs into generated/plugins.js) joined to them by
// flagTable(). The start-up parser (lib/cli), the config file and env loader, the lazily loaded help
// and docs/flags.md are all driven by that one table.
import type { Flag } from '../../../lib/cli/flags.ts'
import type { OptionRole, OptionTable } from '../plugin-api.ts'

export type { FlagType } from '../../../lib/cli/flags.ts'

/** A row of lib/cli's flag table, with what only ag-mcp's configuration layers read. */
export interface FlagSpec extends Flag {
  /** Not accepted from the config file (where a value could leak or loop). */
  cliOnly?: boolean
  /** Set for a plugin's option: whose it is and what the core does with it. */
  plugin?: { name: string; option: string; role?: OptionRole }
}

export type FlagTable = Readonly<Record<string, FlagSpec>>

export const FLAGS = {
  local: {
    type: 'string',
    value: '[REPO]',
    bare: '.',
    describe:
      'Local mode: serve REPO (default: the repository you are in) through a private ag-server with a token of its own; excludes --upstream, --token-file and --token-env. In a config file: true, or the path.',
  },
  'agent-name': {
    type: 'string',
    value: 'NAME',
    describe:
      'Local mode: the name on the agent\'s commits (default: git config ag-mcp.agentName, else "ag-mcp"; "(agent)" is added unless it says agent).',
  },
  'agent-email': {
    type: 'string',
    value: 'EMAIL',
    describe:
      "Local mode: the email on the agent's commits (default: git config ag-mcp.agentEmail, else <session>@agent.agwp.invalid).",
  },
  allow: {
    type: 'list',
    value: 'GROUPS',
    describe:
      'Comma-separated tool groups to enable; default names the default set and +GROUP adds one to it (--allow +continuity). Default: read, workspace, propose, coordinate with an upstream or --local, and agit in a git repository.',
  },
  repo: {
    type: 'list',
    value: 'GLOB',
    describe: 'Repositories this process may touch (repeatable glob; default: all the token allows).',
  },
  'write-path': {
    type: 'list',
    value: 'GLOB',
    describe: 'Paths writes, deletes and moves must match (repeatable glob; dot files only when the glob names them).',
  },
  'require-lease': {
    type: 'boolean',
    default: false,
    describe: 'Refuse writes that are not made under a lease the calling run holds over the path.',
  },
  'allow-insecure-http': {
    type: 'boolean',
    default: false,
    describe: 'Allow a plain http:// upstream on a non-loopback host (the token then crosses the network in clear).',
  },
  'max-output-bytes': {
    type: 'number',
    default: 65536,
    value: 'BYTES',
    describe: 'Largest tool result text, in UTF-8 bytes; longer results are truncated with a marker.',
  },
  'max-message-bytes': {
    type: 'number',
    default: 4194304,
    value: 'BYTES',
    describe: 'Largest JSON-RPC message accepted on stdin; longer lines are answered with an error and discarded.',
  },
  'rate-limit': {
    type: 'string',
    default: '20/s',
    value: 'N/s',
    describe: 'Tool calls allowed per second (token bucket, burst of twice the rate).',
  },
  'page-size': {
    type: 'number',
    default: 100,
    value: 'N',
    describe: 'Items per page of tools/list, resources/list and prompts/list.',
  },
  'shutdown-timeout-ms': {
    type: 'number',
    default: 5000,
    value: 'MS',
    describe: 'On SIGTERM, how long in-flight calls may take before they are aborted.',
  },
  'log-level': {
    type: 'string',
    default: 'info',
    value: 'LEVEL',
    describe: 'debug, info, warn, error or silent. Logs go to stderr only.',
  },
  'log-file': { type: 'string', value: 'PATH', describe: 'Also append log lines to this file.' },
  'server-name': {
    type: 'string',
    value: 'NAME',
    describe:
      'The serverInfo name to advertise (default: ag-mcp, or the peer the enabled groups stand in for, e.g. agentpack for --allow continuity,bundles).',
  },
  config: {
    type: 'string',
    value: 'PATH',
    cliOnly: true,
    describe: 'JSON config file with any of these flags as keys (never a token value).',
  },
} as const satisfies Record<string, FlagSpec>

export type FlagName = keyof typeof FLAGS

/** A plugin's options as the build recorded them (see generated/plugins.js). */
export interface PluginOptionsEntry {
  /** Prefix of every option's flag; `<plugin>-` unless the plugin declares another. */
  optionPrefix: string
  options: OptionTable
}

/** The flag a plugin option is set with: its prefix and name. */
export function pluginFlag(entry: PluginOptionsEntry, option: string): string {
  return `${entry.optionPrefix}${option}`
}

/**
 * The one flag table: the core's flags and every plugin's options under its prefix. A name used
 * twice is a build defect (build.mjs refuses it first); it is refused here too, never shadowed.
 */
export function flagTable(plugins: Readonly<Record<string, PluginOptionsEntry>>): FlagTable {
  const table: Record<string, FlagSpec> = { ...FLAGS }
  for (const [name, entry] of Object.entries(plugins)) {
    for (const [option, spec] of Object.entries(entry.options)) {
      const flag = pluginFlag(entry, option)
      if (flag in table || (INFO_FLAGS as readonly string[]).includes(flag) || flag.startsWith('enable-'))
        throw new Error(`plugin ${name}: option --${flag} is already a flag`)
      table[flag] = {
        type: spec.type,
        describe: spec.description,
        ...(spec.default !== undefined ? { default: spec.default } : {}),
        ...(spec.value !== undefined ? { value: spec.value } : {}),
        plugin: { name, option, ...(spec.role !== undefined ? { role: spec.role } : {}) },
      }
    }
  }
  return table
}

/** Flags that only stop start-up to print something. */
export const INFO_FLAGS = ['help', 'version', 'print-config'] as const

/** The prefix of environment variables that set flags: AG_MCP_MAX_OUTPUT_BYTES=… */
export const ENV_PREFIX = 'AG_MCP_'

export function envName(flag: string): string {
  return ENV_PREFIX + flag.toUpperCase().replace(/-/g, '_')
}
