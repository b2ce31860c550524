// Local mode from outside, for the tests: repositories of every shape (built with git itself,
// large ones with one fast-import), an agent session through the real binary over stdio, the
// person's `ag-mcp proposals` commands, and what local mode leaves on disk (bytesUnder: the
// sizes `ag-mcp local status` reports).
import { execFileSync, spawnSync } from 'node:child_process'
import type { SpawnSyncReturns } from 'node:child_process'
import { createHash } from 'node:crypto'
import { lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs'
import { join } from 'node:path'
import { bytesUnder } from '../../operator/local/footprint.ts'
import { GIT_IDENTITY } from './git-identity.ts'
import { BINARY, startMcp } from './mcp-process.ts'
import type { McpProcess } from './mcp-process.ts'

export { bytesUnder }

/** The person's environment: an empty HOME, no global config, their identity in GIT_* variables. */
export function personEnv(home: string, extra: Record<string, string | undefined> = {}): Record<string, string> {
  const env: Record<string, string | undefined> = {
    PATH: process.env['PATH'] ?? '',
    HOME: home,
    ...GIT_IDENTITY,
    ...extra,
  }
  // undefined drops a variable: e.g. the identity, to see git's config (or nothing) resolve it.
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined))
}

/** No GIT_AUTHOR_* / GIT_COMMITTER_* variables: git resolves the identity from its config. */
export const NO_IDENTITY_ENV = {
  GIT_AUTHOR_NAME: undefined,
  GIT_AUTHOR_EMAIL: undefined,
  GIT_COMMITTER_NAME: undefined,
  GIT_COMMITTER_EMAIL: undefined,
}

export function git(cwd: string, args: string[], input?: string): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, ...GIT_IDENTITY, GIT_PROTOCOL_FROM_USER: '1' },
    stdio: ['pipe', 'pipe', 'pipe'],
    maxBuffer: 64 * 1024 * 1024,
    ...(input === undefined ? {} : { input }),
  }).trim()
}

/** A repository at `dir` on `branch` with `files` in one commit. */
export function makeRepo(dir: string, files: Record<string, string>, branch = 'main'): string {
  execFileSync('git', ['init', '-q', '-b', branch, dir], { env: { ...process.env, ...GIT_IDENTITY } })
  commitFiles(dir, files, 'initial')
  return dir
}

/** One commit of `files` (paths may hold any bytes git allows) written with fast-import, then checked out. */
export function commitFiles(dir: string, files: Record<string, string>, message: string): string {
  const branch = git(dir, ['symbolic-ref', '--short', 'HEAD'])
  let parent = ''
  try {
    parent = git(dir, ['rev-parse', '--verify', '--quiet', 'HEAD'])
  } catch {
    // the first commit
  }
  const parts = [
    `commit refs/heads/${branch}\ncommitter Test Person <person@test.invalid> 1700000000 +0000\n`,
    `data ${Buffer.byteLength(message)}\n${message}\n`,
    parent ? `from ${parent}\n` : '',
  ]
  for (const [path, content] of Object.entries(files))
    parts.push(`M 100644 inline ${JSON.stringify(path)}\ndata ${Buffer.byteLength(content)}\n${content}\n`)
  git(dir, ['fast-import', '--quiet'], `${parts.join('')}\n`)
  git(dir, ['reset', '-q', '--hard'])
  return git(dir, ['rev-parse', 'HEAD'])
}

/** `n` small source files under src/, as fast-import takes them. */
export function manyFiles(n: number): Record<string, string> {
  const files: Record<string, string> = {}
  for (let i = 0; i < n; i++) files[`src/d${i % 100}/f${i}.js`] = `export const v${i} = ${i}\n`
  return files
}

/**
 * A fingerprint of the work tree (every file's path, mode and bytes, .git and .ag aside), the
 * index and `git status`: equal fingerprints mean nothing the person has changed.
 */
export function fingerprint(top: string): string {
  const h = createHash('sha256')
  const walk = (dir: string, rel: string): void => {
    for (const name of readdirSync(dir).sort()) {
      if (rel === '' && (name === '.git' || name === '.ag')) continue
      const p = join(dir, name)
      const st = lstatSync(p)
      const r = rel ? `${rel}/${name}` : name
      if (st.isDirectory()) walk(p, r)
      else h.update(`${r}\0${st.mode}\0`).update(st.isSymbolicLink() ? readlinkSync(p) : readFileSync(p))
    }
  }
  walk(top, '')
  h.update(git(top, ['ls-files', '--stage', '-z'])).update(git(top, ['status', '--porcelain=v1', '-z']))
  return h.digest('hex')
}

