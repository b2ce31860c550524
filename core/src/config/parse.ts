// Start-up argv parsing: lib/cli's one parser over the one flag table, plus what only ag-mcp's
// serve path takes (--enable-<group>, the info flags, a refusal of --token).
import { INFO_FLAGS } from './flags.ts'
import { UsageError, parseFlags } from '../../../lib/cli/flags.ts'
import type { FlagValue, FlagValues } from '../../../lib/cli/flags.ts'
import type { FlagTable } from './flags.ts'

export { UsageError, setValue } from '../../../lib/cli/flags.ts'

export type RawValue = FlagValue
/** Values by flag name, as given (flags, environment, config file), before defaults and checks. */
export type RawFlags = FlagValues

export interface ParsedArgs {
  flags: RawFlags
  /** Groups named by --enable-<group>. */
  enable: string[]
  info: (typeof INFO_FLAGS)[number] | undefined
}

const TOKEN_HINT =
  'there is no --token flag: a token on the command line shows in process listings; use --token-file PATH (mode 0600) or --token-env NAME'

export function parseArgv(argv: readonly string[], table: FlagTable): ParsedArgs {
  const enable: string[] = []
  let info: ParsedArgs['info']
  const parsed = parseFlags(argv, table, {
    help: true,
    maxPositionals: 0,
    tooMany: (word) => `unexpected argument "${word}": ag-mcp takes only --flags (see --help)`,
    hints: { token: TOKEN_HINT },
    alsoKnown: INFO_FLAGS,
    extra: (name, inline) => {
      if ((INFO_FLAGS as readonly string[]).includes(name)) {
        info = name as ParsedArgs['info']
        return true
      }
      if (name.startsWith('enable-') && inline === undefined) {
        enable.push(name.slice('enable-'.length))
        return true
      }
      return false
    },
  })
  if (argv.includes('--')) throw new UsageError('unexpected argument "--": ag-mcp takes only --flags (see --help)')
  return { flags: parsed.values, enable, info: parsed.help ? 'help' : info }
}
