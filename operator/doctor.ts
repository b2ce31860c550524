// `ag-mcp doctor [flags] [--json]`: checks a configuration before a host is wired to it, one line
// per check with the fix for each failure; exit 1 when anything failed. It takes the same flags,
// environment and config file as ag-mcp itself, and never prints the token.
import { statSync, readFileSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import { loadConfig } from '../core/src/config/config.ts'
import type { BundledPlugins } from '../core/src/pipeline/plugins.ts'
import { hookStatus } from '../plugins/agit/hooks.ts'
import { missingScopes, scopeAdvice } from '../plugins/agwp/scopes.ts'
import { Registry } from '../core/src/manifest/registry.ts'
import type { GroupManifest } from '../core/src/manifest/types.ts'
import { resolveGroups } from '../core/src/policy/groups.ts'
import { createScrubber } from '../core/src/safety/scrub.ts'

export interface Io {
  out(s: string): void
  err(s: string): void
  env: NodeJS.ProcessEnv
  cwd: string
}

export type Status = 'ok' | 'warn' | 'fail'
export interface Check {
  check: string
  status: Status
  detail: string
  fix?: string
}

/** Skew beyond which expiry and rate windows disagree between ag-mcp's clock and the server's. */
const MAX_SKEW_S = 60

/** What doctor needs of the agwp plugin's options (their names are the operator's flags). */
interface Upstream {
  upstream: string | undefined
  tokenFile: string | undefined
  tokenEnv: string | undefined
  timeoutMs: number
}

export async function doctor(
  argv: readonly string[],
  io: Io,
  manifests: readonly GroupManifest[],
  plugins: BundledPlugins,
): Promise<number> {
  const json = argv.includes('--json')
  const checks = await runChecks(
    argv.filter((a) => a !== '--json'),
    io,
    manifests,
    plugins,
  )
  if (json) io.out(JSON.stringify({ ok: checks.every((c) => c.status !== 'fail'), checks }, null, 2))
  else
    for (const c of checks)
      io.out(
        `${c.status === 'ok' ? 'ok  ' : c.status === 'warn' ? 'warn' : 'FAIL'}  ${c.check.padEnd(10)} ${c.detail}${c.fix ? `\n      fix: ${c.fix}` : ''}`,
      )
  return checks.some((c) => c.status === 'fail') ? 1 : 0
}

async function runChecks(
  argv: readonly string[],
  io: Io,
  manifests: readonly GroupManifest[],
  plugins: BundledPlugins,
): Promise<Check[]> {
  const checks: Check[] = []
  const scrubber = createScrubber(() => [])
  let config: ReturnType<typeof loadConfig>['config']
  try {
    ;({ config } = loadConfig(argv, io.env, (v) => scrubber.scrub(v) !== v, plugins))
  } catch (e) {
    return [
      {
        check: 'config',
        status: 'fail',
        detail: (e as Error).message,
        fix: 'correct the flag named above (ag-mcp --help lists them)',
      },
    ]
  }
  const registry = new Registry(manifests)
  const groups = resolveGroups(registry.groups, config.allow, config.enable)
  if (!groups.ok) return [{ check: 'config', status: 'fail', detail: groups.error }]
  checks.push({ check: 'config', status: 'ok', detail: `groups ${[...groups.enabled].join(', ')}` })

  const o = config.plugins['agwp'] ?? {}
  const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined)
  const up: Upstream = {
    upstream: str(o['upstream']),
    tokenFile: str(o['token-file']),
    tokenEnv: str(o['token-env']),
    timeoutMs: Number(o['connect-timeout-ms'] ?? 5000) + Number(o['timeout-ms'] ?? 30000),
  }
  const token = readToken(up, io.env, checks)
  if (up.upstream === undefined) {
    checks.push({
      check: 'upstream',
      status: 'fail',
      detail: 'no --upstream: ag-mcp would have no server to talk to',
      fix: 'pass --upstream URL (the URL ag-server prints), or run ag-mcp --local in your repository',
    })
  } else if (token !== undefined) {
    await checkUpstream(up, token, [...groups.enabled], registry, checks)
  } else {
    checks.push({ check: 'upstream', status: 'warn', detail: `${up.upstream}: not checked without a usable token` })
  }
  const top = checkRepository(io.cwd, checks)
  if (top !== undefined) await checkHooks(top, checks)
  return checks
}

function readToken(config: Upstream, env: NodeJS.ProcessEnv, checks: Check[]): string | undefined {
  if (config.tokenFile !== undefined) {
    const f = config.tokenFile
    const st = statSync(f, { throwIfNoEntry: false })
    if (!st) {
      checks.push({
        check: 'token',
        status: 'fail',
        detail: `--token-file ${f} does not exist`,
        fix: 'mint one: ag-server token mint … --out ' + f,
      })
      return undefined
    }
    if (st.isDirectory()) {
      checks.push({
        check: 'token',
        status: 'fail',
        detail: `--token-file ${f} is a directory`,
        fix: 'name the token file inside it',
      })
      return undefined
    }
    let text: string
    try {
      text = readFileSync(f, 'utf8').trim()
    } catch (e) {
      checks.push({
        check: 'token',
        status: 'fail',
        detail: `--token-file ${f} cannot be read (${(e as NodeJS.ErrnoException).code})`,
        fix: `make it readable by this user: chmod 600 ${f}`,
      })
      return undefined
    }
    if (text === '') {
      checks.push({ check: 'token', status: 'fail', detail: `--token-file ${f} is empty`, fix: 'mint a token into it' })
      return undefined
    }
    if ((st.mode & 0o077) !== 0)
      checks.push({
        check: 'token',
        status: 'warn',
        detail: `--token-file ${f} is readable by group or others`,
        fix: `chmod 600 ${f}`,
      })
    else checks.push({ check: 'token', status: 'ok', detail: `--token-file ${f} (mode 0600)` })
    return text
  }
  if (config.tokenEnv !== undefined) {
    const v = env[config.tokenEnv]?.trim()
    if (!v) {
      checks.push({
        check: 'token',
        status: 'fail',
        detail: `--token-env ${config.tokenEnv}: the variable is not set or empty`,
        fix: `export ${config.tokenEnv}=… in the host's environment`,
      })
      return undefined
    }
    checks.push({ check: 'token', status: 'ok', detail: `--token-env ${config.tokenEnv} is set` })
    return v
  }
  checks.push({
    check: 'token',
    status: 'fail',
    detail: 'no token source',
    fix: 'pass --token-file PATH (a 0600 file) or --token-env NAME',
  })
  return undefined
}

