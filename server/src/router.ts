import type { Caller } from './auth.ts'
import { AgwpError } from './errors.ts'
import type { Ctx } from './context.ts'

export interface Req {
  ctx: Ctx
  caller: Caller
  params: Record<string, string>
  query: URLSearchParams
  body: unknown
}
export interface Res {
  status?: number
  body: unknown
}
export type Handler = (r: Req) => Promise<Res> | Res

interface Route {
  method: string
  re: RegExp
  keys: string[]
  handler: Handler
  /** contract definition the request body must match, if any */
  bodyDef?: string
}

export class Router {
  private routes: Route[] = []

  add(method: string, pattern: string, handler: Handler, bodyDef?: string): void {
    const keys: string[] = []
    const re = new RegExp(
      '^' +
        pattern.replace(/:([a-z_]+)/g, (_m, k: string) => {
          keys.push(k)
          return '([^/]+)'
        }) +
        '$',
    )
    const r: Route = { method, re, keys, handler }
    if (bodyDef !== undefined) r.bodyDef = bodyDef
    this.routes.push(r)
  }

  /** The matching route, or 'method' when only the method is wrong, or undefined. */
  match(method: string, path: string): { route: Route; params: Record<string, string> } | 'method' | undefined {
    let methodMismatch = false
    for (const r of this.routes) {
      const m = r.re.exec(path)
      if (!m) continue
      if (r.method !== method) {
        methodMismatch = true
        continue
      }
      const params: Record<string, string> = {}
      r.keys.forEach((k, i) => {
        params[k] = decodeParam(m[i + 1] ?? '')
      })
      return { route: r, params }
    }
    return methodMismatch ? 'method' : undefined
  }
}

/** A path segment's percent-escapes decoded; a malformed one is the client's error (400). */
function decodeParam(s: string): string {
  try {
    return decodeURIComponent(s)
  } catch {
    throw new AgwpError('bad_request', 'malformed percent-escape in the request path')
  }
}
