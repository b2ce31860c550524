// One temporary world per mode: a home directory (and XDG folders, CODEX_HOME) the hosts write
// their configuration and state into, never the real user's, and a git repository ag-mcp serves.
// The hosts get an environment built from nothing: no API key, no real config, telemetry and
// update checks off, and every model endpoint pointed at a closed loopback port, so nothing
// they do can reach a model or the network.
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { GIT_IDENTITY } from '../helpers/git-identity.ts'
import { BINARY } from '../helpers/mcp-process.ts'

/** A port nothing listens on (discard): a model request fails at once, on this machine. */
const NOWHERE = 'http://127.0.0.1:9'

export interface Sandbox {
  root: string
  home: string
  repo: string
  /** The repository's name in local mode (its folder's name). */
  repoName: string
  env: NodeJS.ProcessEnv
  close(): void
}

export interface Ran {
  code: number | null
  stdout: string
  stderr: string
  /** The command as a person would type it, for the report. */
  shown: string
}

export function openSandbox(mode: string): Sandbox {
  const root = realpathSync(mkdtempSync(join(tmpdir(), `ag-mcp-hosts-${mode}-`)))
  const home = join(root, 'home')
  const repo = join(root, 'project')
  for (const d of [home, repo, join(home, '.config'), join(home, '.local/share'), join(home, '.cache')])
    mkdirSync(d, { recursive: true })
  const env: NodeJS.ProcessEnv = {
    PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    LANG: 'C.UTF-8',
    TERM: 'dumb',
    NO_COLOR: '1',
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local/share'),
    XDG_CACHE_HOME: join(home, '.cache'),
    XDG_STATE_HOME: join(home, '.local/state'),
    CODEX_HOME: join(home, '.codex'),
    TMPDIR: root,
    // Claude Code: no telemetry, error reports, update checks or other non-essential requests.
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_AUTOUPDATER: '1',
    DISABLE_ERROR_REPORTING: '1',
    ANTHROPIC_BASE_URL: NOWHERE,
    OPENAI_BASE_URL: `${NOWHERE}/v1`,
    // (no GOOGLE_GEMINI_BASE_URL: with no auth method Gemini CLI then refuses even `mcp list`'s
    // banner with "Invalid auth method selected."; without auth it calls no model anyway. No
    // GEMINI_CLI_TRUST_WORKSPACE either: the folder is trusted as a person trusts it, approve.ts)
    GEMINI_TELEMETRY_ENABLED: 'false',
    ...GIT_IDENTITY,
  }
  const git = (...args: string[]) => run(repo, env, 'git', args)
  git('init', '-q', '-b', 'main')
  writeFileSync(join(repo, 'README.md'), '# project\nhello from test:hosts\n')
  git('add', 'README.md')
  git('commit', '-q', '-m', 'initial')
  return {
    root,
    home,
    repo,
    repoName: 'project',
    env,
    close: () => rmSync(root, { recursive: true, force: true }),
  }
}

/** Runs a command to its end (at most `timeoutMs`), with stdin closed. */
export function run(cwd: string, env: NodeJS.ProcessEnv, cmd: string, args: string[], timeoutMs = 90_000): Ran {
  const r = spawnSync(cmd, args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: timeoutMs })
  return {
    code: r.status,
    stdout: r.stdout ?? '',
    stderr: `${r.stderr ?? ''}${r.error ? `\n${r.error.message}` : ''}`,
    shown: [cmd, ...args].map(short).join(' '),
  }
}

/** `ag-mcp …` itself (install, agit init), as the user would run it in this sandbox. */
export function agMcp(box: Sandbox, ...args: string[]): Ran {
  const r = run(box.repo, box.env, process.execPath, [BINARY, ...args])
  if (r.code !== 0) throw new Error(`ag-mcp ${args.join(' ')} failed (${r.code}): ${r.stderr}`)
  return r
}

/** A long absolute path shown by its last two parts. */
function short(a: string): string {
  return a.startsWith('/') && a.split('/').length > 4 ? `…/${a.split('/').slice(-2).join('/')}` : a
}
