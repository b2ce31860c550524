import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { AgwpError } from './errors.ts'

// Thin layer over the `git` binary. The server never depends on the operator's git
// configuration: system/global config are ignored, identities are passed per call.
const BASE_ENV: NodeJS.ProcessEnv = {
  PATH: process.env['PATH'] ?? '/usr/bin:/bin',
  HOME: process.env['HOME'] ?? '/',
  LANG: 'C',
  LC_ALL: 'C',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_TERMINAL_PROMPT: '0',
  GIT_OPTIONAL_LOCKS: '0',
  // Client paths are paths, never pathspec magic (`:(exclude)`, `:(glob)`, `*`).
  GIT_LITERAL_PATHSPECS: '1',
}

// Objects and refs written by git for the server are fsync'd by git itself (refs too:
// 'committed' covers objects only), so an acknowledged proposal or integration survives
// a crash just like the journal entry that points at it.
const CONFIG_ARGS = [
  '-c',
  'core.fsync=committed,index,reference',
  '-c',
  'core.fsyncMethod=fsync',
  '-c',
  'core.quotepath=false',
]

export interface GitResult {
  code: number
  stdout: Buffer
  stderr: string
}

export interface GitOptions {
  input?: string | Buffer
  env?: Record<string, string>
  /** exit codes that are not errors (e.g. 1 for merge-tree conflicts) */
  okCodes?: number[]
  timeoutMs?: number
  /** stop reading after this many stdout bytes and kill the process */
  maxStdout?: number
}

/** git processes started, by subcommand (for tests and profiling). */
export const gitSpawns = new Map<string, number>()
const counted = (cmd: string): void => void gitSpawns.set(cmd, (gitSpawns.get(cmd) ?? 0) + 1)

export function git(gitDir: string, args: string[], opts: GitOptions = {}): Promise<GitResult> {
  counted(args[0] ?? '')
  return new Promise((resolve, reject) => {
    const child = spawn('git', [...CONFIG_ARGS, '--git-dir', gitDir, ...args], {
      env: { ...BASE_ENV, ...(opts.env ?? {}) },
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    const out: Buffer[] = []
    let outLen = 0
    let err = ''
    let capped = false
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 30_000)
    child.stdout.on('data', (d: Buffer) => {
      if (capped) return
      out.push(d)
      outLen += d.length
      if (opts.maxStdout !== undefined && outLen >= opts.maxStdout) {
        capped = true
        child.kill('SIGKILL')
      }
    })
    child.stderr.on('data', (d: Buffer) => {
      if (err.length < 8192) err += d.toString('utf8')
    })
    child.on('error', (e) => {
      clearTimeout(timer)
      reject(e)
    })
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      const stdout = Buffer.concat(out)
      if (capped) return resolve({ code: 0, stdout, stderr: err })
      const c = code ?? (signal ? 128 : 1)
      if (c !== 0 && !(opts.okCodes ?? []).includes(c)) {
        if (signal === 'SIGKILL') return reject(new AgwpError('timeout', 'git operation timed out'))
        return reject(new GitError(args[0] ?? 'git', c, err))
      }
      resolve({ code: c, stdout, stderr: err })
    })
    child.stdin.on('error', () => {
      /* process may exit before reading all input */
    })
    if (opts.input !== undefined) child.stdin.end(opts.input)
    else child.stdin.end()
  })
}

/** A git failure; its stderr stays server-side (logged), never sent to clients. */
export class GitError extends Error {
  constructor(
    readonly command: string,
    readonly exitCode: number,
    readonly stderr: string,
  ) {
    super(`git ${command} exited ${exitCode}: ${stderr.trim().slice(0, 500)}`)
  }
}

export async function gitText(gitDir: string, args: string[], opts: GitOptions = {}): Promise<string> {
  return (await git(gitDir, args, opts)).stdout.toString('utf8')
}

