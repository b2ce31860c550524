// A real ag-mcp process on pipes, for conformance tests: write lines or raw bytes, await the
// response to an id, and validate every line the process writes against the MCP schema of
// the revision the request that caused it was speaking.
import { spawn } from 'node:child_process'
import type { ChildProcessWithoutNullStreams } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { LEGACY, MODERN, validateServerMessage } from './mcp-schema.ts'
import type { Revision } from './mcp-schema.ts'

export const BINARY = fileURLToPath(new URL('../../dist/ag-mcp.mjs', import.meta.url))
/** The product with test/fixtures/plugin-tree added (`npm run build:test`); never shipped. */
export const TEST_BUNDLE = fileURLToPath(new URL('../../generated/extra/ag-mcp.mjs', import.meta.url))
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url))

/**
 * How long a wait for an answer may take before the test fails: a guard against a hang, not a
 * measure, so generous enough for a cold start on a 2-core machine under heavy load.
 */
const WAIT_MS = 60_000

export const META_VERSION = 'io.modelcontextprotocol/protocolVersion'
export const META_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities'
export const META_SERVER_INFO = 'io.modelcontextprotocol/serverInfo'

export type Id = string | number

export interface JsonRpcError {
  code: number
  message: string
  data?: unknown
}

export interface Response {
  jsonrpc: '2.0'
  id: Id | null
  result?: Record<string, unknown>
  error?: JsonRpcError
}

export interface StartOptions {
  args?: readonly string[]
  /** Added to a minimal environment (PATH, HOME); the parent's AG_MCP_* never leak in. */
  env?: Record<string, string>
  /** The program and its leading arguments (default: this node, dist/ag-mcp.mjs): e.g. an installed bin. */
  command?: readonly string[]
  /** Replaces the minimal environment instead of adding to it (e.g. a PATH without node). */
  exactEnv?: boolean
  /** The working directory (default: the repository root). */
  cwd?: string
}

export interface RequestOptions {
  /** modern: `_meta` with 2026-07-28 (default); legacy: no `_meta` (after `initialize`). */
  era?: 'modern' | 'legacy'
  id?: Id
  /** Replaces the generated `_meta` entirely (modern era only); `null` sends none. */
  meta?: Record<string, unknown> | null
}

interface Expected {
  revision: Revision
  method: string | undefined
}

interface Waiter {
  resolve: (r: Response) => void
  reject: (e: Error) => void
}

const key = (id: unknown): string => JSON.stringify(id)

export function modernMeta(extra?: Record<string, unknown>): Record<string, unknown> {
  return { [META_VERSION]: MODERN, [META_CAPABILITIES]: {}, ...extra }
}

export class McpProcess {
  readonly child: ChildProcessWithoutNullStreams
  /** Every stdout line, in order (without its newline). */
  readonly lines: string[] = []
  /** Every parsed top-level stdout value (a response, or an array for a batch). */
  readonly values: unknown[] = []
  /** Schema or framing problems found in stdout so far; `assertValid` reports them. */
  readonly problems: string[] = []
  stderr = ''
  /** The revision `initialize` selected, once its response arrived. */
  legacyRevision: Revision | undefined
  private pendingLegacy: Revision | undefined
  private partial = ''
  private nextId = 1
  private readonly expected = new Map<string, Expected[]>()
  private readonly waiters = new Map<string, Waiter[]>()
  /** Responses nobody awaited yet, by id. */
  private readonly unclaimed = new Map<string, Response[]>()
  private readonly lineWaiters: { count: number; resolve: () => void }[] = []
  private readonly stderrWaiters = new Set<{ re: RegExp; settle: (e?: Error) => void }>()
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>