/** `ag-mcp …` run to completion as the person, in `cwd`. */
export function agMcp(
  home: string,
  cwd: string,
  args: string[],
  extraEnv: Record<string, string | undefined> = {},
): SpawnSyncReturns<string> {
  return spawnSync(process.execPath, [BINARY, ...args], {
    cwd,
    env: personEnv(home, extraEnv),
    encoding: 'utf8',
    timeout: 60_000,
  })
}

/** An `ag-mcp --local` session on pipes (killed at the end of the test). */
export function localSession(
  t: { teardown: (f: () => void) => void },
  home: string,
  repo: string,
  extraArgs: string[] = [],
): McpProcess {
  return startMcp(t, {
    args: ['--local', repo, '--log-level', 'warn', ...extraArgs],
    env: personEnv(home),
    exactEnv: true,
    cwd: repo,
  })
}

export interface ToolOutcome {
  isError: boolean
  text: string
  structured: Record<string, unknown>
}

export async function call(p: McpProcess, name: string, args: Record<string, unknown>): Promise<ToolOutcome> {
  const r = await p.request('tools/call', { name, arguments: args })
  if (r.error) throw new Error(`${name}: JSON-RPC error ${r.error.message}`)
  const res = r.result as {
    isError?: boolean
    content?: { text: string }[]
    structuredContent?: Record<string, unknown>
  }
  return { isError: res.isError === true, text: res.content?.[0]?.text ?? '', structured: res.structuredContent ?? {} }
}

/** The agent's whole change: a workspace (in a run, if given), the files written, proposed. Returns the proposal id. */
export async function propose(
  p: McpProcess,
  repo: string,
  files: Record<string, string>,
  o: { title?: string; runId?: string; base?: string } = {},
): Promise<string> {
  const run = o.runId ? { run_id: o.runId } : {}
  const ws = await call(p, 'workspace_create', { repo, ...run, ...(o.base ? { base: o.base } : {}) })
  if (ws.isError) throw new Error(`workspace_create: ${ws.text}`)
  const workspace = ws.structured['id'] as string
  for (const [path, content] of Object.entries(files)) {
    const w = await call(p, 'file_write', { repo, workspace, path, content, ...run })
    if (w.isError) throw new Error(`file_write ${path}: ${w.text}`)
  }
  const pr = await call(p, 'propose', { repo, workspace, title: o.title ?? 'A change', ...run })
  if (pr.isError) throw new Error(`propose: ${pr.text}`)
  return pr.structured['id'] as string
}

/** "Name <email>" of a commit's author and committer. */
export function whoMade(top: string, rev: string): { author: string; committer: string; parents: number } {
  const [author = '', committer = '', parents = ''] = git(top, [
    'log',
    '-1',
    '--format=%an <%ae>%n%cn <%ce>%n%p',
    rev,
  ]).split('\n')
  return { author, committer, parents: parents.split(' ').filter(Boolean).length }
}

/** The private server's pid, from its lock, once it listens; undefined when none runs. */
export function serverPid(home: string): number | undefined {
  try {
    const lock = JSON.parse(readFileSync(join(home, '.ag', 'server', 'lock'), 'utf8')) as {
      pid: number
      holders?: string
    }
    return lock.holders ? lock.pid : undefined
  } catch {
    return undefined
  }
}

/** Resolves once `pid` is gone; false after 200 polls of 50 ms (a guard against a hang). */
export async function gone(pid: number): Promise<boolean> {
  for (let i = 0; i < 200; i++) {
    try {
      process.kill(pid, 0)
    } catch {
      return true
    }
    await new Promise((r) => setTimeout(r, 50))
  }
  return false
}

/** Resolves once `ref` exists in `top` (the session copies proposals out as they are made). */
export async function refAppears(top: string, ref: string): Promise<boolean> {
  for (let i = 0; i < 200; i++) {
    try {
      git(top, ['rev-parse', '--verify', '--quiet', ref])
      return true
    } catch {
      await new Promise((r) => setTimeout(r, 50))
    }
  }
  return false
}
