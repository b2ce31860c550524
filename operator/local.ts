// Local mode: ag-mcp for the repository you are in, with nothing deployed. A private ag-server
// runs as a child on a loopback port, its state under <repo>/.ag/ (excluded from git through
// .git/info/exclude, so no tracked file changes); the agent gets a token of its own that can only
// read, write into workspaces, propose and coordinate; its proposals are copied into your
// repository as refs/proposals/<id>, where `ag-mcp proposals` shows and integrates them.
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  watch,
  writeFileSync,
} from 'node:fs'
import type { FSWatcher } from 'node:fs'
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path'
import { createInterface } from 'node:readline'

export class LocalError extends Error {}

/** The agent's principal and scopes: it can only propose (the safety thesis, locally). */
export const AGENT = { principal: 'agent:local', scopes: 'read,workspace,propose,coordinate' }
/**
 * The person at the keyboard: reviews and integrates through `ag-mcp proposals`. `propose` is
 * there for `proposals reject`: AGWP's withdraw needs it (a maintainer may withdraw any proposal).
 */
export const OWNER = { principal: 'human:owner', scopes: 'read,propose,review,integrate' }

export interface LocalState {
  /** The repository's working tree (its top level). */
  top: string
  /** <top>/.ag */
  dir: string
  /** The private ag-server's data directory. */
  data: string
  /** The repository's name inside the private ag-server. */
  repo: string
  /** The private ag-server's bare copy of the repository. */
  bare: string
  /** How to run ag-server: node and ag-server.mjs, or this executable's embedded one. */
  agServer: readonly string[]
}

const GIT_ENV = { GIT_TERMINAL_PROMPT: '0' }

function git(cwd: string, args: string[]): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, ...GIT_ENV },
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim()
}

/**
 * How to run ag-server. The npm package ships ag-server.mjs beside ag-mcp.mjs; the standalone
 * executable embeds it and runs it as `<executable> ag-server …` (bin/ag-mcp-exe.ts), so local
 * mode needs no Node install there either.
 */
function agServerCommand(): readonly string[] {
  const sea = process.getBuiltinModule('node:sea') as { isSea(): boolean } | undefined
  if (sea?.isSea() === true) return [process.execPath, EMBEDDED_AG_SERVER]
  const self = process.argv[1] ? realpathSync(process.argv[1]) : ''
  const candidate = join(dirname(self), 'ag-server.mjs')
  if (!existsSync(candidate))
    throw new LocalError(`local mode runs ag-server.mjs from beside ag-mcp, and ${candidate} does not exist`)
  return [process.execPath, candidate]
}

/** The standalone executable's argument that runs its embedded ag-server (bin/ag-mcp-exe.ts). */
export const EMBEDDED_AG_SERVER = 'ag-server'

function agServer(s: Pick<LocalState, 'agServer'>, args: string[]): string {
  const [program, ...leading] = s.agServer
  const r = spawnSync(program as string, [...leading, ...args], { encoding: 'utf8' })
  if (r.status !== 0) throw new LocalError(`ag-server ${args[0] ?? ''} failed: ${(r.stderr || r.stdout).trim()}`)
  return r.stdout.trim()
}

/** The repository at `where` (default: the working directory's), set up for local mode once. */
export function prepareLocal(where: string | undefined, cwd: string, o: { create: boolean }): LocalState {
  const start = resolve(cwd, where ?? '.')
  let top: string
  try {
    top = git(start, ['rev-parse', '--show-toplevel'])
  } catch {
    throw new LocalError(
      `${start} is not inside a git repository: run git init there, or name one (ag-mcp --local PATH)`,
    )
  }
  if (git(top, ['rev-parse', '--is-bare-repository']) === 'true')
    throw new LocalError(`${top} is a bare repository; local mode needs a working tree`)
  const dir = join(top, '.ag')
  const s: LocalState = { top, dir, data: join(dir, 'server'), repo: '', bare: '', agServer: agServerCommand() }
  const meta = join(dir, 'local.json')
  if (o.create) excludeFromGit(top)
  if (!existsSync(meta) || !existsSync(join(s.data, 'admin.token'))) {
    if (!o.create) throw new LocalError(`${top} has no local-mode state (.ag/): run ag-mcp --local there first`)
    mkdirSync(dir, { recursive: true })
    rmSync(s.data, { recursive: true, force: true })
    const repo =
      basename(top)
        .replace(/[^A-Za-z0-9._-]/g, '-')
        .replace(/^[^A-Za-z0-9]+/, '') || 'repo'
    agServer(s, ['init', s.data])
    agServer(s, ['repo', 'add', repo, '--from', top, '--data', s.data])
    agServer(s, [
      'role',
      'set',
      '--repo',
      repo,
      '--principal',
      AGENT.principal,
      '--role',
      'contributor',
      '--data',
      s.data,
    ])
    agServer(s, [
      'role',
      'set',
      '--repo',
      repo,
      '--principal',
      OWNER.principal,
      '--role',
      'maintainer',
      '--data',
      s.data,
    ])
    // You are the reviewer: integrating is your approval.
    agServer(s, ['policy', 'set', '--repo', repo, '--required-approvals', '0', '--data', s.data])
    writeFileSync(meta, `${JSON.stringify({ repo }, null, 2)}\n`)
  }
  s.repo = (JSON.parse(readFileSync(meta, 'utf8')) as { repo: string }).repo
  s.bare = join(s.data, 'repos', `${s.repo}.git`)
  return s
}

