// The credential source the core owns: read from a file (re-read on refresh, for rotation
// without restart) or from an environment variable. The value never leaves this module
// except to the plugin that sends it and to the scrubber that hides it.
import type { Logger, TokenSource } from '../plugin-api.ts'

export interface TokenSourceWithSecrets extends TokenSource {
  /** Every token value seen in this process, for the scrubber (old ones stay secret too). */
  secrets(): readonly string[]
}

export async function createTokenSource(opts: {
  file: string | undefined
  env: string | undefined
  /** The flags that named them (a plugin's `credential-file` and `credential-env` options), for messages. */
  flags?: { file: string; env: string }
  environment: NodeJS.ProcessEnv
  log: Logger
}): Promise<TokenSourceWithSecrets> {
  const fileFlag = `--${opts.flags?.file ?? 'token-file'}`
  const envFlag = `--${opts.flags?.env ?? 'token-env'}`
  const seen: string[] = []
  let current: string | undefined
  const remember = (t: string | undefined): string | undefined => {
    if (t !== undefined && !seen.includes(t)) seen.push(t)
    current = t
    return t
  }
  const { file, env, environment, log } = opts
  if (file !== undefined) {
    // Fetched, not imported, and only with a token file: loading node:fs/promises costs start-up time.
    const { readFile, stat } = process.getBuiltinModule('node:fs/promises')
    const st = await stat(file).catch((e: NodeJS.ErrnoException) => {
      throw new Error(`${fileFlag} ${file}: cannot read it (${e.code ?? e.message})`)
    })
    if (st.isDirectory()) throw new Error(`${fileFlag} ${file} is a directory; name the token file inside it`)
    if ((st.mode & 0o077) !== 0)
      log.warn('token file is readable by group or others; chmod 600 it', { file, mode: (st.mode & 0o777).toString(8) })
    const read = async (): Promise<string | undefined> => {
      const text = (await readFile(file, 'utf8')).trim()
      return text === '' ? undefined : text
    }
    remember(
      await read().catch((e: NodeJS.ErrnoException) => {
        throw new Error(
          `${fileFlag} ${file}: cannot read it (${e.code ?? e.message}); it must be readable by this user`,
        )
      }),
    )
    if (current === undefined) throw new Error(`${fileFlag} ${file}: the file is empty`)
    return {
      current: async () => current,
      refresh: async () => {
        try {
          return remember(await read())
        } catch (e) {
          log.warn('token file could not be re-read', { file, error: (e as NodeJS.ErrnoException).code ?? 'unknown' })
          return current
        }
      },
      secrets: () => seen,
    }
  }
  if (env !== undefined) {
    // Not echoed unless it is a name: a token pasted here must not reach the error message.
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,127}$/.test(env))
      throw new Error(
        '--token-env takes the NAME of an environment variable; the value given is not one (not shown: it may be the token itself)',
      )
    const value = environment[env]?.trim()
    if (value === undefined || value === '') throw new Error(`${envFlag} ${env}: the variable is not set or empty`)
    remember(value)
    return { current: async () => current, refresh: async () => current, secrets: () => seen }
  }
  return { current: async () => undefined, refresh: async () => undefined, secrets: () => seen }
}
