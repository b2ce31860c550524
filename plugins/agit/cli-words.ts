// The words of `ag-mcp agit …`: its commands and its one flag table, as data. index.ts declares
// them with the command (lib/cli checks a slip against them before cli.ts loads), and cli.ts
// parses with the same table.
import type { FlagTable } from '../../lib/cli/flags.ts'

export const AGIT_COMMANDS = ['init', 'hooks', 'sync', 'record', 'status', 'log', 'show', 'search'] as const

export type AgitCommand = (typeof AGIT_COMMANDS)[number]

/** Every agit command's flags (cli.ts's USAGE says which takes which). */
export const AGIT_FLAGS: FlagTable = {
  root: { type: 'string', value: 'DIR', describe: 'the repository (default: the git top level)' },
  json: { type: 'boolean', describe: 'JSON for a script' },
  write: { type: 'boolean', describe: 'init: do it (default: a dry run)' },
  'no-hooks': { type: 'boolean', describe: 'init: install no git hook' },
  hook: { type: 'string', value: 'NAME', describe: 'sync: the git hook that runs it' },
  quiet: { type: 'boolean', describe: 'sync: print nothing' },
  ai: { type: 'boolean', short: 'a', describe: "record: the AI's reasoning" },
  intent: { type: 'boolean', short: 'i', describe: "record: the user's intent" },
  file: { type: 'string', short: 'f', value: 'FILE', describe: 'record: the file it is about' },
  line: { type: 'string', short: 'l', value: 'N', describe: 'record: the line; search: how many' },
  count: { type: 'string', short: 'n', value: 'N', describe: 'log: how many' },
  trace: { type: 'boolean', short: 't', describe: 'show: the trace too' },
}