/** .ag/ is listed in .git/info/exclude: ignored by git, and no tracked file (.gitignore) changes. */
function excludeFromGit(top: string): void {
  const exclude = resolve(top, git(top, ['rev-parse', '--git-path', 'info/exclude']))
  const current = existsSync(exclude) ? readFileSync(exclude, 'utf8') : ''
  if (current.split('\n').some((l) => l.trim() === '/.ag/' || l.trim() === '.ag/' || l.trim() === '.ag')) return
  mkdirSync(dirname(exclude), { recursive: true })
  appendFileSync(exclude, `${current === '' || current.endsWith('\n') ? '' : '\n'}# ag-mcp local mode state\n/.ag/\n`)
}

/** Your branches, as they are now, become the private server's (it only mirrors them). */
export function syncBranchesIn(s: LocalState): void {
  git(s.top, ['push', '--quiet', '--force', s.bare, 'refs/heads/*:refs/heads/*'])
}

/** The agent's proposals appear in your repository as refs/proposals/<id>. */
export function syncProposalsOut(s: LocalState): void {
  git(s.top, ['fetch', '--quiet', s.bare, '+refs/proposals/*:refs/proposals/*'])
}

/**
 * A token for `who`, minted through the running private server's admin API with the
 * repository's admin token (.ag/server/admin.token), and written to a 0600 file under
 * .ag/tokens named for this process. Asking the server costs a request; the ag-server command
 * line cost a Node process to mint and another to revoke, about a third of a second of CPU each.
 */
export async function mintToken(
  s: LocalState,
  server: Pick<PrivateServer, 'url'>,
  who: { principal: string; scopes: string },
  ttlSeconds: number,
): Promise<{ file: string; id: string }> {
  const tokens = join(s.dir, 'tokens')
  mkdirSync(tokens, { recursive: true, mode: 0o700 })
  // Files of processes that are gone (killed before they could clean up) go first.
  for (const f of readdirSync(tokens)) {
    const pid = Number(/-(\d+)\.token$/.exec(f)?.[1])
    if (pid && !alive(pid)) rmSync(join(tokens, f), { force: true })
  }
  const file = join(tokens, `${who.principal.replace(/[^a-z]/g, '-')}-${process.pid}.token`)
  rmSync(file, { force: true })
  const minted = (await adminCall(s, server, 'POST', '/admin/tokens', {
    principal: who.principal,
    scopes: who.scopes.split(','),
    repos: [s.repo],
    ttl_s: ttlSeconds,
    label: `ag-mcp local pid ${process.pid}`,
  })) as { token?: unknown; info?: { id?: unknown } }
  if (typeof minted.token !== 'string' || typeof minted.info?.id !== 'string')
    throw new LocalError('the private ag-server answered a token request without a token')
  // The file is created with its final mode: the secret is never readable by anyone else.
  writeFileSync(file, `${minted.token}\n`, { mode: 0o600, flag: 'wx' })
  return { file, id: minted.info.id }
}

/** Revokes the token and removes its file; a failure is left to the token's expiry. */
export async function revokeToken(
  s: LocalState,
  server: Pick<PrivateServer, 'url'>,
  t: { file: string; id: string },
): Promise<void> {
  rmSync(t.file, { force: true })
  await adminCall(s, server, 'DELETE', `/admin/tokens/${encodeURIComponent(t.id)}`).catch(() => undefined)
}

async function adminCall(
  s: LocalState,
  server: Pick<PrivateServer, 'url'>,
  method: string,
  path: string,
  body?: unknown,
): Promise<unknown> {
  const admin = readFileSync(join(s.data, 'admin.token'), 'utf8').trim()
  const res = await fetch(`${server.url}/agwp/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    redirect: 'error',
  })
  const json = (await res.json().catch(() => ({}))) as { error?: { code?: string; message?: string } }
  if (!res.ok)
    throw new LocalError(
      `the private ag-server refused ${method} ${path}: ${json.error?.code ?? res.status} ${json.error?.message ?? ''}`.trim(),
    )
  return json
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'
  }
}

export interface PrivateServer {
  /** The upstream base URL (without /agwp/v1). */
  url: string
  child: ChildProcess | undefined
  stop(): Promise<void>
}

/**
 * The private ag-server: a child on a loopback port that exits when its stdin closes, which
 * happens when this process ends in any way (even SIGKILL: the kernel closes the pipe). When a
 * local session already serves this repository, its server is used instead.
 */
export async function startServer(s: LocalState): Promise<PrivateServer> {
  const lock = readLock(s.data)
  if (lock?.kind === 'server' && lock.listen && alive(lock.pid))
    return { url: `http://${lock.listen}`, child: undefined, stop: async () => undefined }
  const [program, ...leading] = s.agServer
  const child = spawn(
    program as string,
    [...leading, 'serve', '--data', s.data, '--listen', '127.0.0.1:0', '--exit-with-stdin'],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  )
  const exited = new Promise<void>((r) => child.once('exit', () => r()))
  const url = await new Promise<string>((resolveUrl, reject) => {
    const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream })
    lines.on('line', (l) => {
      const m = /listening on (http:\/\/\S+?)\/agwp\/v1/.exec(l)
      if (m?.[1]) resolveUrl(m[1])
    })
    child.once('exit', (code) =>
      reject(new LocalError(`the private ag-server exited (${String(code)}) before it listened`)),
    )
  })
  child.stdout?.resume()
  return {
    url,
    child,
    stop: async () => {
      child.stdin?.end()
      await exited
    },
  }
}

