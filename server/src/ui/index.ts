import type http from 'node:http'
import { createScrub } from '../../../lib/scrub.ts'
import { authenticate, type Caller, type RateLimiter } from '../auth.ts'
import type { Ctx } from '../context.ts'
import { AgwpError, errorBody, forbidden, invalid, notFound } from '../errors.ts'
import * as rv from '../reviews.ts'
import { integrateAction, listView, proposalView, readableRepos, rejectAction, reviewAction } from './api.ts'
import { asset } from './assets.ts'
import {
  checkCsrf,
  checkSameOrigin,
  cookieSecret,
  header,
  hostAllowed,
  jsonBody,
  type Origins,
  readSmallBody,
  REPORT_PATH,
  SECURITY_HEADERS,
  sessionCookie,
  UI_PATH,
} from './guard.ts'
import { type Session, SessionError, Sessions } from './sessions.ts'

// The review page (/ui, not part of AGWP v1): its files, a JSON API for the page, sign-in and
// sign-out. Off unless `serve --ui`; local mode turns it on for its private server.

export interface UiOptions {
  /** The origin people open, when it is not this server's own (a TLS proxy): https://review.example.com */
  origin?: string
  /** How long a session lasts at most (it also ends with its token). Default 8 hours. */
  sessionTtlS?: number
}

export interface UiEnv {
  ctx: Ctx
  limiter: RateLimiter
  log: (m: string) => void
  /** Resolves once what this request wrote is durable (the server's group commit). */
  settle: () => Promise<void>
}

type Json = Record<string, unknown>
interface Answer {
  status: number
  body: unknown
  headers?: Record<string, string>
}

const scrub = createScrub(() => [])

/** Every string of a value scrubbed: what the page shows of a repository never holds a credential shape. */
function scrubDeep(v: unknown): unknown {
  if (typeof v === 'string') return scrub(v)
  if (Array.isArray(v)) return v.map(scrubDeep)
  if (v !== null && typeof v === 'object') {
    const out: Json = {}
    for (const [k, x] of Object.entries(v)) out[k] = scrubDeep(x)
    return out
  }
  return v
}

const PAGES = /^\/ui\/(?:p\/[^/]+)?$/
const PROPOSAL = /^\/ui\/api\/proposals\/([^/]+)(?:\/(diff|review|integrate|reject))?$/

export class Ui {
  readonly sessions: Sessions
  private readonly origins: Origins
  private reports = 0

  constructor(opts: UiOptions, listen: () => string) {
    let publicOrigin: URL | undefined
    if (opts.origin !== undefined) {
      publicOrigin = new URL(opts.origin)
      if (publicOrigin.origin !== opts.origin.replace(/\/$/, ''))
        throw new Error(`--ui-origin must be an origin (scheme://host[:port]), got ${opts.origin}`)
    }
    this.origins = { publicOrigin, listen }
    this.sessions = new Sessions((opts.sessionTtlS ?? 8 * 3600) * 1000)
  }

  /** Violation reports received (the review page's own count; each is also logged). */
  get cspReports(): number {
    return this.reports
  }

  async handle(env: UiEnv, req: http.IncomingMessage, res: http.ServerResponse, url: URL): Promise<void> {
    let a: Answer
    try {
      if (!hostAllowed(this.origins, header(req, 'host')))
        throw forbidden('this server is not addressed by that name (a rebound DNS name is refused)')
      a = await this.route(env, req, url)
    } catch (e) {
      a = this.failure(env, e)
    }
    if (!req.readableEnded) req.resume()
    send(res, a)
  }

  private failure(env: UiEnv, e: unknown): Answer {
    if (e instanceof AgwpError) return { status: e.status, body: scrubDeep(errorBody(e)), headers: e.headers }
    if (e instanceof SessionError) return { status: 429, body: { error: { code: 'rate_limited', message: e.message } } }
    env.log(`ag-server ui: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`)
    return { status: 500, body: errorBody(new AgwpError('internal', 'internal error')) }
  }

