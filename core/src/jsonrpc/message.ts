// Classifies one parsed JSON value as JSON-RPC 2.0: what the dispatcher may act on, or why not.

export type RequestId = string | number

export type Params = Record<string, unknown>

export type Incoming =
  | { kind: 'request'; id: RequestId; method: string; params: Params | undefined }
  | { kind: 'notification'; method: string; params: Params | undefined }
  | { kind: 'response' }
  | { kind: 'invalid'; id: RequestId | null; code: number; message: string }

export const PARSE_ERROR = -32700
export const INVALID_REQUEST = -32600
export const METHOD_NOT_FOUND = -32601
export const INVALID_PARAMS = -32602
export const INTERNAL_ERROR = -32603
export const UNSUPPORTED_PROTOCOL_VERSION = -32022

export function isRequestId(x: unknown): x is RequestId {
  return typeof x === 'string' || (typeof x === 'number' && Number.isSafeInteger(x))
}

export function classify(value: unknown): Incoming {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return {
      kind: 'invalid',
      id: null,
      code: INVALID_REQUEST,
      message: 'Invalid Request: a JSON-RPC message must be a JSON object',
    }
  }
  const msg = value as Record<string, unknown>
  const hasId = 'id' in msg
  const id = hasId && isRequestId(msg['id']) ? msg['id'] : null
  if (msg['jsonrpc'] !== '2.0') {
    return { kind: 'invalid', id, code: INVALID_REQUEST, message: 'Invalid Request: "jsonrpc" must be "2.0"' }
  }
  if (!('method' in msg)) {
    if (hasId && ('result' in msg || 'error' in msg)) return { kind: 'response' }
    return { kind: 'invalid', id, code: INVALID_REQUEST, message: 'Invalid Request: "method" is missing' }
  }
  if (typeof msg['method'] !== 'string') {
    return { kind: 'invalid', id, code: INVALID_REQUEST, message: 'Invalid Request: "method" must be a string' }
  }
  if (hasId && id === null) {
    return {
      kind: 'invalid',
      id: null,
      code: INVALID_REQUEST,
      message: 'Invalid Request: "id" must be a string or an integer',
    }
  }
  const p = msg['params']
  if (p !== undefined && (typeof p !== 'object' || p === null || Array.isArray(p))) {
    if (id === null) return { kind: 'notification', method: msg['method'], params: undefined }
    return { kind: 'invalid', id, code: INVALID_PARAMS, message: 'Invalid params: "params" must be an object' }
  }
  const params = p as Params | undefined
  return id === null
    ? { kind: 'notification', method: msg['method'], params }
    : { kind: 'request', id, method: msg['method'], params }
}
