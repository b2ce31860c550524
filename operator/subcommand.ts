// The first word of an operator command's arguments, as one of its subcommands: no word or
// --help prints the usage, a misspelt one is named with the nearest.
import { closest } from '../lib/closest.ts'

/** A usage error: printed as it is, exit 2. */
export class Usage extends Error {}

export function subcommand<V extends string>(
  argv: readonly string[],
  verbs: readonly V[],
  command: string,
  usage: string,
): { verb: V; rest: string[] } {
  const [verb, ...rest] = argv
  if (verb === undefined || verb === '--help') throw new Usage(usage)
  if (!(verbs as readonly string[]).includes(verb)) {
    const near = closest(verb, verbs)
    throw new Usage(`${command}: unknown command "${verb}"${near ? ` (did you mean ${near}?)` : ''}\n${usage}`)
  }
  return { verb: verb as V, rest }
}