  private async route(env: UiEnv, req: http.IncomingMessage, url: URL): Promise<Answer> {
    const p = url.pathname
    const method = req.method ?? 'GET'
    if (method === 'GET' && p === UI_PATH) return { status: 308, body: '', headers: { Location: `${UI_PATH}/` } }
    if (method === 'GET' && PAGES.test(p)) return this.file('index.html', req)
    if (method === 'GET' && (p === `${UI_PATH}/app.js` || p === `${UI_PATH}/app.css`)) return this.file(p.slice(4), req)
    if (method === 'POST' && p === REPORT_PATH) return this.cspReport(env, req)
    if (!p.startsWith(`${UI_PATH}/api/`)) throw notFound('no such page')
    const rel = p.slice(`${UI_PATH}/api`.length)
    if (method === 'POST' && rel === '/sign-in') return this.signIn(env, req)
    if (method === 'POST' && rel === '/links') return this.link(env, req)
    const session = this.sessions.get(cookieSecret(req))
    if (session === undefined) throw new AgwpError('unauthenticated', 'not signed in')
    const caller = await this.callerOf(env.ctx, session, req)
    env.limiter.take(caller.token.id)
    if (method === 'GET' && rel === '/session') return ok(await this.sessionView(env.ctx, caller, session))
    if (method === 'GET' && rel === '/proposals')
      return ok(scrubDeep(await listView(env.ctx, caller, url.searchParams)))
    const m = PROPOSAL.exec(p)
    if (method === 'POST') {
      checkSameOrigin(this.origins, req)
      checkCsrf(req, session.csrf)
      if (rel === '/sign-out') {
        this.sessions.end(cookieSecret(req))
        return {
          status: 200,
          body: { signed_out: true },
          headers: { 'Set-Cookie': sessionCookie(this.origins, '', 0) },
        }
      }
      if (m?.[2] === undefined || m[2] === 'diff') throw notFound(`unknown action ${rel.slice(0, 200)}`)
      const id = decodeId(m[1] as string)
      const body = await jsonBody(req)
      const act = { review: reviewAction, integrate: integrateAction, reject: rejectAction }[m[2] as 'review']
      const out = await act(env.ctx, caller, id, body)
      await env.settle()
      return { status: 200, body: scrubDeep(out) }
    }
    if (method === 'GET' && m !== null) {
      const id = decodeId(m[1] as string)
      if (m[2] === undefined) return ok(scrubDeep(await proposalView(env.ctx, caller, id)))
      if (m[2] === 'diff') return ok(scrubDeep(await rv.proposalDiff(env.ctx, caller, id)))
    }
    throw notFound(`unknown endpoint ${method} ${rel.slice(0, 200)}`)
  }

  private file(name: string, req: http.IncomingMessage): Answer {
    const a = asset(name)
    if (!a) throw notFound('no such file')
    const cache = { ETag: a.etag, 'Cache-Control': 'no-cache' }
    if (header(req, 'if-none-match') === a.etag) return { status: 304, body: '', headers: cache }
    return { status: 200, body: a.body, headers: { 'Content-Type': a.type, ...cache } }
  }

  /** The session's caller: its token, looked up again, so a revoked or expired one ends it. */
  private async callerOf(ctx: Ctx, s: Session, req: http.IncomingMessage): Promise<Caller> {
    const rec = await ctx.state.get('tokens', s.tokenId)
    if (!rec || rec.revoked || Date.parse(rec.expires_at) <= (await ctx.state.now()).getTime()) {
      this.sessions.end(cookieSecret(req))
      throw new AgwpError('unauthenticated', 'your session ended: its token was revoked or expired; sign in again')
    }
    return { token: rec, principal: rec.principal, kind: 'human', actor: rec.principal }
  }

  private async sessionView(ctx: Ctx, caller: Caller, s: Session): Promise<Json> {
    return {
      principal: caller.principal,
      expires_at: new Date(s.expiresAt).toISOString(),
      csrf: s.csrf,
      scopes: caller.token.scopes,
      repos: await readableRepos(ctx, caller),
    }
  }

