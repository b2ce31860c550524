// Every ag-mcp flag, defined once. The start-up parser, the config file and env loader, and
// the lazily loaded yargs help are all driven by this table.

export type FlagType = 'string' | 'number' | 'boolean' | 'list'

export interface FlagSpec {
  type: FlagType
  describe: string
  default?: string | number | boolean
  /** Shown in help as the value's placeholder. */
  value?: string
  /** Not accepted from the config file (where a value could leak or loop). */
  cliOnly?: boolean
}

export const FLAGS = {
  upstream: {
    type: 'string',
    value: 'URL',
    describe:
      'Base URL of the ag-server (AGWP v1 lives under /agwp/v1). http:// only for loopback hosts unless --allow-insecure-http.',
  },
  'token-file': {
    type: 'string',
    value: 'PATH',
    describe: 'File holding the AGWP token; re-read after a 401, so a rotated token needs no restart.',
  },
  'token-env': { type: 'string', value: 'NAME', describe: 'Environment variable holding the AGWP token.' },
  allow: {
    type: 'list',
    value: 'GROUPS',
    describe: 'Comma-separated tool groups to enable (default: every group marked default). review must be named here.',
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
  'timeout-ms': { type: 'number', default: 30000, value: 'MS', describe: 'Overall deadline of one upstream call.' },
  'connect-timeout-ms': {
    type: 'number',
    default: 5000,
    value: 'MS',
    describe: 'Deadline for connecting to the upstream.',
  },
  'max-response-bytes': {
    type: 'number',
    default: 16777216,
    value: 'BYTES',
    describe: 'Largest upstream response body read.',
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
  config: {
    type: 'string',
    value: 'PATH',
    cliOnly: true,
    describe: 'JSON config file with any of these flags as keys (never a token value).',
  },
} as const satisfies Record<string, FlagSpec>

export type FlagName = keyof typeof FLAGS

/** Flags that only stop start-up to print something. */
export const INFO_FLAGS = ['help', 'version', 'print-config'] as const

/** The prefix of environment variables that set flags: AG_MCP_MAX_OUTPUT_BYTES=… */
export const ENV_PREFIX = 'AG_MCP_'

export function envName(flag: string): string {
  return ENV_PREFIX + flag.toUpperCase().replace(/-/g, '_')
}
