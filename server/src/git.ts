import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import os from 'node:os'
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
  /**
   * run at nice 10 (maintenance: requests' own git work goes first). Not 19: on a saturated
   * machine a niced-19 pack of the loose objects took a minute and the disk grew meanwhile.
   */
  lowPriority?: boolean
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
    // Set as soon as it exists, before git starts the children that do the work (repack
    // runs pack-objects), which inherit it. Not fatal: a system may refuse it.
    if (opts.lowPriority && child.pid !== undefined)
      try {
        os.setPriority(child.pid, 10)
      } catch {
        // runs at normal priority
      }
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

/**
 * Packs removed from a repository (maintenance's roll-ups and repacks), per git directory. A
 * long-lived git process never forgets a pack it has seen, removed or not: it keeps each one's
 * index mapped and searches it on every miss. The server writes a pack per write, so within
 * minutes one cat-file held 2,000 indexes of removed packs and every read slowed. The
 * long-lived processes below are replaced once STALE_PACKS were removed since they started:
 * not after every run, as a new process starts with a cold delta cache (integrate in an aged
 * repository 12% slower than in a fresh one when every run replaced them).
 */
const removedByDir = new Map<string, number>()
export const packsRemoved = (gitDir: string, n: number): void =>
  void removedByDir.set(gitDir, packGeneration(gitDir) + n)
const packGeneration = (gitDir: string): number => removedByDir.get(gitDir) ?? 0
export const STALE_PACKS = 256
const stale = (gitDir: string, since: number): boolean => packGeneration(gitDir) - since >= STALE_PACKS

/** One cat-file process and what it owes: its output not yet parsed, its requests not yet answered. */
interface CatChild {
  child: ChildProcessWithoutNullStreams
  generation: number
  buf: Buffer
  // Output not yet joined into buf: a large object arrives in many pipe reads, and joining
  // each read would copy what came before again (quadratic in the object's size).
  parts: Buffer[]
  partsLen: number
  /** bytes buf must hold before drain can make progress (0: unknown, join at once) */
  need: number
  queue: Waiter[]
}

