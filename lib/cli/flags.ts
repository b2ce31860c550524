// The one command-line parser of ag-mcp and ag-server, driven by a flag table: every flag is a
// row (type, description, placeholder, default), and what the table does not know is refused with
// the nearest name it does. A leaf module (lib/): core, operator, plugins and the server share it.
import { closest } from '../closest.ts'

/** An operator mistake on the command line: printed as it is, exit 2. */
export class UsageError extends Error {}

export type FlagType = 'string' | 'number' | 'boolean' | 'list'

export interface Flag {
  type: FlagType
  describe: string
  default?: string | number | boolean | readonly string[]
  /** Shown in help as the value's placeholder. */
  value?: string
  /** The variable read when the flag is not given (by the command runner, not the parser). */
  env?: string
  /** Refused when missing (after `env`). */
  required?: boolean
  /** A string flag given more than once keeps every value, in order (a string[]), commas and all. */
  repeat?: boolean
  /** A one-letter spelling: `-n 5` for `--count 5`. */
  short?: string
  /** The only values a string flag takes. */
  choices?: readonly string[]
  /**
   * A string flag whose value may be left out: its value when given bare (`--local`); `true` or
   * `false` as its value then mean on (the bare value) or off.
   */
  bare?: string
}

export type FlagTable = Readonly<Record<string, Flag>>

export type FlagValue = string | number | boolean | readonly string[]
export type FlagValues = Record<string, FlagValue>

export interface Parsed {
  /** The flags given, by name (no defaults). */
  values: FlagValues
  positionals: string[]
  /** What follows `--`, untouched. */
  rest: string[]
  /** `--help` or `-h` was given (only when the parser was asked to look for it). */
  help: boolean
}

export interface ParseOptions {
  /** Recognize `--help` and `-h` (the command runner does; a table with its own `help` row need not). */
  help?: boolean
  /** How many positional words are allowed (default: any). */
  maxPositionals?: number | undefined
  /** The message for a word beyond `maxPositionals`. */
  tooMany?: (word: string) => string
  /** Fixed answers to flags that do not exist but are often tried (`--token`, `--port`). */
  hints?: Readonly<Record<string, string>>
  /** Names to consider for "did you mean" beside the table's. */
  alsoKnown?: readonly string[]
  /** A flag outside the table that the caller takes itself (`--enable-<group>`); true when taken. */
  extra?: (name: string, inline: string | undefined) => boolean
}

export function parseFlags(argv: readonly string[], table: FlagTable, options: ParseOptions = {}): Parsed {
  const parsed: Parsed = { values: {}, positionals: [], rest: [], help: false }
  // Every unknown flag is named at once: fixing one slip only to hear of the next costs a run.
  const unknown: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string
    if (arg === '--') {
      parsed.rest = argv.slice(i + 1)
      break
    }
    if (options.help && (arg === '--help' || arg === '-h')) {
      parsed.help = true
      continue
    }
    const short = /^-([a-zA-Z])$/.exec(arg)?.[1]
    const long = short === undefined ? undefined : Object.keys(table).find((n) => table[n]?.short === short)
    if (short !== undefined && long === undefined) {
      unknown.push(`unknown flag -${short} (see --help)`)
      continue
    }
    if (long === undefined && !arg.startsWith('--')) {
      if (options.maxPositionals !== undefined && parsed.positionals.length >= options.maxPositionals)
        throw new UsageError(options.tooMany?.(arg) ?? `unexpected argument "${arg}"`)
      parsed.positionals.push(arg)
      continue
    }
    const eq = long !== undefined ? -1 : arg.indexOf('=')
    const name = long ?? (eq === -1 ? arg.slice(2) : arg.slice(2, eq))
    const inline = eq === -1 ? undefined : arg.slice(eq + 1)
    if (options.extra?.(name, inline)) continue
    const negated = name.startsWith('no-') ? table[name.slice(3)] : undefined
    if (negated?.type === 'boolean' && inline === undefined) {
      parsed.values[name.slice(3)] = false
      continue
    }
    const spec = table[name]
    if (spec === undefined) {
      unknown.push(unknownFlag(name, table, options))
      // Its value, if it had one, is not a positional word.
      if (inline === undefined && argv[i + 1] !== undefined && !(argv[i + 1] as string).startsWith('-')) i++
      continue
    }
    if (spec.type === 'boolean') {
      parsed.values[name] = inline === undefined ? true : parseBoolean(`--${name}`, inline)
      continue
    }
    let value = inline
    if (value === undefined) {
      const next = argv[i + 1]
      if (next === undefined || (next.startsWith('--') && next.length > 2)) {
        if (spec.bare === undefined) throw new UsageError(`--${name} needs a value (${spec.value ?? spec.type})`)
        value = spec.bare
      } else {
        value = next
        i++
      }
    }
    setValue(parsed.values, name, spec, value, `--${name}`)
  }
  if (unknown.length > 0) throw new UsageError(unknown.join('; '))
  return parsed
}

