// Commands declared as data, like tools: a name, a summary, a flag table, the words it takes, and
// its code behind a dynamic import, so a binary pays only for the command it runs (tapjs loads its
// subcommands the same way). One runner walks the words, answers --help and `help <command>` with
// exit 0, names the nearest command or flag for a slip, and turns a UsageError into exit 2.
import { closest } from '../closest.ts'
import { columns, wrap } from './columns.ts'
import { UsageError, completeValues, parseFlags } from './flags.ts'
import type { FlagTable, FlagValues } from './flags.ts'

export interface CommandArgs {
  /** Every flag of the table: given, else from its variable, else its default. */
  values: FlagValues
  positionals: string[]
  /** What followed `--`. */
  rest: string[]
  /** The words after the command's name, as given (what a `raw` command parses itself). */
  argv: readonly string[]
}

/** A command's code: its exit code, or nothing for 0. */
export type CommandRun<C> = (args: CommandArgs, ctx: C) => Promise<number | void> | number | void

export interface Command<C> {
  name: string
  summary: string
  /** The words it takes, for the usage line: `<dir>` is required, `[REPO]` optional, `<id>...` several. */
  args?: readonly string[]
  flags?: FlagTable
  /** Answers for flags often tried that it does not have (`port: 'ag-server takes --listen HOST:PORT'`). */
  hints?: Readonly<Record<string, string>>
  /** More help after the flags: notes, examples. */
  details?: string
  /** Its subcommands: a group runs none itself. */
  commands?: readonly Command<C>[]
  /**
   * Parses its own words (a command with a parser of its own); only --help is answered for it,
   * and, when it declares them, its `flags` and `subcommands` are checked before it loads.
   */
  raw?: boolean
  /**
   * A raw command's own commands, one or two words each (`status`, `task start`): a missing one
   * is asked for, `help` answers its help, and a slip is refused with the nearest, all here, so
   * each command's code never words its own "did you mean".
   */
  subcommands?: readonly string[]
  /** Its help, when its module words it (a raw command's usage): loaded only for --help. */
  help?: () => Promise<string>
  /** The command's code, loaded when it runs. */
  load?: () => Promise<CommandRun<C>>
}

export interface Program<C> {
  name: string
  summary: string
  commands: readonly Command<C>[]
  /** `--version` before any command prints the program's name and this (`ag-server 0.2.0`, as ag-mcp does). */
  version?: string
  /** The whole program's help, when it has more to say than its commands (ag-mcp's flags). */
  help?: () => Promise<string>
}

export interface CommandIo {
  out(s: string): void
  err(s: string): void
  env: NodeJS.ProcessEnv
}

/** Runs the command `argv` names; resolves to the exit code. */
export async function runCommand<C>(
  program: Program<C>,
  argv: readonly string[],
  ctx: C,
  io: CommandIo,
): Promise<number> {
  try {
    if (argv[0] === '--version' && program.version !== undefined) {
      io.out(`${program.name} ${program.version}`)
      return 0
    }
    if (argv[0] === 'help') {
      const path = findPath(program, argv.slice(1), true)
      io.out(trimEnd(await helpOf(program, path)))
      return 0
    }
    const path = findPath(program, argv, false)
    const command = path[path.length - 1]
    if (command === undefined || command.commands !== undefined) {
      const words = argv.slice(path.length)
      if (words[0] === '--help' || words[0] === '-h') {
        io.out(trimEnd(await helpOf(program, path)))
        return 0
      }
      io.err(trimEnd(await helpOf(program, path)))
      throw new UsageError('name a command: see the usage above')
    }
    const words = argv.slice(path.length)
    const beforeRest = words.indexOf('--') === -1 ? words : words.slice(0, words.indexOf('--'))
    if (command.raw === true && (beforeRest.includes('--help') || beforeRest.includes('-h'))) {
      io.out(trimEnd(await helpOf(program, path)))
      return 0
    }
    if (command.raw === true && command.subcommands !== undefined) {
      const named = checkSubcommand(program, path, rawPositionals(command, words))
      if (named === 'help') {
        io.out(trimEnd(await helpOf(program, path)))
        return 0
      }
      if (named === 'none') {
        io.err(trimEnd(await helpOf(program, path)))
        throw new UsageError('name a command: see the usage above')
      }
    }
    const args = command.raw === true ? rawArgs(words) : parseArgs(command, words, io.env)
    if (args === 'help') {
      io.out(trimEnd(await helpOf(program, path)))
      return 0
    }
    if (command.load === undefined) throw new Error(`${command.name} has no code`)
    return (await (await command.load())(args, ctx)) ?? 0
  } catch (e) {
    if (!(e instanceof UsageError)) throw e
    io.err(`${program.name}: ${e.message}`)
    return 2
  }
}

/** The commands the words name, outermost first, up to the first word that is not a subcommand. */
function findPath<C>(program: Program<C>, words: readonly string[], forHelp: boolean): Command<C>[] {
  const path: Command<C>[] = []
  let choices: readonly Command<C>[] | undefined = program.commands
  for (const word of words) {
    // A leaf's own words (`help proposals list` is the help of proposals).
    if (choices === undefined) break
    if (word.startsWith('-') && !forHelp) break
    const next: Command<C> | undefined = choices.find((c) => c.name === word)
    if (next === undefined)
      throw unknownCommand(
        program,
        path,
        word,
        choices.map((c) => c.name),
      )
    path.push(next)
    choices = next.commands
  }
  return path
}

