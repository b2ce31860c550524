// A tiny recording HTTP listener on an ephemeral loopback port, and a plugin env/context
// pointing the agwp client at it.
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Logger, Operation, PluginEnv, ToolContext } from '../../../core/src/plugin-api.ts'
import { createClient } from '../../../plugins/agwp/client.ts'

export interface Seen {
  method: string
  url: string
  headers: http.IncomingHttpHeaders
  body: string
}

export type Respond = (req: Seen, res: http.ServerResponse) => void

export interface Listener {
  url: string
  seen: Seen[]
  /** Sockets closed by the client (not by the listener). */
  closed: number
  respond: Respond
  close(): Promise<void>
}

export async function listen(respond: Respond = json(200, { ok: true })): Promise<Listener> {
  const l: Listener = { url: '', seen: [], closed: 0, respond, close: async () => undefined }
  const server = http.createServer((req, res) => {
    let body = ''
    req.setEncoding('utf8')
    req.on('data', (c: string) => (body += c))
    req.on('end', () => {
      const seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body }
      l.seen.push(seen)
      l.respond(seen, res)
    })
  })
  server.on('connection', (s) => s.on('close', () => l.closed++))
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  l.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  l.close = async () => {
    server.closeAllConnections()
    await new Promise<void>((r) => server.close(() => r()))
  }
  return l
}

export function json(status: number, body: unknown, headers: Record<string, string> = {}): Respond {
  return (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers })
    res.end(JSON.stringify(body))
  }
}

export const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} }

export function envFor(url: string, o: { token?: string; refreshTo?: string; timeoutMs?: number; maxResponseBytes?: number } = {}): PluginEnv & { refreshes: number } {
  let token = o.token ?? 'agwp_test-token-0000000000'
  const env = {
    upstream: { url, timeoutMs: o.timeoutMs ?? 3000, connectTimeoutMs: 1000, maxResponseBytes: o.maxResponseBytes ?? 65536 },
    tokens: {
      current: async () => token,
      refresh: async () => {
        env.refreshes++
        if (o.refreshTo !== undefined) token = o.refreshTo
        return token
      },
    },
    log: silent,
    refreshes: 0,
  }
  return env
}

export function ctxFor(env: PluginEnv, operation?: Operation, signal: AbortSignal = new AbortController().signal, name = 't'): ToolContext {
  return {
    signal,
    log: silent,
    upstream: createClient(env),
    tool: { name, group: 'read', dataKind: 'test', ...(operation ? { operation } : {}) },
    host: { name: 'ag-mcp', version: '0', groups: [], revisions: [], limits: {} },
  }
}
