// The words of `ag-mcp continuity …`: its commands and its one flag table, as data. index.ts
// declares them with the command (lib/cli checks a slip against them before cli.ts loads), and
// cli.ts parses with the same table.
import type { FlagTable } from '../../lib/cli/flags.ts'

const SWITCHES = [
  'full',
  'open',
  'all',
  'compact',
  'json',
  'replace-constraints',
  'clear-next-actions',
  'force',
  'park-current',
  'changed',
  'missing',
  'no-evidence',
  'as-new',
  'write',
]
// Every option may be given more than once (the commands read the last, or all: --constraint T...).
const OPTIONS = [
  'root',
  'objective',
  'constraint',
  'write-scope',
  'next',
  'tag',
  'risk',
  'status',
  'evidence',
  'summary',
  'reason',
  'file',
  'kind',
  'content',
  'path',
  'command',
  'exit-code',
  'snippet',
  'limit',
  'preset',
  'budget',
  'query',
  'output',
  'task',
  'source',
  'scope',
]

/** The flag table of every continuity command (cli.ts's CLI_USAGE says which takes which). */
export const CONTINUITY_FLAGS: FlagTable = Object.fromEntries([
  ...SWITCHES.map((name) => [name, { type: 'boolean', describe: name }] as const),
  ...OPTIONS.map((name) => [name, { type: 'string', repeat: true, describe: name }] as const),
])

/** The commands, one or two words each: lib/cli checks a slip against them before cli.ts loads. */
export const CONTINUITY_COMMANDS = [
  'init',
  ...['start', 'status', 'list', 'passport', 'update', 'verify', 'finalize', 'park', 'switch', 'handoff', 'audit']
    .concat(['block', 'close', 'abandon'])
    .map((v) => `task ${v}`),
  'decision',
  'dead-end',
  'evidence',
  'source add',
  'source status',
  'checkpoint',
  'diff',
  'replay',
  'resume',
  ...['export', 'inspect', 'plan', 'import'].map((v) => `bundle ${v}`),
]