async function checkUpstream(
  config: Upstream,
  token: string,
  enabled: string[],
  registry: Registry,
  checks: Check[],
): Promise<void> {
  const url = `${config.upstream as string}/agwp/v1/whoami`
  const origin = new URL(url).origin
  let res: Response
  try {
    res = await fetch(url, {
      headers: { authorization: `Bearer ${token}` },
      redirect: 'manual',
      signal: AbortSignal.timeout(config.timeoutMs),
    })
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause
    const code = cause?.code ?? (e as Error).name
    const tls = /CERT|SSL|TLS/i.test(`${code} ${cause?.message ?? ''}`)
    checks.push({
      check: 'upstream',
      status: 'fail',
      detail: `${origin}: ${tls ? 'TLS failed' : 'cannot connect'} (${code}${cause?.message && tls ? `: ${cause.message}` : ''})`,
      fix: tls
        ? 'the server certificate must be valid for this host name (NODE_EXTRA_CA_CERTS names a private CA)'
        : 'is ag-server running there? check the host and port of --upstream',
    })
    return
  }
  if (res.status >= 300 && res.status < 400) {
    checks.push({
      check: 'upstream',
      status: 'fail',
      detail: `${origin} redirects (${res.status}); ag-mcp never follows redirects`,
      fix: `use the final URL: ${res.headers.get('location') ?? '(no location)'}`,
    })
    return
  }
  if (res.status === 404) {
    checks.push({
      check: 'upstream',
      status: 'fail',
      detail: `${origin}: no AGWP v1 API at ${url} (404)`,
      fix: 'give the ag-server base URL (what ag-server prints, with or without /agwp/v1)',
    })
    return
  }
  if (res.status === 401) {
    checks.push({
      check: 'upstream',
      status: 'fail',
      detail: `${origin} refused the token (401: revoked, expired or not its token)`,
      fix: 'mint a new token (ag-server token mint) into the token file',
    })
    return
  }
  if (!res.ok) {
    checks.push({ check: 'upstream', status: 'fail', detail: `${origin}: whoami answered ${res.status}` })
    return
  }
  const me = (await res.json()) as {
    principal?: string
    scopes?: string[]
    roles?: Record<string, string>
    expires_at?: string
  }
  checks.push({
    check: 'upstream',
    status: 'ok',
    detail: `${origin} answers as ${me.principal ?? '?'} (scopes ${(me.scopes ?? []).join(',')}; roles ${
      Object.entries(me.roles ?? {})
        .map(([r, role]) => `${r}=${role}`)
        .join(', ') || 'none'
    })`,
  })
  const date = Date.parse(res.headers.get('date') ?? '')
  if (Number.isFinite(date)) {
    const skew = Math.round((Date.now() - date) / 1000)
    if (Math.abs(skew) > MAX_SKEW_S)
      checks.push({
        check: 'clock',
        status: 'warn',
        detail: `this clock is ${skew} s ${skew > 0 ? 'ahead of' : 'behind'} the server's`,
        fix: 'synchronise the clock (NTP): token expiry is judged by the server',
      })
    else checks.push({ check: 'clock', status: 'ok', detail: `within ${MAX_SKEW_S} s of the server's` })
  }
  const scopes = me.scopes ?? []
  const missing = missingScopes(
    enabled.filter((g) => registry.groups.get(g)?.plugin === 'agwp'),
    scopes,
  )
  if (missing.length > 0) checks.push({ check: 'scopes', status: 'fail', ...scopeAdvice(missing, scopes) })
  else checks.push({ check: 'scopes', status: 'ok', detail: 'the token has a scope for every enabled upstream group' })
}

/** The repository's top level, when `cwd` is in one. */
function checkRepository(cwd: string, checks: Check[]): string | undefined {
  try {
    const top = execFileSync('git', ['rev-parse', '--show-toplevel'], {
      cwd,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim()
    checks.push({ check: 'repository', status: 'ok', detail: `${top} is a git repository` })
    return top
  } catch {
    checks.push({
      check: 'repository',
      status: 'warn',
      detail: `${cwd} is not in a git repository: local groups (agit) and --local have nothing to work on`,
      fix: 'run ag-mcp from your repository, or git init',
    })
    return undefined
  }
}

/** Information, never a failure: without agit's hooks, commits are not indexed until a sync. */
async function checkHooks(top: string, checks: Check[]): Promise<void> {
  const missing = (await hookStatus(top)).filter((h) => !h.ours).map((h) => h.hook)
  if (missing.length === 0)
    checks.push({ check: 'hooks', status: 'ok', detail: `agit's git hooks are installed in ${top}` })
  else
    checks.push({
      check: 'hooks',
      status: 'warn',
      detail: `agit's git hooks are not installed in ${top} (missing: ${missing.join(', ')})`,
      fix: 'ag-mcp agit init (or ag-mcp agit hooks install)',
    })
}
