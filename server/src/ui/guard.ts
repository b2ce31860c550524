import crypto from 'node:crypto'
import type http from 'node:http'
import { AgwpError, forbidden } from '../errors.ts'

// What every answer under /ui carries, and the checks a request passes before it acts: the Host
// it was sent to (a DNS-rebinding page names its own), the Origin and Sec-Fetch-Site of every
// POST, and the session's CSRF token on every action.

export const UI_PATH = '/ui'
export const COOKIE = 'agwp_ui_session'
export const CSRF_HEADER = 'x-agwp-csrf'
export const REPORT_PATH = `${UI_PATH}/csp-report`

/**
 * Only the bundle's own script and style run; nothing is fetched from anywhere else; no page may
 * frame this one; string-to-HTML sinks (innerHTML and its kin) throw under Trusted Types with no
 * policy allowed, so no code path can turn data into markup even by mistake.
 */
export const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "form-action 'none'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
  "require-trusted-types-for 'script'",
  "trusted-types 'none'",
  // report-uri, not report-to: Chrome prefers report-to when both are given, and the Reporting
  // API batches its reports for up to a minute; report-uri posts each violation at once.
  `report-uri ${REPORT_PATH}`,
].join('; ')

export const SECURITY_HEADERS: Record<string, string> = {
  'Content-Security-Policy': CSP,
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Resource-Policy': 'same-origin',
  'Permissions-Policy': 'camera=(), microphone=(), geolocation=(), payment=(), usb=()',
}

export interface Origins {
  /** The origin people use, behind a TLS proxy (serve --ui-origin); else the Host's own. */
  publicOrigin: URL | undefined
  /** host:port the server listens on, once it does. */
  listen: () => string
}

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|localhost|\[::1\])$/

function hostPort(h: string): { host: string; port: string } {
  const m = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(h)
  return { host: (m?.[1] ?? '').toLowerCase(), port: m?.[2] ?? '' }
}

/**
 * Is the request addressed to this server? On a loopback listener only loopback names with its
 * port are: a page whose name was rebound to 127.0.0.1 sends its own name and is refused.
 * Behind --ui-origin, or on a wildcard address, the Host is not checked (Origin still is).
 */
export function hostAllowed(o: Origins, hostHeader: string | undefined): boolean {
  if (hostHeader === undefined) return false
  if (o.publicOrigin !== undefined) return true
  const listen = hostPort(o.listen())
  if (!LOOPBACK.test(listen.host)) return true
  const h = hostPort(hostHeader)
  return LOOPBACK.test(h.host) && h.port === listen.port
}

/** The origin a same-origin request carries. */
export function expectedOrigin(o: Origins, hostHeader: string): string {
  return o.publicOrigin !== undefined ? o.publicOrigin.origin : `http://${hostHeader.toLowerCase()}`
}

/** A POST from a page: from this origin, by the browser's own account (Origin, Sec-Fetch-Site). */
export function checkSameOrigin(o: Origins, req: http.IncomingMessage): void {
  const site = header(req, 'sec-fetch-site')
  if (site !== undefined && site !== 'same-origin') throw forbidden(`a ${site} request cannot act here`)
  const origin = header(req, 'origin')
  if (origin === undefined) throw forbidden('the request carries no Origin header')
  if (origin !== expectedOrigin(o, header(req, 'host') ?? ''))
    throw forbidden('the request comes from another origin', { origin: origin.slice(0, 200) })
}

/** The CSRF header matches the session's token (constant time). */
export function checkCsrf(req: http.IncomingMessage, csrf: string): void {
  const got = Buffer.from(header(req, CSRF_HEADER) ?? '', 'utf8')
  const want = Buffer.from(csrf, 'utf8')
  if (got.length !== want.length || !crypto.timingSafeEqual(got, want))
    throw forbidden('missing or wrong CSRF token: reload the page')
}

export function cookieSecret(req: http.IncomingMessage): string | undefined {
  for (const part of (header(req, 'cookie') ?? '').split(';')) {
    const eq = part.indexOf('=')
    if (eq > 0 && part.slice(0, eq).trim() === COOKIE) return part.slice(eq + 1).trim()
  }
  return undefined
}

/** HttpOnly, SameSite=Strict, for /ui only, Secure behind an https origin; Max-Age 0 clears it. */
export function sessionCookie(o: Origins, value: string, maxAgeS: number): string {
  const secure = o.publicOrigin?.protocol === 'https:' ? '; Secure' : ''
  return `${COOKIE}=${value}; Path=${UI_PATH}; HttpOnly; SameSite=Strict; Max-Age=${Math.max(0, Math.floor(maxAgeS))}${secure}`
}

export function header(req: http.IncomingMessage, name: string): string | undefined {
  const v = req.headers[name]
  return Array.isArray(v) ? v[0] : v
}

export async function readSmallBody(req: http.IncomingMessage, max: number): Promise<Buffer> {
  const chunks: Buffer[] = []
  let len = 0
  for await (const c of req) {
    const b = c as Buffer
    len += b.length
    if (len > max) throw new AgwpError('too_large', `request body exceeds ${max} bytes`, { max_bytes: max })
    chunks.push(b)
  }
  return Buffer.concat(chunks)
}

/** A JSON object body (content-type application/json), or 422. */
export async function jsonBody(req: http.IncomingMessage, max = 64 * 1024): Promise<Record<string, unknown>> {
  if (!(header(req, 'content-type') ?? '').startsWith('application/json'))
    throw new AgwpError('invalid', 'content-type must be application/json')
  const raw = await readSmallBody(req, max)
  let v: unknown
  try {
    v = raw.length === 0 ? {} : JSON.parse(raw.toString('utf8'))
  } catch {
    throw new AgwpError('invalid', 'request body is not valid JSON')
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new AgwpError('invalid', 'body must be an object')
  return v as Record<string, unknown>
}