/** The refusal of a command name that is not one of `names`, with the nearest that is. */
function unknownCommand<C>(
  program: Program<C>,
  path: readonly Command<C>[],
  word: string,
  names: readonly string[],
): UsageError {
  const near = closest(word, names)
  const within = path.map((c) => `${c.name} `).join('')
  return new UsageError(
    `unknown command "${within}${word}"${near ? ` (did you mean ${within}${near}?)` : ''}; ${program.name} help ${within}lists the commands`,
  )
}

/**
 * A raw command's words that are not flags: by its flag table when it declares one (so a flag's
 * value is not taken for a command, and an unknown flag is named with the nearest), else the
 * words before the first flag.
 */
function rawPositionals<C>(command: Command<C>, words: readonly string[]): string[] {
  if (command.flags !== undefined) return parseFlags(words, command.flags, { help: true }).positionals
  const firstFlag = words.findIndex((w) => w.startsWith('-'))
  return [...(firstFlag === -1 ? words : words.slice(0, firstFlag))]
}

/**
 * Which of a raw command's subcommands its words name: `help`, `none` (no word at all), or
 * `ok`; anything else is refused with the nearest. A subcommand of two words (`task start`)
 * is matched on both, and its first word alone asks for the second.
 */
function checkSubcommand<C>(
  program: Program<C>,
  path: readonly Command<C>[],
  positionals: readonly string[],
): 'help' | 'none' | 'ok' {
  const command = path[path.length - 1]
  const names = command?.subcommands ?? []
  const [first, second] = positionals
  if (first === undefined) return 'none'
  if (first === 'help') return 'help'
  if (names.includes(first)) return 'ok'
  const group = names.filter((n) => n.startsWith(`${first} `))
  if (group.length === 0) throw unknownCommand(program, path, first, names)
  if (second === undefined)
    throw new UsageError(
      `${path.map((c) => c.name).join(' ')} ${first} needs one of: ${group.map((n) => n.slice(first.length + 1)).join(', ')}`,
    )
  if (names.includes(`${first} ${second}`)) return 'ok'
  throw unknownCommand(program, path, `${first} ${second}`, names)
}

const trimEnd = (s: string): string => s.replace(/\n+$/, '')

function rawArgs(words: readonly string[]): CommandArgs {
  return { values: {}, positionals: [], rest: [], argv: words }
}

function parseArgs<C>(command: Command<C>, words: readonly string[], env: NodeJS.ProcessEnv): CommandArgs | 'help' {
  const table = command.flags ?? {}
  const { max, min } = arity(command.args ?? [])
  const parsed = parseFlags(words, table, {
    help: true,
    maxPositionals: max,
    tooMany: (word) =>
      `unexpected argument "${word}": ${command.name} takes ${max === 0 ? 'only flags' : (command.args ?? []).join(' ')} (see --help)`,
    ...(command.hints !== undefined ? { hints: command.hints } : {}),
  })
  if (parsed.help) return 'help'
  if (parsed.positionals.length < min)
    throw new UsageError(
      `${command.name} needs ${(command.args ?? []).slice(parsed.positionals.length, min).join(' ')}`,
    )
  return {
    values: completeValues(parsed.values, table, env),
    positionals: parsed.positionals,
    rest: parsed.rest,
    argv: words,
  }
}

function arity(args: readonly string[]): { min: number; max: number | undefined } {
  const many = args.some((a) => a.endsWith('...'))
  return { min: args.filter((a) => a.startsWith('<')).length, max: many ? undefined : args.length }
}

async function helpOf<C>(program: Program<C>, path: readonly Command<C>[]): Promise<string> {
  const command = path[path.length - 1]
  if (command === undefined && program.help !== undefined) return program.help()
  if (command?.help !== undefined) return command.help()
  return helpText(program.name, path.map((c) => c.name).join(' '), command ?? program)
}

/** A command's help: its usage line, summary, flags, subcommands and details. */
export function helpText<C>(program: string, path: string, command: Omit<Command<C>, 'name'>): string {
  const name = path === '' ? program : `${program} ${path}`
  const flags = Object.entries(command.flags ?? {})
  const usage = [name, ...(command.commands ? ['<command>'] : []), ...(command.args ?? [])]
  if (flags.length > 0) usage.push('[flags]')
  const parts = [`usage: ${usage.join(' ')}`, wrap(command.summary, 100)]
  if (command.commands !== undefined)
    parts.push(`Commands:\n${columns(command.commands.map((c) => [[c.name, ...(c.args ?? [])].join(' '), c.summary]))}`)
  if (flags.length > 0)
    parts.push(
      `Flags:\n${columns(
        flags.map(([flag, spec]) => {
          const notes = [
            spec.required ? 'required' : '',
            spec.env !== undefined ? `env ${spec.env}` : '',
            spec.default !== undefined && spec.default !== false ? `default ${String(spec.default)}` : '',
          ].filter((n) => n !== '')
          const value = spec.type === 'boolean' ? '' : ` ${spec.value ?? spec.type.toUpperCase()}`
          return [`--${flag}${value}`, `${spec.describe}${notes.length > 0 ? ` [${notes.join(', ')}]` : ''}`]
        }),
      )}`,
    )
  if (command.details !== undefined) parts.push(command.details)
  if (command.commands !== undefined) parts.push(`${name} help <command> (or <command> --help) tells more.`)
  return `${parts.join('\n\n')}\n`
}
