// The recording listener (test/helpers/recording-server.ts) with bodies, and a plugin
// env/context pointing the agwp client at it.
import type http from 'node:http'
import type { Logger } from '../../../core/src/plugin-api.ts'
import { createClient } from '../../../plugins/agwp/client.ts'
import type { ClientSettings } from '../../../plugins/agwp/client.ts'
import type { AgwpContext } from '../../../plugins/agwp/executor.ts'
import type { Operation } from '../../../plugins/agwp/operation.ts'
import { recordingServer } from '../../helpers/recording-server.ts'
import type { Seen } from '../../helpers/recording-server.ts'

export type { Seen }

export type Respond = (req: Seen, res: http.ServerResponse) => void

export interface Listener {
  url: string
  seen: Seen[]
  /** Sockets closed by the client (not by the listener). */
  readonly closed: number
  respond: Respond
  /** Resolves once `done()` holds, checked after each request and each closed socket. */
  until(done: () => boolean): Promise<void>
  close(): Promise<void>
}

export async function listen(respond: Respond = json(200, { ok: true })): Promise<Listener> {
  const server = await recordingServer((_req, res, seen) => l.respond(seen, res), { body: 'buffer' })
  const l: Listener = {
    url: server.url,
    seen: server.requests,
    get closed() {
      return server.closedSockets
    },
    respond,
    until: (done) => server.until(done),
    close: () => server.close(),
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

export function envFor(
  url: string,
  o: {
    token?: string
    refreshTo?: string
    timeoutMs?: number
    maxResponseBytes?: number
    sleep?: ClientSettings['sleep']
  } = {},
): ClientSettings & { refreshes: number } {
  let token = o.token ?? 'agwp_test-token-0000000000'
  const env = {
    upstream: {
      url,
      timeoutMs: o.timeoutMs ?? 3000,
      connectTimeoutMs: 1000,
      maxResponseBytes: o.maxResponseBytes ?? 65536,
    },
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
    ...(o.sleep ? { sleep: o.sleep } : {}),
  }
  return env
}

export function ctxFor(
  env: ClientSettings,
  operation?: Operation,
  signal: AbortSignal = new AbortController().signal,
  name = 't',
): AgwpContext {
  return {
    signal,
    log: silent,
    state: createClient(env),
    tool: { name, group: 'read', dataKind: 'test', ...(operation ? { operation } : {}) },
    server: { name: 'ag-mcp', version: '0', groups: [], revisions: [], limits: {} },
    attachment: async () => undefined,
  }
}