function readLock(data: string): { pid: number; kind: string; listen?: string } | undefined {
  try {
    return JSON.parse(readFileSync(join(data, 'lock'), 'utf8')) as { pid: number; kind: string; listen?: string }
  } catch {
    return undefined
  }
}

/** Copies proposals into your repository whenever the private server records one. */
export function watchProposals(s: LocalState, log: (m: string) => void): FSWatcher | undefined {
  const dir = join(s.bare, 'refs', 'proposals')
  mkdirSync(dir, { recursive: true })
  let pending: NodeJS.Timeout | undefined
  try {
    const w = watch(dir, () => {
      if (pending) return
      pending = setTimeout(() => {
        pending = undefined
        try {
          syncProposalsOut(s)
        } catch (e) {
          log(`could not copy proposals into ${s.top}: ${(e as Error).message}`)
        }
      }, 100)
    })
    w.unref()
    return w
  } catch {
    return undefined
  }
}

export interface LocalIo {
  err(s: string): void
  cwd: string
}

/** The local plugins' root flags, and the variables that set them too. */
const ROOT_FLAGS = [
  ['--agit-root', 'AG_MCP_AGIT_ROOT'],
  ['--continuity-root', 'AG_MCP_CONTINUITY_ROOT'],
] as const

/**
 * The local plugins work on the served repository wherever the host starts ag-mcp (mcporter
 * starts a server in its config file's folder): started outside it, each root the operator did
 * not set is set to it. Inside it, nothing is added (a sub-project's own .agentpack/ still wins).
 */
function localRoots(top: string, cwd: string, rest: readonly string[], env: NodeJS.ProcessEnv): string[] {
  const inside = (dir: string) => {
    const r = relative(top, dir)
    return r === '' || (!r.startsWith('..') && !isAbsolute(r))
  }
  let here = resolve(cwd)
  try {
    here = realpathSync(here)
  } catch {
    // a working directory that vanished: outside, then
  }
  if (inside(here)) return []
  return ROOT_FLAGS.filter(
    ([flag, variable]) => !env[variable] && !rest.some((a) => a === flag || a.startsWith(`${flag}=`)),
  ).flatMap(([flag]) => [flag, top])
}

/**
 * `ag-mcp --local [REPO] [flags]`: sets up the repository, starts its private ag-server, mints the
 * agent's token and serves MCP on stdio through it; at the end (stdin EOF, SIGTERM) copies the
 * proposals out, revokes the token and stops the server. A parent killed outright cannot clean up,
 * but its server still exits (its stdin closes) and the token expires.
 */
export async function runLocal(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  serve: (argv: readonly string[], env: NodeJS.ProcessEnv) => Promise<number>,
  io: LocalIo,
): Promise<number> {
  const i = argv.indexOf('--local')
  const next = argv[i + 1]
  const where = next !== undefined && !next.startsWith('--') ? next : undefined
  const rest = argv.filter((_, j) => j !== i && !(where !== undefined && j === i + 1))
  const upstreamFlag = rest.find((a) => /^--(upstream|token-file|token-env)(=|$)/.test(a))
  if (upstreamFlag) {
    io.err(`ag-mcp: --local starts its own ag-server and token; drop ${upstreamFlag.split('=')[0]}`)
    return 2
  }
  // --help, --version and --print-config need no server.
  if (rest.some((a) => a === '--help' || a === '--version')) return serve(rest, env)
  let s: LocalState
  let token: { file: string; id: string }
  let server: PrivateServer | undefined
  try {
    s = prepareLocal(where, io.cwd, { create: true })
    syncBranchesIn(s)
    server = await startServer(s)
    token = await mintToken(s, server, AGENT, 12 * 3600)
  } catch (e) {
    await server?.stop()
    if (!(e instanceof LocalError)) throw e
    io.err(`ag-mcp --local: ${e.message}`)
    return 2
  }
  const watcher = watchProposals(s, (m) => io.err(`ag-mcp --local: ${m}`))
  try {
    return await serve(
      [...rest, ...localRoots(s.top, io.cwd, rest, env), '--upstream', server.url, '--token-file', token.file],
      env,
    )
  } finally {
    watcher?.close()
    try {
      syncProposalsOut(s)
    } catch (e) {
      io.err(`ag-mcp --local: could not copy proposals into ${s.top}: ${(e as Error).message}`)
    }
    await revokeToken(s, server, token)
    await server.stop()
  }
}