  constructor(opts: StartOptions = {}) {
    const env: Record<string, string> = opts.exactEnv
      ? { ...opts.env }
      : { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '/tmp', ...opts.env }
    const [program, ...leading] = opts.command ?? [process.execPath, BINARY]
    this.child = spawn(program as string, [...leading, ...(opts.args ?? [])], {
      env,
      cwd: opts.cwd ?? REPO_ROOT,
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    this.child.stdout.setEncoding('utf8')
    this.child.stderr.setEncoding('utf8')
    this.child.stdout.on('data', (s: string) => this.onStdout(s))
    this.child.stderr.on('data', (s: string) => {
      this.stderr += s
      for (const w of [...this.stderrWaiters]) if (w.re.test(this.stderr)) w.settle()
    })
    // A write after the process exited must fail the test through its assertions, not crash it.
    this.child.stdin.on('error', () => {})
    this.exited = new Promise((resolve) => {
      this.child.on('close', (code, signal) => {
        if (this.partial !== '') this.problems.push(`stdout ended without a newline: ${this.partial.slice(0, 200)}`)
        for (const [k, ws] of this.waiters)
          for (const w of ws)
            w.reject(new Error(`process exited before answering id ${k}\nstderr: ${this.stderr.slice(-2000)}`))
        this.waiters.clear()
        for (const w of [...this.stderrWaiters]) w.settle(new Error(`process exited before stderr matched ${w.re}`))
        resolve({ code, signal })
      })
    })
  }

  /** The revision a message without modern `_meta` is answered in. */
  get defaultRevision(): Revision {
    return this.legacyRevision ?? this.pendingLegacy ?? MODERN
  }

  /** Writes raw text or bytes to stdin, as is. */
  writeRaw(data: string | Buffer): void {
    this.child.stdin.write(data)
  }

  /**
   * Writes one message as a line (an object, or an array for a batch) and records, for each
   * request in it, the revision and method its answer must conform to.
   */
  send(message: unknown, eol = '\n'): void {
    for (const m of Array.isArray(message) ? message : [message]) this.expect(m)
    this.writeRaw(JSON.stringify(message) + eol)
  }

  /** Records what the answer to a request-shaped value must look like (no-op for others). */
  expect(m: unknown): void {
    if (typeof m !== 'object' || m === null || Array.isArray(m)) return
    const msg = m as Record<string, unknown>
    // Anything with an id that is not itself a response may be answered with that id.
    if (!('id' in msg) || 'result' in msg || 'error' in msg) return
    const params = msg['params']
    const meta =
      typeof params === 'object' && params !== null ? (params as Record<string, unknown>)['_meta'] : undefined
    const modern = typeof meta === 'object' && meta !== null && META_VERSION in meta
    let revision = modern ? MODERN : this.defaultRevision
    if (msg['method'] === 'initialize' && !this.legacyRevision && !modern) {
      const asked = (params as Record<string, unknown> | undefined)?.['protocolVersion']
      revision = (LEGACY as readonly unknown[]).includes(asked) ? (asked as Revision) : '2025-11-25'
      this.pendingLegacy = revision
    }
    const list = this.expected.get(key(msg['id'])) ?? []
    list.push({ revision, method: typeof msg['method'] === 'string' ? msg['method'] : undefined })
    this.expected.set(key(msg['id']), list)
  }

  /** Waits for the response carrying `id` (the first one not yet claimed). */
  waitFor(id: Id, timeoutMs = WAIT_MS): Promise<Response> {
    const ready = this.unclaimed.get(key(id))?.shift()
    if (ready) return Promise.resolve(ready)
    return new Promise<Response>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(new Error(`no response to id ${key(id)} within ${timeoutMs} ms\nstderr: ${this.stderr.slice(-2000)}`)),
        timeoutMs,
      )
      const list = this.waiters.get(key(id)) ?? []
      list.push({
        resolve: (r) => (clearTimeout(timer), resolve(r)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      })
      this.waiters.set(key(id), list)
    })
  }

  /** Sends a request and awaits its response. */
  request(method: string, params: Record<string, unknown> = {}, opts: RequestOptions = {}): Promise<Response> {
    const id = opts.id ?? this.nextId++
    const p: Record<string, unknown> = { ...params }
    if ((opts.era ?? 'modern') === 'modern' && opts.meta !== null) p['_meta'] = opts.meta ?? modernMeta()
    this.send({ jsonrpc: '2.0', id, method, params: p })
    return this.waitFor(id)
  }

  notify(method: string, params: Record<string, unknown> = {}, era: 'modern' | 'legacy' = 'modern'): void {
    this.send({ jsonrpc: '2.0', method, params: era === 'modern' ? { ...params, _meta: modernMeta() } : params })
  }

  /** The legacy handshake: initialize, then notifications/initialized. */
  async initialize(protocolVersion: string): Promise<Response> {
    const r = await this.request(
      'initialize',
      { protocolVersion, capabilities: {}, clientInfo: { name: 'ag-mcp-conformance', version: '0.0.0' } },
      { era: 'legacy' },
    )
    this.notify('notifications/initialized', {}, 'legacy')
    return r
  }

