import { AgwpError } from '../errors.ts'

// Which failures of the database mean "it cannot be reached now" (answered 503 `unavailable`,
// naming the host, so an operator knows where to look) rather than a bug (500 `internal`).

/** Node's socket errors while connecting or talking to the database. */
const SOCKET_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
])
/** SQLSTATEs of a server shutting down or refusing connections (class 08: connection exception). */
const SERVER_CODES = new Set(['57P01', '57P02', '57P03', '53300'])

export function isUnreachable(e: unknown): boolean {
  if (!(e instanceof Error)) return false
  const code = (e as { code?: unknown }).code
  if (typeof code === 'string' && (SOCKET_CODES.has(code) || SERVER_CODES.has(code) || code.startsWith('08')))
    return true
  // pg's own words for a connection that ended or never came (no code)
  return /Connection terminated|connection timeout|timeout exceeded when trying to connect|Client has encountered a connection error/i.test(
    e.message,
  )
}

/** e as the 503 it is when the database is unreachable; anything else unchanged. */
export function unreachableAs503(e: unknown, host: string): unknown {
  if (e instanceof AgwpError || !isUnreachable(e)) return e
  const why = e instanceof Error ? ((e as { code?: string }).code ?? e.message) : String(e)
  return new AgwpError('unavailable', `the database at ${host} cannot be reached (${why})`, { database: host })
}
