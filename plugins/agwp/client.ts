// The AGWP HTTP client: one got instance per process. Redirects are refused (the bearer token
// would travel with them), bodies are read with a byte cap, a 401 re-reads the token and retries
// once, and the call's AbortSignal destroys the request (and so its socket).
// Retries stay within the call's one deadline (--timeout-ms) and are bounded. GETs are retried
// on 429/502/503/504 (honouring Retry-After) and after a connection error. Every other request
// carries an Idempotency-Key, fresh per request and the same on each of its attempts, so the
// server applies it at most once: it is retried after a connection error (a reset, a refused
// connection: it may or may not have reached the server) and on 502/503.
import { randomUUID } from 'node:crypto'
import http from 'node:http'
import https from 'node:https'
import { setTimeout as sleep } from 'node:timers/promises'
import got from 'got'
import type { Got } from 'got'
import { isPluginFailure, localFailure, relayed, upstreamFailure } from '../../core/src/plugin-api.ts'
import type { Logger, PluginFailure, TokenSource } from '../../core/src/plugin-api.ts'

/** The upstream connection settings, from the plugin's options (checked by the core at start-up). */
export interface UpstreamSettings {
  /** Base URL of the AGWP server, without the `/agwp/v1` suffix, e.g. `http://127.0.0.1:7420`. */
  url: string
  /** Per-call overall deadline in milliseconds. */
  timeoutMs: number
  /** Connect timeout in milliseconds. */
  connectTimeoutMs: number
  /** Largest response body accepted, in bytes. */
  maxResponseBytes: number
}

export interface ClientSettings {
  /** undefined when the operator gave no --upstream: every call then refuses politely. */
  upstream: UpstreamSettings | undefined
  tokens: TokenSource
  log: Logger
  /**
   * Waits `ms` before a retry, or rejects when `signal` aborts. The real timer unless a test
   * gives its own, so a test can see the delay asked for (a 3 s Retry-After) without waiting it.
   */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>
}

const realSleep = (ms: number, signal: AbortSignal): Promise<void> => sleep(ms, undefined, { signal })

export interface AgwpRequest {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE'
  /** Path under the API root, every segment already URL-encoded. */
  path: string
  query?: readonly (readonly [string, string])[]
  body?: Record<string, unknown>
  /** Sent as the AGWP-Run header. */
  runId?: string
  /** Sent as the AGWP-Repo header: the server refuses any object of another repository. */
  repo?: string
}

export interface AgwpClient {
  send(req: AgwpRequest, signal: AbortSignal): Promise<Record<string, unknown>>
}

const RETRY_STATUSES = new Set([429, 502, 503, 504])
const WRITE_RETRY_STATUSES = new Set([502, 503])
/** Errors after which the request may or may not have reached the server: worth another attempt. */
const RETRY_ERRORS = new Set(['ECONNRESET', 'EPIPE', 'ECONNREFUSED', 'ECONNABORTED', 'EHOSTUNREACH', 'ENETUNREACH'])
const MAX_RETRIES = 2
const MAX_RETRY_AFTER_MS = 3000
/**
 * How long a pooled socket may stay idle. Node's agent lowers it to the server's
 * `Keep-Alive: timeout` hint minus 1 s, but only when it has an idle timeout of its own: without
 * one it keeps sockets forever, and a request written just as the server closes an idle socket
 * is reset (issue 16). ag-server keeps sockets 65 s, so this leaves a wide margin.
 */
const IDLE_SOCKET_MS = 30_000

interface Answer {
  status: number
  headers: http.IncomingHttpHeaders
  body: Buffer
}

export function createClient(env: ClientSettings): AgwpClient {
  const upstream = env.upstream
  if (!upstream)
    throw localFailure(
      'not_configured',
      'no upstream: start ag-mcp with --upstream URL (the ag-server base URL) and --token-file or --token-env',
    )
  const base = `${upstream.url.replace(/\/+$/, '')}/agwp/v1`
  const instance = got.extend({
    followRedirect: false,
    throwHttpErrors: false,
    retry: { limit: 0 },
    // ag-server never compresses; asking for it would only add work per call.
    decompress: false,
    timeout: { connect: upstream.connectTimeoutMs, response: upstream.timeoutMs },
    agent: {
      http: new http.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS }),
      https: new https.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS }),
    },
    headers: { 'user-agent': 'ag-mcp', accept: 'application/json' },
  })
  const wait = env.sleep ?? realSleep
  return { send: (req, signal) => send(instance, base, upstream, env.tokens, env.log, wait, req, signal) }
}