  /** Sign in with a token pasted once, or with a one-time link's secret: a session cookie in exchange. */
  private async signIn(env: UiEnv, req: http.IncomingMessage): Promise<Answer> {
    checkSameOrigin(this.origins, req)
    const b = await jsonBody(req, 4096)
    const { state } = env.ctx
    let caller: Caller
    if (typeof b['link'] === 'string') {
      const tokenId = this.sessions.redeemLink(b['link'])
      const rec = tokenId !== undefined ? await state.get('tokens', tokenId) : undefined
      if (!rec || rec.revoked || Date.parse(rec.expires_at) <= (await state.now()).getTime())
        throw new AgwpError('unauthenticated', 'this sign-in link was used already or has expired: ask for a new one')
      caller = {
        token: rec,
        principal: rec.principal,
        kind: rec.principal.startsWith('agent:') ? 'agent' : 'human',
        actor: rec.principal,
      }
    } else if (typeof b['token'] === 'string') {
      caller = await authenticate(state, `Bearer ${b['token'].trim()}`, undefined)
    } else throw invalid('give the token to sign in with', { field: 'token' })
    if (caller.kind !== 'human')
      throw forbidden(`${caller.principal} is an agent: agents' tokens cannot sign in to the review page`)
    if (!caller.token.scopes.includes('read')) throw forbidden("token lacks the 'read' scope")
    const { secret, session } = this.sessions.create(
      caller.token.id,
      caller.principal,
      Date.parse(caller.token.expires_at),
    )
    return {
      status: 200,
      body: { principal: caller.principal, expires_at: new Date(session.expiresAt).toISOString() },
      headers: { 'Set-Cookie': sessionCookie(this.origins, secret, (session.expiresAt - Date.now()) / 1000) },
    }
  }

  /** A one-time sign-in link for the bearer token's own principal (what `ag-mcp proposals open` prints). */
  private async link(env: UiEnv, req: http.IncomingMessage): Promise<Answer> {
    const caller = await authenticate(env.ctx.state, header(req, 'authorization'), undefined)
    if (header(req, 'origin') !== undefined) checkSameOrigin(this.origins, req)
    if (caller.kind !== 'human')
      throw forbidden(`${caller.principal} is an agent: agents cannot sign in to the review page`)
    if (!caller.token.scopes.includes('read')) throw forbidden("token lacks the 'read' scope")
    env.limiter.take(caller.token.id)
    const l = this.sessions.createLink(caller.token.id, Date.parse(caller.token.expires_at))
    return {
      status: 201,
      body: { path: `${UI_PATH}/#sign-in=${l.secret}`, expires_at: new Date(l.expiresAt).toISOString() },
    }
  }

  /** A browser's report of a blocked script or style: counted and logged, bounded and scrubbed. */
  private async cspReport(env: UiEnv, req: http.IncomingMessage): Promise<Answer> {
    const raw = await readSmallBody(req, 16 * 1024).catch(() => Buffer.alloc(0))
    this.reports++
    if (this.reports <= 100) {
      const text = scrub(raw.toString('utf8').replace(/[^\x20-\x7e]/g, '?')).slice(0, 500)
      env.log(`ag-server ui: content security policy violation reported: ${text}`)
    }
    return { status: 204, body: '' }
  }
}

const ok = (body: unknown): Answer => ({ status: 200, body })

function decodeId(s: string): string {
  try {
    return decodeURIComponent(s)
  } catch {
    throw new AgwpError('bad_request', 'malformed percent-escape in the request path')
  }
}

function send(res: http.ServerResponse, a: Answer): void {
  const isText = typeof a.body === 'string'
  const text = isText ? (a.body as string) : JSON.stringify(a.body)
  const type = isText ? {} : { 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' }
  res.writeHead(a.status, {
    'Cache-Control': 'no-store',
    ...SECURITY_HEADERS,
    ...type,
    ...(a.headers ?? {}),
    'Content-Length': Buffer.byteLength(text),
  })
  res.end(a.status === 204 || a.status === 304 ? undefined : text)
}
