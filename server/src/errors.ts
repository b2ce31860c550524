// One error type for the whole server: handlers throw AgwpError, http.ts maps it to
// {"error":{code,message,details}} with the matching status. Anything else becomes a
// generic `internal` error so no stack trace or git stderr ever reaches a client.

export type ErrorCode =
  | 'bad_request'
  | 'unauthenticated'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'invalid'
  | 'rate_limited'
  | 'too_large'
  | 'timeout'
  | 'storage_full'
  | 'unavailable'
  | 'not_owner'
  | 'internal'

export const STATUS: Record<ErrorCode, number> = {
  bad_request: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  invalid: 422,
  rate_limited: 429,
  too_large: 413,
  timeout: 504,
  storage_full: 507,
  unavailable: 503,
  not_owner: 503,
  internal: 500,
}

export type Details = Record<string, unknown>

export class AgwpError extends Error {
  readonly code: ErrorCode
  readonly details: Details
  readonly headers: Record<string, string>
  constructor(code: ErrorCode, message: string, details: Details = {}, headers: Record<string, string> = {}) {
    super(message)
    this.code = code
    this.details = details
    this.headers = headers
  }
  get status(): number {
    return STATUS[this.code]
  }
}

export const invalid = (message: string, details: Details = {}): AgwpError => new AgwpError('invalid', message, details)
export const notFound = (message: string, details: Details = {}): AgwpError =>
  new AgwpError('not_found', message, details)
export const conflict = (message: string, details: Details = {}): AgwpError =>
  new AgwpError('conflict', message, details)
export const forbidden = (message: string, details: Details = {}): AgwpError =>
  new AgwpError('forbidden', message, details)

export function errorBody(err: AgwpError): { error: { code: ErrorCode; message: string; details: Details } } {
  return { error: { code: err.code, message: err.message, details: err.details } }
}
