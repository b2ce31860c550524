import http from 'node:http'
import type { AddressInfo } from 'node:net'
import path from 'node:path'
import { AgwpError, errorBody } from './errors.ts'
import { authenticate, RateLimiter } from './auth.ts'
import { DEFAULT_LIMITS, type Ctx, type Limits } from './context.ts'
import { Router } from './router.ts'
import { registerRoutes } from './routes.ts'
import { registerAdminRoutes } from './admin-routes.ts'
import { validateBody } from './validate.ts'
import { isStorageFull, Store } from './store.ts'
import { RepoRegistry } from './repos.ts'
import { KeyedMutex } from './mutex.ts'
import { GitError } from './git.ts'
import { settleAtStartup } from './intents.ts'
import { tuneConnections } from './connections.ts'

export const PREFIX = '/agwp/v1'

export interface ServerOptions {
  dataDir: string
  host?: string
  port?: number
  limits?: Partial<Limits>
  /** requests per second per token (0 disables) and burst */
  rate?: number
  burst?: number
  requestTimeoutMs?: number
  log?: (msg: string) => void
}

export interface RunningServer {
  url: string
  port: number
  ctx: Ctx
  close: () => Promise<void>
}

export async function startServer(opts: ServerOptions): Promise<RunningServer> {
  const store = Store.open(path.join(opts.dataDir, 'state'), opts.log ? { log: opts.log } : {})
  const ctx: Ctx = {
    store,
    repos: new RepoRegistry(path.join(opts.dataDir, 'repos')),
    mutex: new KeyedMutex(),
    limits: { ...DEFAULT_LIMITS, ...(opts.limits ?? {}) },
    tmpDir: path.join(opts.dataDir, 'tmp'),
  }
  // Settle ref updates a crash interrupted, and the git locks it left, before anything
  // can observe the state.
  await settleAtStartup(ctx, opts.log ?? ((m: string) => process.stderr.write(m + '\n')))
  const router = new Router()
  registerRoutes(router)
  registerAdminRoutes(router)
  const limiter = new RateLimiter(opts.rate ?? 50, opts.burst ?? 200)
  const log = opts.log ?? ((m: string) => process.stderr.write(m + '\n'))

  const server = http.createServer((req, res) => {
    handle(ctx, router, limiter, log, req, res).catch((e: unknown) => {
      log(`ag-server: unhandled ${String(e)}`)
      if (!res.headersSent) send(res, 500, errorBody(new AgwpError('internal', 'internal error')))
    })
  })
  tuneConnections(server, opts.requestTimeoutMs ?? 60_000)
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(opts.port ?? 7420, opts.host ?? '127.0.0.1', () => resolve())
  })
  const addr = server.address() as AddressInfo
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address
  return {
    url: `http://${host}:${addr.port}${PREFIX}`,
    port: addr.port,
    ctx,
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((r) => server.close(() => r()))
      ctx.repos.closeAll()
      store.close()
    },
  }
}

function send(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body)
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    'Cache-Control': 'no-store',
    'X-Content-Type-Options': 'nosniff',
    ...headers,
  })
  res.end(text)
}

async function readBody(req: http.IncomingMessage, max: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length'] ?? '0')
  if (declared > max) throw new AgwpError('too_large', `request body exceeds ${max} bytes`, { max_bytes: max })
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

async function handle(
  ctx: Ctx,
  router: Router,
  limiter: RateLimiter,
  log: (m: string) => void,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<void> {
  try {
    const url = new URL(req.url ?? '/', 'http://localhost')
    if (!url.pathname.startsWith(PREFIX + '/'))
      throw new AgwpError('not_found', 'unknown endpoint (AGWP lives under /agwp/v1)')
    const rel = url.pathname.slice(PREFIX.length)
    const method = req.method ?? 'GET'
    const m = router.match(method, rel)
    if (m === undefined) throw new AgwpError('not_found', `unknown endpoint ${method} ${rel.slice(0, 200)}`)
    if (m === 'method') throw new AgwpError('not_found', `method ${method} not supported on ${rel.slice(0, 200)}`)
    const caller = authenticate(
      ctx.store,
      header(req, 'authorization'),
      header(req, 'agwp-run'),
      header(req, 'agwp-repo'),
    )
    limiter.take(caller.token.id)
    let body: unknown = undefined
    if (method === 'POST' || method === 'PUT' || method === 'PATCH') {
      const raw = await readBody(req, ctx.limits.maxBodyBytes)
      if (raw.length === 0) body = {}
      else {
        const ct = header(req, 'content-type') ?? ''
        if (ct && !ct.startsWith('application/json'))
          throw new AgwpError('invalid', 'content-type must be application/json')
        try {
          body = JSON.parse(raw.toString('utf8'))
        } catch {
          throw new AgwpError('invalid', 'request body is not valid JSON')
        }
      }
      if (m.route.bodyDef) validateBody(m.route.bodyDef, body)
    } else {
      req.resume()
    }
    const out = await m.route.handler({ ctx, caller, params: m.params, query: url.searchParams, body })
    send(res, out.status ?? 200, out.body)
  } catch (e0) {
    // A full disk anywhere on the write path (journal, object files, git) is the same 507.
    const e = isStorageFull(e0) ? new AgwpError('storage_full', 'the server is out of storage space') : e0
    if (e instanceof AgwpError) {
      // For an oversized body: answer, close the connection, discard the rest unread.
      const extra = e.code === 'too_large' ? { Connection: 'close' } : {}
      send(res, e.status, errorBody(e), { ...e.headers, ...extra })
      if (e.code === 'too_large') req.resume()
      return
    }
    // Never leak internals: log server-side, answer with a generic error.
    log(`ag-server: ${e instanceof GitError ? e.message : e instanceof Error ? (e.stack ?? e.message) : String(e)}`)
    send(res, 500, errorBody(new AgwpError('internal', 'internal error')))
  }
}

function header(req: http.IncomingMessage, name: string): string | undefined {
  const v = req.headers[name]
  return Array.isArray(v) ? v[0] : v
}