// One long-lived `git cat-file --batch-command` per repository: object reads (file
// content, sizes, commit resolution) cost a pipe round trip instead of a process spawn,
// and requests are pipelined (many in flight, answered in order). Replaced (see
// packsRemoved) by a new one; the old one answers what it was asked, then exits.
export class CatFile {
  private cur: CatChild | undefined

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
    const c = this.ensure()
    return new Promise((resolve, reject) => {
      c.queue.push({ info, resolve, reject })
      c.child.stdin.write(`${info ? 'info' : 'contents'} ${rev}\n`)
    })
  }

  close(): void {
    this.cur?.child.stdin.end()
    this.cur = undefined
  }

  private ensure(): CatChild {
    if (this.cur && !stale(this.gitDir, this.cur.generation)) return this.cur
    this.close()
    counted('cat-file --batch-command')
    const child = spawn('git', [...CONFIG_ARGS, '--git-dir', this.gitDir, 'cat-file', '--batch-command'], {
      env: BASE_ENV,
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    const c: CatChild = {
      child,
      generation: packGeneration(this.gitDir),
      buf: Buffer.alloc(0),
      parts: [],
      partsLen: 0,
      need: 0,
      queue: [],
    }
    child.stdout.on('data', (d: Buffer) => {
      c.parts.push(d)
      c.partsLen += d.length
      if (c.buf.length + c.partsLen < c.need) return
      c.buf = c.buf.length || c.parts.length > 1 ? Buffer.concat([c.buf, ...c.parts]) : d
      c.parts = []
      c.partsLen = 0
      drain(c)
    })
    child.stderr.resume()
    child.stdin.on('error', () => {
      /* handled via close */
    })
    const fail = (): void => {
      if (this.cur === c) this.cur = undefined
      const q = c.queue
      c.queue = []
      for (const w of q) w.reject(new Error('git cat-file exited'))
    }
    child.on('close', fail)
    child.on('error', fail)
    this.cur = c
    return c
  }
}

function drain(c: CatChild): void {
  for (;;) {
    const waiter = c.queue[0]
    if (!waiter) return
    const nl = c.buf.indexOf(10)
    if (nl < 0) return
    const header = c.buf.subarray(0, nl).toString('utf8')
    const m = /^([0-9a-f]{40}) (blob|tree|commit|tag) ([0-9]+)$/.exec(header)
    if (!m) {
      // "<rev> missing" / "ambiguous" / other forms: the object is absent.
      c.buf = c.buf.subarray(nl + 1)
      c.queue.shift()
      waiter.resolve(null)
      continue
    }
    const size = Number(m[3])
    const type = m[2] as CatObject['type']
    if (waiter.info) {
      c.buf = c.buf.subarray(nl + 1)
      c.queue.shift()
      waiter.resolve({ oid: m[1] as string, type, size, data: EMPTY })
      continue
    }
    if (c.buf.length < nl + 1 + size + 1) {
      c.need = nl + 1 + size + 1
      return
    }
    c.need = 0
    // Its own memory, not a piece of Node's shared 8 KiB pool: the object cache holds
    // objects by their size, and a small blob cut from the pool kept the whole slab (and
    // whatever else was allocated in it) alive: in the soak, 1.3 MB of cached blobs kept
    // 12.8 MB of buffers.
    const data = Buffer.allocUnsafeSlow(size)
    c.buf.copy(data, 0, nl + 1, nl + 1 + size)
    c.buf = c.buf.subarray(nl + 1 + size + 1)
    c.queue.shift()
    waiter.resolve({ oid: m[1] as string, type, size, data })
  }
}

const EMPTY = Buffer.alloc(0)

// One long-lived `git diff-tree --stdin` for diffs (status, line counts, patch text).
// The patch and its counts are git's own (xdiff: its line matching heuristics, hunk
// function context, index abbreviation length, rename similarity); reproducing those
// byte for byte in process would mean re-implementing xdiff, so diffs stay git's, but
// through one process per option set instead of one per request. Each request writes
// "<tree> <tree>\n" (answered by that line, then the diff) and a line that is not an
// object id, which diff-tree echoes and flushes: the end marker, with a per-process
// random nonce so no path or content can forge it. Requests run one at a time (a patch
// over its byte budget kills the process, as the per-request git did, and the next
// request starts a fresh one). git keeps every tree it parsed, so the process is
// replaced after RECYCLE_AFTER requests to keep its memory flat, and once packs were
// removed (packsRemoved).
const RECYCLE_AFTER = 500

export class DiffTree {
  private child: ChildProcessWithoutNullStreams | undefined
  private served = 0
  private tail: Promise<unknown> = Promise.resolve()
  private readonly nonce = randomBytes(12).toString('hex')
  private seq = 0
  private closed = false
  private generation = 0

  constructor(
    private readonly gitDir: string,
    /** diff-tree options, then `--` and pathspecs if any */
    private readonly args: string[],
  ) {}

  /** The diff of two trees (ids), as `git diff-tree <args> a b` prints it; at most maxStdout bytes. */
  diff(a: string, b: string, opts: { maxStdout?: number; timeoutMs?: number } = {}): Promise<GitResult> {
    if (!OID.test(a) || !OID.test(b)) return Promise.reject(new Error('diff-tree takes two object ids'))
    const go = (): Promise<GitResult> =>
      this.one(a, b, opts).finally(() => {
        // closed while this request waited its turn: end the process it started
        if (this.closed) this.endChild()
      })
    const run = this.tail.then(go, go)
    this.tail = run.catch(() => undefined)
    return run
  }

  /** End the process once the requests already written are answered. */
  close(): void {
    this.closed = true
    this.endChild()
  }

  private endChild(): void {
    this.child?.stdin.end()
    this.child = undefined
  }

  private one(a: string, b: string, opts: { maxStdout?: number; timeoutMs?: number }): Promise<GitResult> {
    if (this.child && (this.served >= RECYCLE_AFTER || stale(this.gitDir, this.generation))) this.endChild()
    const child = this.ensure()
    this.served++
    const header = Buffer.from(`${a} ${b}\n`)
    const marker = Buffer.from(`#agwp-end-${this.nonce}-${++this.seq}\n`)
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = []
      let len = 0
      let err = ''
      let window: Buffer = Buffer.alloc(0) // the last bytes seen, to find a marker split across reads
      const done = (e: Error | null, r?: GitResult): void => {
        clearTimeout(timer)
        child.stdout.off('data', onData)
        child.stderr.off('data', onErr)
        child.off('close', onClose)
        if (e) reject(e)
        else resolve(r as GitResult)
      }
      const finish = (body: Buffer): void => {
        // The echoed pair comes first; without it git refused the pair (stderr says why).
        if (!body.subarray(0, header.length).equals(header))
          return done(new GitError('diff-tree --stdin', 1, err || 'no answer for the tree pair'))
        done(null, { code: 0, stdout: body.subarray(header.length), stderr: err })
      }
      const onData = (d: Buffer): void => {
        const joined = window.length ? Buffer.concat([window, d]) : d
        const at = joined.indexOf(marker)
        if (at >= 0) {
          // bytes of the marker that were already stored belong to `window`
          const keep = at - window.length
          if (keep >= 0) chunks.push(d.subarray(0, keep))
          const all = Buffer.concat(chunks)
          const body = keep >= 0 ? all : all.subarray(0, all.length + keep)
          return finish(body)
        }
        chunks.push(d)
        len += d.length
        window = joined.subarray(Math.max(0, joined.length - marker.length))
        const cap = opts.maxStdout === undefined ? undefined : opts.maxStdout + header.length
        if (cap !== undefined && len >= cap) {
          // Over budget: stop git computing the rest, as the one-shot process was stopped.
          this.kill(child)
          const all = Buffer.concat(chunks)
          if (!all.subarray(0, header.length).equals(header)) return finish(all)
          done(null, { code: 0, stdout: all.subarray(header.length, cap), stderr: err })
        }
      }
      const onErr = (d: Buffer): void => {
        if (err.length < 8192) err += d.toString('utf8')
      }
      const onClose = (): void => done(new GitError('diff-tree --stdin', 1, err || 'git diff-tree exited'))
      const timer = setTimeout(() => {
        this.kill(child)
        done(new AgwpError('timeout', 'git operation timed out'))
      }, opts.timeoutMs ?? 30_000)
      child.stdout.on('data', onData)
      child.stderr.on('data', onErr)
      child.once('close', onClose)
      child.stdin.write(Buffer.concat([header, marker]))
    })
  }

  private kill(child: ChildProcessWithoutNullStreams): void {
    if (this.child === child) this.child = undefined
    child.kill('SIGKILL')
  }

  private ensure(): ChildProcessWithoutNullStreams {
    if (this.child) return this.child
    counted('diff-tree --stdin')
    const child = spawn('git', [...CONFIG_ARGS, '--git-dir', this.gitDir, 'diff-tree', '--stdin', ...this.args], {
      env: BASE_ENV,
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    child.stdin.on('error', () => {
      /* handled via close */
    })
    // Between requests nobody listens; a full stderr pipe must never stall git.
    child.stderr.resume()
    const gone = (): void => {
      if (this.child === child) this.child = undefined
    }
    child.on('close', gone)
    child.on('error', gone)
    child.stdout.setMaxListeners(0)
    this.child = child
    this.served = 0
    this.generation = packGeneration(this.gitDir)
    return child
  }
}

const OID = /^[0-9a-f]{40}$/