export function identityEnv(actor: string, email: string): Record<string, string> {
  return {
    GIT_AUTHOR_NAME: actor,
    GIT_AUTHOR_EMAIL: email,
    GIT_COMMITTER_NAME: actor,
    GIT_COMMITTER_EMAIL: email,
  }
}

export interface CatObject {
  oid: string
  type: 'blob' | 'tree' | 'commit' | 'tag'
  size: number
  data: Buffer
}

export interface ObjectInfo {
  oid: string
  type: CatObject['type']
  size: number
}

interface Waiter {
  /** `info`: the header only; `contents`: header and data */
  info: boolean
  resolve: (o: CatObject | null) => void
  reject: (e: Error) => void
}

// One long-lived `git cat-file --batch-command` per repository: object reads (file
// content, sizes, commit resolution) cost a pipe round trip instead of a process spawn,
// and requests are pipelined (many in flight, answered in order).
export class CatFile {
  private child: ChildProcessWithoutNullStreams | undefined
  private buf: Buffer = Buffer.alloc(0)
  private queue: Waiter[] = []

  constructor(private readonly gitDir: string) {}

  get(rev: string): Promise<CatObject | null> {
    return this.ask(rev, false)
  }

  /** Type and size without the content. */
  async info(rev: string): Promise<ObjectInfo | null> {
    const o = await this.ask(rev, true)
    return o && { oid: o.oid, type: o.type, size: o.size }
  }

  private ask(rev: string, info: boolean): Promise<CatObject | null> {
    if (rev.includes('\n')) return Promise.resolve(null)
    const child = this.ensure()
    return new Promise((resolve, reject) => {
      this.queue.push({ info, resolve, reject })
      child.stdin.write(`${info ? 'info' : 'contents'} ${rev}\n`)
    })
  }

  close(): void {
    this.child?.stdin.end()
    this.child = undefined
  }

  private ensure(): ChildProcessWithoutNullStreams {
    if (this.child) return this.child
    counted('cat-file --batch-command')
    const child = spawn('git', [...CONFIG_ARGS, '--git-dir', this.gitDir, 'cat-file', '--batch-command'], {
      env: BASE_ENV,
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    child.stdout.on('data', (d: Buffer) => {
      this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d
      this.drain()
    })
    child.stderr.resume()
    child.stdin.on('error', () => {
      /* handled via close */
    })
    const fail = (): void => {
      if (this.child === child) this.child = undefined
      this.buf = Buffer.alloc(0)
      const q = this.queue
      this.queue = []
      for (const w of q) w.reject(new Error('git cat-file exited'))
    }
    child.on('close', fail)
    child.on('error', fail)
    this.child = child
    return child
  }

  private drain(): void {
    for (;;) {
      const waiter = this.queue[0]
      if (!waiter) return
      const nl = this.buf.indexOf(10)
      if (nl < 0) return
      const header = this.buf.subarray(0, nl).toString('utf8')
      const m = /^([0-9a-f]{40}) (blob|tree|commit|tag) ([0-9]+)$/.exec(header)
      if (!m) {
        // "<rev> missing" / "ambiguous" / other forms: the object is absent.
        this.buf = this.buf.subarray(nl + 1)
        this.queue.shift()
        waiter.resolve(null)
        continue
      }
      const size = Number(m[3])
      const type = m[2] as CatObject['type']
      if (waiter.info) {
        this.buf = this.buf.subarray(nl + 1)
        this.queue.shift()
        waiter.resolve({ oid: m[1] as string, type, size, data: EMPTY })
        continue
      }
      if (this.buf.length < nl + 1 + size + 1) return
      const data = Buffer.from(this.buf.subarray(nl + 1, nl + 1 + size))
      this.buf = this.buf.subarray(nl + 1 + size + 1)
      this.queue.shift()
      waiter.resolve({ oid: m[1] as string, type, size, data })
    }
  }
}

const EMPTY = Buffer.alloc(0)
