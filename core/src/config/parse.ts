// Start-up argv parsing driven by the flag table: small enough to cost nothing at start,
// strict enough to refuse what it does not know (with a suggestion).
import { INFO_FLAGS } from './flags.ts'
import { closest } from '../../../lib/closest.ts'
import type { FlagSpec, FlagTable } from './flags.ts'

export type RawValue = string | number | boolean | readonly string[]
/** Values by flag name, as given (flags, environment, config file), before defaults and checks. */
export type RawFlags = Record<string, RawValue>

export interface ParsedArgs {
  flags: RawFlags
  /** Groups named by --enable-<group>. */
  enable: string[]
  info: (typeof INFO_FLAGS)[number] | undefined
}

export class UsageError extends Error {}

export function parseArgv(argv: readonly string[], table: FlagTable): ParsedArgs {
  const flags: RawFlags = {}
  const enable: string[] = []
  let info: ParsedArgs['info']
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string
    if (!arg.startsWith('--'))
      throw new UsageError(`unexpected argument "${arg}": ag-mcp takes only --flags (see --help)`)
    const eq = arg.indexOf('=')
    const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq)
    const inline = eq === -1 ? undefined : arg.slice(eq + 1)
    if ((INFO_FLAGS as readonly string[]).includes(name)) {
      info = name as ParsedArgs['info']
      continue
    }
    if (name.startsWith('enable-') && inline === undefined) {
      enable.push(name.slice('enable-'.length))
      continue
    }
    if (name.startsWith('no-') && table[name.slice(3)]?.type === 'boolean') {
      flags[name.slice(3)] = false
      continue
    }
    if (name === 'token')
      throw new UsageError(
        'there is no --token flag: a token on the command line shows in process listings; use --token-file PATH (mode 0600) or --token-env NAME',
      )
    const spec = table[name]
    if (spec === undefined) throw new UsageError(`unknown flag --${name}${suggest(name, table)}`)
    if (spec.type === 'boolean') {
      flags[name] = inline === undefined ? true : parseBoolean(name, inline)
      continue
    }
    let value = inline
    if (value === undefined) {
      const next = argv[i + 1]
      if (next === undefined || next.startsWith('--')) {
        if (spec.bare === undefined) throw new UsageError(`--${name} needs a value (${spec.value ?? spec.type})`)
        value = spec.bare
      } else {
        value = next
        i++
      }
    }
    setValue(flags, name, spec, value, `--${name}`)
  }
  return { flags, enable, info }
}

/** Applies one textual value (from argv or the environment) to the raw flag set. */
export function setValue(flags: RawFlags, name: string, spec: FlagSpec, value: string, where: string): void {
  switch (spec.type) {
    case 'list': {
      const prior = flags[name]
      const items = value
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== '')
      flags[name] = [...(Array.isArray(prior) ? prior : []), ...items]
      return
    }
    case 'number': {
      const n = Number(value)
      if (value.trim() === '' || !Number.isFinite(n) || n < 0)
        throw new UsageError(`${where} must be a non-negative number, got "${value}"`)
      flags[name] = n
      return
    }
    case 'boolean':
      flags[name] = parseBoolean(where, value)
      return
    case 'string':
      // A flag that may stand bare reads true/false as on (its bare value) or off.
      if (spec.bare !== undefined && ['true', '1', 'false', '0'].includes(value)) {
        if (value === 'true' || value === '1') flags[name] = spec.bare
        else delete flags[name]
      } else flags[name] = value
  }
}

function parseBoolean(where: string, v: string): boolean {
  if (v === 'true' || v === '1') return true
  if (v === 'false' || v === '0') return false
  throw new UsageError(`${where} is a switch: use it bare, or =true / =false`)
}

function suggest(name: string, table: FlagTable): string {
  const near = closest(name, [...Object.keys(table), ...INFO_FLAGS])
  return near !== undefined ? ` (did you mean --${near}?)` : ' (see --help)'
}
