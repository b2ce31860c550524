// git, called with an argument vector and never through a shell: file names, messages and
// refs are data. Paths always follow `--` at the call sites that take paths.
import { spawn } from 'node:child_process'

export class GitError extends Error {
  constructor(
    readonly args: readonly string[],
    readonly code: number | null,
    readonly stderr: string,
  ) {
    super(`git ${args[0] ?? ''} failed (${code}): ${stderr.trim().split('\n')[0] ?? ''}`)
  }
}

export interface GitOptions {
  /** Bytes for git's stdin (hash-object --stdin). */
  input?: string | Buffer
  /** Exit codes that are answers, not failures (e.g. 1 from merge-base --is-ancestor). */
  okCodes?: readonly number[]
}

export interface GitResult {
  code: number
  stdout: string
  stderr: string
}

/** Runs git in `cwd`; rejects with GitError unless the exit code is 0 or listed in okCodes. */
export function git(cwd: string, args: readonly string[], o: GitOptions = {}): Promise<GitResult> {
  return new Promise((resolve, reject) => {
    // GIT_OPTIONAL_LOCKS=0: reads never take index.lock, so a hook that runs us cannot deadlock
    // against the git command that is running the hook.
    const child = spawn('git', args, {
      cwd,
      shell: false,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, GIT_OPTIONAL_LOCKS: '0', GIT_TERMINAL_PROMPT: '0', LC_ALL: 'C' },
    })
    const out: Buffer[] = []
    const err: Buffer[] = []
    child.stdout.on('data', (b: Buffer) => out.push(b))
    child.stderr.on('data', (b: Buffer) => err.push(b))
    child.on('error', reject)
    child.on('close', (code) => {
      const r = {
        code: code ?? -1,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
      }
      if (r.code === 0 || o.okCodes?.includes(r.code)) resolve(r)
      else reject(new GitError(args, code, r.stderr))
    })
    child.stdin.on('error', () => {}) // git may exit before reading all input; its exit code says why
    child.stdin.end(o.input ?? '')
  })
}

/** stdout of a git command, trailing newline removed. */
export async function gitOut(cwd: string, args: readonly string[], o: GitOptions = {}): Promise<string> {
  return (await git(cwd, args, o)).stdout.replace(/\n$/, '')
}

/** The work tree's top level, or undefined when `dir` is not inside a git work tree. */
export async function topLevel(dir: string): Promise<string | undefined> {
  const r = await git(dir, ['rev-parse', '--show-toplevel'], { okCodes: [128] }).catch(() => undefined)
  return r && r.code === 0 ? r.stdout.trim() : undefined
}