/** A flag's value as a string, when it was given one (or has a default). */
export function stringValue(values: FlagValues, name: string): string | undefined {
  const v = values[name]
  return typeof v === 'string' ? v : undefined
}

export function numberValue(values: FlagValues, name: string): number | undefined {
  const v = values[name]
  return typeof v === 'number' ? v : undefined
}

export function listValue(values: FlagValues, name: string): string[] {
  const v = values[name]
  return Array.isArray(v) ? [...(v as readonly string[])] : []
}

/** Applies one textual value (from argv, the environment or a file) to a set of flag values. */
export function setValue(values: FlagValues, name: string, spec: Flag, value: string, where: string): void {
  switch (spec.type) {
    case 'list': {
      const prior = values[name]
      const items = value
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '')
      values[name] = [...(Array.isArray(prior) ? prior : []), ...items]
      return
    }
    case 'number': {
      const n = Number(value)
      if (value.trim() === '' || !Number.isFinite(n) || n < 0)
        throw new UsageError(`${where} must be a non-negative number, got "${value}"`)
      values[name] = n
      return
    }
    case 'boolean':
      values[name] = parseBoolean(where, value)
      return
    case 'string':
      if (spec.bare !== undefined && ['true', '1', 'false', '0'].includes(value)) {
        if (value === 'true' || value === '1') values[name] = spec.bare
        else delete values[name]
        return
      }
      if (spec.choices !== undefined && !spec.choices.includes(value)) {
        const near = closest(value, spec.choices)
        throw new UsageError(
          `${where} is one of ${spec.choices.join(', ')}, got "${value}"${near ? ` (did you mean ${near}?)` : ''}`,
        )
      }
      if (spec.repeat) {
        const prior = values[name]
        values[name] = [...(Array.isArray(prior) ? prior : []), value]
      } else values[name] = value
  }
}

/** The values with each missing flag taken from its variable, then its default; a missing required flag refused. */
export function completeValues(values: FlagValues, table: FlagTable, env: NodeJS.ProcessEnv): FlagValues {
  const out: FlagValues = { ...values }
  for (const [name, spec] of Object.entries(table)) {
    if (out[name] !== undefined) continue
    const fromEnv = spec.env !== undefined ? env[spec.env] : undefined
    if (fromEnv !== undefined && fromEnv !== '') setValue(out, name, spec, fromEnv, `$${spec.env}`)
    else if (spec.default !== undefined) out[name] = spec.default
    else if (spec.required)
      throw new UsageError(
        `--${name} is required${spec.value ? ` (${spec.value})` : ''}: ${spec.describe}${spec.env ? ` (or set ${spec.env})` : ''}`,
      )
  }
  return out
}

function parseBoolean(where: string, v: string): boolean {
  if (v === 'true' || v === '1') return true
  if (v === 'false' || v === '0') return false
  throw new UsageError(`${where} is a switch: use it bare, or =true / =false`)
}

function unknownFlag(name: string, table: FlagTable, options: ParseOptions): string {
  const hints = options.hints ?? {}
  const near = closest(name, [...Object.keys(table), ...(options.alsoKnown ?? []), ...Object.keys(hints)])
  // A flag people try that does not exist (--port) answers for its slips too (--prot).
  const hint = near !== undefined ? hints[near] : undefined
  if (hint !== undefined) return `unknown flag --${name}${near === name ? '' : ` (--${near}?)`}: ${hint}`
  return `unknown flag --${name}${near !== undefined ? ` (did you mean --${near}?)` : ' (see --help)'}`
}
