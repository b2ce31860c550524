// `ag-mcp doctor [flags] [--json]`: checks a configuration before a host is wired to it, one line
// per check with the fix for each failure; exit 1 when anything failed. It takes the same flags,
// environment and config file as ag-mcp itself (`--local` included), and never prints the token.
import { statSync, readFileSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import { loadConfig } from '../core/src/config/config.ts'
import type { BundledPlugins } from '../core/src/pipeline/plugins.ts'
import { hookStatus } from '../plugins/agit/hooks.ts'
import { missingScopes, scopeAdvice } from '../plugins/agwp/scopes.ts'
import { Registry } from '../core/src/manifest/registry.ts'
import type { GroupManifest } from '../core/src/manifest/types.ts'
import { createScrubber } from '../core/src/safety/scrub.ts'
import { servedGroups } from '../core/src/startup.ts'
import { LocalError } from './local/repo.ts'
import { agServerCommand } from './local/setup.ts'
import { AGENT_SCOPES } from './local/tokens.ts'
import { servedArgv } from './tools.ts'

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
  const configFailure = (detail: string): Check[] => [
    { check: 'config', status: 'fail', detail, fix: 'correct the flag named above (ag-mcp --help lists them)' },
  ]
  const target = await servedArgv(argv, io, manifests, plugins)
  if ('error' in target) return configFailure(target.error)
  let config: ReturnType<typeof loadConfig>['config']
  try {
    ;({ config } = loadConfig(target.argv, io.env, (v) => scrubber.scrub(v) !== v, plugins))
  } catch (e) {
    return configFailure((e as Error).message)
  }
  const registry = new Registry(manifests)
  const { resolution: groups } = servedGroups(registry, plugins, config, target.cwd)
  if (!groups.ok) return [{ check: 'config', status: 'fail', detail: groups.error }]
  const mode = target.local ? `local mode on ${target.local}; ` : ''
  checks.push({ check: 'config', status: 'ok', detail: `${mode}groups ${[...groups.enabled].join(', ')}` })
  const upstreamGroups = [...groups.enabled].filter((g) => registry.groups.get(g)?.plugin === 'agwp')
  if (target.local !== undefined) {
    checkLocal(target.local, upstreamGroups, checks)
  } else {
    const o = config.plugins['agwp'] ?? {}
    const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined)
    const up: Upstream = {
      upstream: str(o['upstream']),
      tokenFile: str(o['token-file']),
      tokenEnv: str(o['token-env']),
      timeoutMs: Number(o['connect-timeout-ms'] ?? 5000) + Number(o['timeout-ms'] ?? 30000),
    }
    // With no AGWP group on (no upstream given, none named), ag-mcp is a local thought log only:
    // nothing is missing, and doctor says how to get the rest.
    if (
      up.upstream === undefined &&
      up.tokenFile === undefined &&
      up.tokenEnv === undefined &&
      upstreamGroups.length === 0
    )
      checks.push({
        check: 'upstream',
        status: 'warn',
        detail: 'none given: ag-mcp serves only its local groups (no AGWP tools)',
        fix: 'for your own repository: ag-mcp doctor --local (then ag-mcp --local); for a shared server: --upstream URL --token-file PATH',
      })
    else {
      const token = readToken(up, io.env, checks)
      if (up.upstream === undefined) {
        checks.push({
          check: 'upstream',
          status: 'fail',
          detail: 'no --upstream: ag-mcp would have no server to talk to',
          fix: 'pass --upstream URL (the URL ag-server prints), or for your own repository: ag-mcp doctor --local',
        })
      } else if (token !== undefined) {
        await checkUpstream(up, token, upstreamGroups, checks)
      } else {
        checks.push({ check: 'upstream', status: 'warn', detail: `${up.upstream}: not checked without a usable token` })
      }
    }
  }
  const top = checkRepository(target.cwd, checks, target.local !== undefined)
  if (top !== undefined) await checkHooks(top, checks)
  return checks
}

/**
 * What `ag-mcp --local` needs besides its flags: the ag-server it starts, and a token that can
 * serve every enabled AGWP group (local mode's agent token has fixed scopes: it can only propose).
 */
function checkLocal(repo: string, upstreamGroups: readonly string[], checks: Check[]): void {
  const scopes = AGENT_SCOPES.split(',')
  checks.push({
    check: 'token',
    status: 'ok',
    detail: `local mode mints one per session (agent:local, agent:local-2, …; scopes ${AGENT_SCOPES}) and revokes it at the end`,
  })
  try {
    const command = agServerCommand()
    checks.push({
      check: 'upstream',
      status: 'ok',
      detail: `local mode starts a private ag-server (${command.join(' ')})`,
    })
  } catch (e) {
    if (!(e instanceof LocalError)) throw e
    checks.push({
      check: 'upstream',
      status: 'fail',
      detail: e.message,
      fix: 'run the ag-mcp.mjs of an installed package or a build (npm run build), which has ag-server.mjs beside it',
    })
  }
  const missing = missingScopes(upstreamGroups, scopes)
  if (missing.length > 0)
    checks.push({
      check: 'scopes',
      status: 'fail',
      detail: `enabled group(s) ${missing.join(', ')} need scope(s) local mode's agent never gets (it has ${AGENT_SCOPES}): ${repo}'s reviews and integration are yours, through ag-mcp proposals`,
      fix: `leave ${missing.join(', ')} out of --allow`,
    })
  else
    checks.push({
      check: 'scopes',
      status: 'ok',
      detail: 'the local token has a scope for every enabled upstream group',
    })
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
  upstreamGroups: readonly string[],
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
  const missing = missingScopes(upstreamGroups, scopes)
  if (missing.length > 0) checks.push({ check: 'scopes', status: 'fail', ...scopeAdvice(missing, scopes) })
  else checks.push({ check: 'scopes', status: 'ok', detail: 'the token has a scope for every enabled upstream group' })
}

/** The repository's top level, when `cwd` is in one; local mode needs one with a commit. */
function checkRepository(cwd: string, checks: Check[], local: boolean): string | undefined {
  const git = (args: string[]) =>
    execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
  let top: string
  try {
    top = git(['rev-parse', '--show-toplevel'])
  } catch {
    checks.push({
      check: 'repository',
      status: local ? 'fail' : 'warn',
      detail: `${cwd} is not in a git repository: local groups (agit) and --local have nothing to work on`,
      fix: local
        ? 'name a git repository (ag-mcp --local PATH), or git init there'
        : 'run ag-mcp from your repository, or git init',
    })
    return undefined
  }
  if (local) {
    try {
      git(['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'])
    } catch {
      checks.push({
        check: 'repository',
        status: 'fail',
        detail: `${top} has no commit yet: local mode serves your branches, and there is none`,
        fix: 'make a first commit (git add -A && git commit -m "first commit"), then start ag-mcp --local',
      })
      return top
    }
  }
  checks.push({ check: 'repository', status: 'ok', detail: `${top} is a git repository` })
  return top
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
      fix: 'ag-mcp agit init --write (or ag-mcp agit hooks install)',
    })
}