  /** Resolves once at least `count` stdout lines have arrived. */
  waitForLines(count: number, timeoutMs = WAIT_MS): Promise<void> {
    if (this.lines.length >= count) return Promise.resolve()
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`only ${this.lines.length} of ${count} stdout lines within ${timeoutMs} ms`)),
        timeoutMs,
      )
      this.lineWaiters.push({ count, resolve: () => (clearTimeout(timer), resolve()) })
    })
  }

  /** Resolves once everything written to stderr so far matches `re`; rejects if the process exits first. */
  waitForStderr(re: RegExp, timeoutMs = WAIT_MS): Promise<void> {
    if (re.test(this.stderr)) return Promise.resolve()
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => w.settle(new Error(`stderr did not match ${re} within ${timeoutMs} ms: ${this.stderr.slice(-2000)}`)),
        timeoutMs,
      )
      const w = {
        re,
        settle: (e?: Error): void => {
          clearTimeout(timer)
          this.stderrWaiters.delete(w)
          if (e) reject(e)
          else resolve()
        },
      }
      this.stderrWaiters.add(w)
    })
  }

  /** Ends stdin and waits for the process to exit. */
  async close(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    this.child.stdin.end()
    return this.exited
  }

  kill(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL')
  }

  /** Every response (batch elements flattened) received so far. */
  get responses(): Response[] {
    return this.values.flatMap((v) => (Array.isArray(v) ? v : [v])) as Response[]
  }

  /** Fails `t` with every problem found in stdout (schema, framing, unsolicited messages). */
  assertValid(
    t: { same(a: unknown, b: unknown, msg: string): unknown },
    what = 'every stdout line is valid JSON-RPC for its revision',
  ): void {
    t.same(this.problems, [], what)
  }

  private onStdout(s: string): void {
    const parts = (this.partial + s).split('\n')
    this.partial = parts.pop() ?? ''
    for (const line of parts) this.onLine(line)
    for (const w of this.lineWaiters.filter((x) => this.lines.length >= x.count)) {
      this.lineWaiters.splice(this.lineWaiters.indexOf(w), 1)
      w.resolve()
    }
  }

  private onLine(line: string): void {
    this.lines.push(line)
    let value: unknown
    try {
      value = JSON.parse(line)
    } catch {
      this.problems.push(`stdout line is not JSON: ${line.slice(0, 200)}`)
      return
    }
    this.values.push(value)
    if (Array.isArray(value)) {
      if (this.defaultRevision !== '2025-03-26')
        this.problems.push(`a batch response outside 2025-03-26: ${line.slice(0, 200)}`)
      if (value.length === 0) this.problems.push('an empty batch response')
      for (const v of value) this.onMessage(v, line)
    } else this.onMessage(value, line)
  }

  private onMessage(value: unknown, line: string): void {
    const id = typeof value === 'object' && value !== null ? (value as Record<string, unknown>)['id'] : undefined
    const exp = id === null || id === undefined ? undefined : this.expected.get(key(id))?.shift()
    if (id !== null && id !== undefined && !exp)
      this.problems.push(`a response to id ${key(id)}, which no outstanding request carries: ${line.slice(0, 200)}`)
    const rev = exp?.revision ?? this.defaultRevision
    for (const p of validateServerMessage(rev, value, exp?.method))
      this.problems.push(`${p} — in ${line.slice(0, 300)}`)
    const r = value as Response
    if (exp?.method === 'initialize' && r.result && typeof r.result['protocolVersion'] === 'string') {
      this.legacyRevision ??= r.result['protocolVersion'] as Revision
    }
    if (id === null || id === undefined) return
    const w = this.waiters.get(key(id))?.shift()
    if (w) return w.resolve(r)
    const list = this.unclaimed.get(key(id)) ?? []
    list.push(r)
    this.unclaimed.set(key(id), list)
  }
}

/** Starts a process; `t.teardown` kills it if a test forgot to close it. */
export function startMcp(t: { teardown: (f: () => void) => void }, opts: StartOptions = {}): McpProcess {
  const p = new McpProcess(opts)
  t.teardown(() => p.kill())
  return p
}

/** A process speaking one revision: modern `_meta` per request, or a legacy handshake first. */
export interface Session {
  p: McpProcess
  revision: Revision
  modern: boolean
  /** The initialize response (legacy revisions only). */
  init: Response | undefined
  req(method: string, params?: Record<string, unknown>, id?: Id): Promise<Response>
}

export async function openSession(
  t: { teardown: (f: () => void) => void },
  revision: Revision,
  opts: StartOptions = {},
): Promise<Session> {
  const p = startMcp(t, opts)
  const modern = revision === MODERN
  const init = modern ? undefined : await p.initialize(revision)
  return {
    p,
    revision,
    modern,
    init,
    req: (method, params = {}, id) =>
      p.request(method, params, { era: modern ? 'modern' : 'legacy', ...(id !== undefined ? { id } : {}) }),
  }
}