async function send(
  g: Got,
  base: string,
  up: UpstreamSettings,
  tokens: TokenSource,
  log: Logger,
  wait: NonNullable<ClientSettings['sleep']>,
  req: AgwpRequest,
  signal: AbortSignal,
): Promise<Record<string, unknown>> {
  const url = new URL(base + req.path)
  for (const [k, v] of req.query ?? []) url.searchParams.append(k, v)
  if (req.runId !== undefined && !/^[\x21-\x7e]{1,200}$/.test(req.runId))
    throw localFailure('invalid', 'run_id must be printable ASCII without spaces (as task_claim returned it)')
  if (req.repo !== undefined && !/^[\x21-\x7e]{1,200}$/.test(req.repo))
    throw localFailure('invalid', 'repo must be a repository name (printable ASCII without spaces)')
  // One deadline for the whole call, retries included, handed to got as each attempt's
  // request timeout: cheaper than combining AbortSignals on every call.
  const deadlineAt = performance.now() + up.timeoutMs
  const remaining = (): number => Math.floor(deadlineAt - performance.now())
  const timedOut = (): PluginFailure =>
    localFailure('timeout', `no complete answer within ${up.timeoutMs} ms (--timeout-ms)`)
  let token = await tokens.current()
  if (token === undefined)
    throw localFailure('not_configured', 'no token: start ag-mcp with --token-file or --token-env')
  let refreshed = false
  // One key for every attempt of this request: the server applies it once whatever reaches it.
  const key = req.method === 'GET' ? undefined : randomUUID()
  /** Waits before the next attempt, or throws `otherwise` when the deadline leaves no room for it. */
  const pause = async (waitMs: number, otherwise: () => unknown): Promise<void> => {
    if (waitMs >= remaining()) throw otherwise()
    await wait(waitMs, signal)
  }
  for (let attempt = 0; ; attempt++) {
    const t0 = performance.now()
    let answer: Answer
    const left = remaining()
    if (left <= 0) throw timedOut()
    try {
      answer = await once(g, url, req, token, key, up.maxResponseBytes, signal, left)
    } catch (e) {
      if (signal.aborted) throw e
      const code = (e as { code?: unknown }).code
      if (typeof code !== 'string' || !RETRY_ERRORS.has(code) || attempt >= MAX_RETRIES) throw transportFailure(e, up)
      log.debug('upstream connection failed; retrying', { method: req.method, code, attempt })
      // A reset on a pooled socket is retried at once (on a new one); anything else backs off.
      await pause(attempt === 0 && code === 'ECONNRESET' ? 0 : 100 * 2 ** attempt, () => transportFailure(e, up))
      continue
    }
    log.debug('upstream call', {
      method: req.method,
      status: answer.status,
      ms: Math.round(performance.now() - t0),
      attempt,
    })
    if (answer.status === 401 && !refreshed) {
      refreshed = true
      const next = await tokens.refresh()
      if (next !== undefined && next !== token) {
        token = next
        continue
      }
    }
    const retryAfterS = retryAfter(answer.headers['retry-after'])
    const retryable = (key === undefined ? RETRY_STATUSES : WRITE_RETRY_STATUSES).has(answer.status)
    if (retryable && attempt < MAX_RETRIES) {
      const waitMs = Math.min(MAX_RETRY_AFTER_MS, retryAfterS !== undefined ? retryAfterS * 1000 : 200 * 2 ** attempt)
      await pause(waitMs, timedOut)
      continue
    }
    return interpret(answer, url, retryAfterS)
  }
}

