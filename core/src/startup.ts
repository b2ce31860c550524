// What a configuration serves, decided once for everyone who asks: ag-mcp itself at start-up
// (serve.ts), and the operator's commands that must say exactly what it would do (`ag-mcp tools`,
// `doctor`, `install`, local mode's early check). Each step throws or answers what ag-mcp's
// start-up would; nothing here opens a connection.
import { loadConfig } from './config/config.ts'
import type { Config } from './config/config.ts'
import { pluginFlag } from './config/flags.ts'
import { UsageError } from './config/parse.ts'
import { flagValues, namedTokens } from './config/named-tokens.ts'
import type { Logger } from './plugin-api.ts'
import { Registry } from './manifest/registry.ts'
import type { GroupManifest } from './manifest/types.ts'
import type { BundledPlugins } from './pipeline/plugins.ts'
import { createTokenSource } from './pipeline/tokens.ts'
import type { TokenSourceWithSecrets } from './pipeline/tokens.ts'
import { unavailableGroups } from './policy/availability.ts'
import { resolveGroups } from './policy/groups.ts'
import type { GroupResolution } from './policy/groups.ts'
import { createScrubber, REDACTED } from './safety/scrub.ts'
import type { Scrubber } from './safety/scrub.ts'
import { sanitizeText } from './safety/sanitize.ts'

export interface Served {
  resolution: GroupResolution
  /** Default groups that cannot work here (no upstream, no git repository), with why. */
  absent: Map<string, string>
}

/**
 * The groups a process with this configuration serves, run in `cwd`: the operator's --allow and
 * --enable-<group>, with the default groups that cannot work here left out.
 */
export function servedGroups(
  registry: Registry,
  plugins: BundledPlugins,
  config: Readonly<Config>,
  cwd: string,
): Served {
  const absent = unavailableGroups({
    groups: registry.groups,
    pluginOptions: Object.fromEntries(Object.entries(plugins).map(([n, p]) => [n, p.options])),
    values: config.plugins,
    flagOf: (plugin, option) => {
      const entry = plugins[plugin]
      return entry ? `--${pluginFlag(entry, option)}` : `--${option}`
    },
    cwd,
  })
  return { resolution: resolveGroups(registry.groups, config.allow, config.enable, absent), absent }
}

/**
 * Each plugin's credential, read as ag-mcp reads it at start-up: a missing, empty or unreadable
 * one throws (its message is what ag-mcp prints), and the scrubber may then know every value.
 */
export async function readCredentials(
  plugins: BundledPlugins,
  config: Readonly<Config>,
  environment: NodeJS.ProcessEnv,
  log: Logger,
): Promise<Record<string, TokenSourceWithSecrets>> {
  const credentials: Record<string, TokenSourceWithSecrets> = {}
  for (const [name, entry] of Object.entries(plugins)) {
    const roles = Object.entries(entry.options)
    const fileOption = roles.find(([, s]) => s.role === 'credential-file')?.[0]
    const envOption = roles.find(([, s]) => s.role === 'credential-env')?.[0]
    if (fileOption === undefined && envOption === undefined) continue
    const values = config.plugins[name] ?? {}
    const file = fileOption !== undefined ? values[fileOption] : undefined
    const env = envOption !== undefined ? values[envOption] : undefined
    credentials[name] = await createTokenSource({
      file: typeof file === 'string' ? file : undefined,
      env: typeof env === 'string' ? env : undefined,
      flags: {
        file: fileOption !== undefined ? pluginFlag(entry, fileOption) : '',
        env: envOption !== undefined ? pluginFlag(entry, envOption) : '',
      },
      environment,
      log,
    })
  }
  return credentials
}

/**
 * A start-up message with every flag value that holds a secret replaced whole (so no part of
 * it shows, however the message quotes it), then scrubbed.
 */
export function hideSecretValues(message: string, values: readonly string[], scrubber: Scrubber): string {
  let out = sanitizeText(message).text
  for (const v of values) if (v !== '' && scrubber.scrub(v) !== v) out = out.split(v).join(REDACTED)
  return scrubber.scrub(out)
}

export interface StartupVerdict {
  /** What ag-mcp would print and stop with (without its `ag-mcp: ` prefix), or undefined. */
  error: string | undefined
  /** What it would warn about at start (a group-readable token file, an --enable-<group>). */
  warnings: string[]
  /** The groups it would serve, when it would start. */
  enabled: string[]
}

/**
 * What `ag-mcp ARGV` would do at start-up, short of serving: refuse (and with which message),
 * warn, or serve these groups. The same steps serve.ts takes, in the same order, so the operator's
 * commands cannot disagree with it.
 */
export async function startupVerdict(o: {
  argv: readonly string[]
  env: NodeJS.ProcessEnv
  manifests: readonly GroupManifest[]
  plugins: BundledPlugins
  cwd: string
}): Promise<StartupVerdict> {
  const warnings: string[] = []
  const note = (m: string, fields?: Record<string, unknown>): void =>
    void warnings.push(
      fields
        ? `${m} (${Object.entries(fields)
            .map(([k, v]) => `${k} ${String(v)}`)
            .join(', ')})`
        : m,
    )
  const log: Logger = { debug: () => undefined, info: () => undefined, warn: note, error: note }
  const scrubber = createScrubber(() => namedTokens(o.argv, o.env))
  const refuse = (e: unknown): StartupVerdict => ({
    error: hideSecretValues((e as Error).message, flagValues(o.argv, o.env), scrubber),
    warnings,
    enabled: [],
  })
  let config: Readonly<Config>
  try {
    ;({ config } = loadConfig(o.argv, o.env, (v) => createScrubber(() => []).scrub(v) !== v, o.plugins))
  } catch (e) {
    if (e instanceof UsageError) return refuse(e)
    throw e
  }
  const served = servedGroups(new Registry(o.manifests), o.plugins, config, o.cwd)
  if (!served.resolution.ok) return refuse(new Error(served.resolution.error))
  warnings.push(...served.resolution.warnings)
  try {
    await readCredentials(o.plugins, config, o.env, log)
  } catch (e) {
    return refuse(e)
  }
  return { error: undefined, warnings, enabled: [...served.resolution.enabled] }
}
