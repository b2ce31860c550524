// The token values that argv, the environment and the config file point at, found without
// validating anything. A start-up error or --print-config happens before (or without) the
// token source being opened, yet must not echo a token typed into the wrong flag: the scrubber
// needs the value to recognise it. Read only on those paths, never on a normal start.
import { envName } from './flags.ts'

const SOURCES = ['token-file', 'token-env'] as const
type Source = (typeof SOURCES)[number]

function named(argv: readonly string[], env: NodeJS.ProcessEnv): Record<Source, string[]> {
  const out: Record<Source, string[]> = { 'token-file': [], 'token-env': [] }
  const add = (source: Source, v: unknown): void => {
    if (typeof v === 'string' && v !== '') out[source].push(v)
  }
  const configs: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string
    for (const flag of [...SOURCES, 'config'] as const) {
      let value: string | undefined
      if (arg === `--${flag}`) value = argv[++i]
      else if (arg.startsWith(`--${flag}=`)) value = arg.slice(flag.length + 3)
      if (value === undefined) continue
      if (flag === 'config') configs.push(value)
      else add(flag, value)
    }
  }
  for (const source of SOURCES) add(source, env[envName(source)])
  for (const path of configs) {
    try {
      const data = JSON.parse(process.getBuiltinModule('node:fs').readFileSync(path, 'utf8')) as Record<string, unknown>
      for (const source of SOURCES) add(source, data[source])
    } catch {
      // an unreadable config file is reported by the real loader
    }
  }
  return out
}

/** Every token value the configuration names and that can be read now; never throws. */
export function namedTokens(argv: readonly string[], env: NodeJS.ProcessEnv): string[] {
  const sources = named(argv, env)
  const tokens: string[] = []
  for (const file of sources['token-file']) {
    try {
      tokens.push(process.getBuiltinModule('node:fs').readFileSync(file, 'utf8').trim())
    } catch {
      // missing or unreadable: nothing to hide
    }
  }
  for (const name of sources['token-env']) tokens.push(env[name]?.trim() ?? '')
  return tokens.filter((x) => x !== '')
}

/** Every value given to a flag (argv, AG_MCP_* variables), to compare with the token. */
export function flagValues(argv: readonly string[], env: NodeJS.ProcessEnv): string[] {
  const values = argv.flatMap((a) => (a.startsWith('--') && a.includes('=') ? [a, a.slice(a.indexOf('=') + 1)] : [a]))
  for (const [k, v] of Object.entries(env)) if (k.startsWith('AG_MCP_') && v !== undefined) values.push(v)
  return values
}