/** One HTTP exchange, its body read up to `cap` bytes. */
function once(
  g: Got,
  url: URL,
  req: AgwpRequest,
  token: string,
  key: string | undefined,
  cap: number,
  signal: AbortSignal,
  timeoutMs: number,
): Promise<Answer> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` }
  if (key !== undefined) headers['idempotency-key'] = key
  if (req.runId !== undefined) headers['agwp-run'] = req.runId
  if (req.repo !== undefined) headers['agwp-repo'] = req.repo
  const hasBody = req.method === 'POST' || req.method === 'PUT'
  if (hasBody) headers['content-type'] = 'application/json'
  const stream = g.stream(url, {
    method: req.method,
    headers,
    signal,
    timeout: { request: timeoutMs },
    ...(hasBody ? { body: JSON.stringify(req.body ?? {}) } : {}),
  })
  // A got stream waits for its request body unless the method cannot have one: DELETE has none.
  if (req.method === 'DELETE') stream.end()
  return new Promise<Answer>((resolve, reject) => {
    let settled = false
    const settle = (f: () => void): void => {
      if (settled) return
      settled = true
      f()
    }
    let status = 0
    let resHeaders: http.IncomingHttpHeaders = {}
    const chunks: Buffer[] = []
    let size = 0
    const tooLarge = (): void => {
      stream.destroy()
      settle(() =>
        reject(
          upstreamFailure(
            'bad_response',
            `the upstream answer exceeds ${cap} bytes (--max-response-bytes); narrow the request`,
          ),
        ),
      )
    }
    stream.on('response', (res: http.IncomingMessage) => {
      status = res.statusCode ?? 0
      resHeaders = res.headers
      if (status >= 300 && status < 400) {
        // Not followed and not read: the answer is the status and its Location.
        stream.destroy()
        settle(() => resolve({ status, headers: resHeaders, body: Buffer.alloc(0) }))
      } else if (Number(res.headers['content-length'] ?? 0) > cap) tooLarge()
    })
    stream.on('data', (c: Buffer) => {
      size += c.length
      if (size > cap) tooLarge()
      else chunks.push(c)
    })
    stream.on('end', () => settle(() => resolve({ status, headers: resHeaders, body: Buffer.concat(chunks) })))
    stream.on('error', (e: Error) => settle(() => reject(e)))
  })
}

function interpret(a: Answer, url: URL, retryAfterS: number | undefined): Record<string, unknown> {
  if (a.status >= 300 && a.status < 400) {
    let where = 'no location'
    const loc = a.headers.location
    if (loc !== undefined) {
      try {
        const origin = new URL(loc, url).origin
        where = origin === 'null' ? 'a location without an origin' : origin
      } catch {
        where = 'an unparsable location'
      }
    }
    throw upstreamFailure(
      'redirect',
      `the upstream redirected (${a.status}) to ${where}; redirects are never followed, since the token would travel with them. Check --upstream.`,
      { status: a.status },
    )
  }
  let json: unknown
  try {
    json = JSON.parse(a.body.toString('utf8'))
  } catch {
    throw upstreamFailure('bad_response', `the upstream answered ${a.status} with a body that is not JSON`, {
      status: a.status,
    })
  }
  if (a.status >= 200 && a.status < 300) {
    if (typeof json !== 'object' || json === null || Array.isArray(json))
      throw upstreamFailure('bad_response', 'the upstream answer is not a JSON object', { status: a.status })
    return json as Record<string, unknown>
  }
  const err = (json as { error?: unknown } | null)?.error as
    | { code?: unknown; message?: unknown; details?: unknown }
    | undefined
  if (typeof err?.code === 'string' && typeof err.message === 'string') {
    const details = err.details as Record<string, unknown> | undefined
    const fromDetails = typeof details?.['retry_after_s'] === 'number' ? details['retry_after_s'] : undefined
    const retry = retryAfterS ?? fromDetails
    throw relayed(err.code, err.message, {
      status: a.status,
      ...(retry !== undefined ? { retryAfterS: retry } : {}),
      ...(err.details !== undefined ? { details: err.details } : {}),
    })
  }
  throw upstreamFailure('bad_response', `the upstream answered ${a.status} without an AGWP error body`, {
    status: a.status,
  })
}

function retryAfter(h: string | string[] | undefined): number | undefined {
  const v = Array.isArray(h) ? h[0] : h
  if (v === undefined || v === '') return undefined
  if (/^\d+$/.test(v.trim())) return Number(v.trim())
  const at = Date.parse(v)
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000))
}

function transportFailure(e: unknown, up: UpstreamSettings): unknown {
  if (isPluginFailure(e)) return e
  const err = e as { name?: string; code?: string; event?: string }
  if (err.name === 'TimeoutError' || err.code === 'ETIMEDOUT') {
    const ms = err.event === 'connect' ? up.connectTimeoutMs : up.timeoutMs
    return localFailure(
      'timeout',
      `the upstream did not ${err.event === 'connect' ? 'accept the connection' : 'answer'} within ${ms} ms`,
    )
  }
  return localFailure(
    'unreachable',
    `cannot reach the upstream ${new URL(up.url).origin} (${typeof err.code === 'string' ? err.code : 'connection failed'})`,
  )
}
