// A loopback HTTP listener for tests, on an ephemeral port: it records every request (and, if
// asked, its body), counts the sockets the client closed, and answers through a callback.
import http from 'node:http'
import type { AddressInfo } from 'node:net'

export interface Seen {
  method: string
  url: string
  headers: http.IncomingHttpHeaders
  /** The request body; '' unless the server was started with `body: 'buffer'`. */
  body: string
}

export interface RecordingServer {
  url: string
  requests: Seen[]
  /** Sockets closed by the client (the server never closes one before close()). */
  readonly closedSockets: number
  /**
   * Resolves once `done()` holds, checked now and after every request recorded and every socket
   * closed: a wait on those events, not on the clock (tap's test timeout ends a wait that never ends).
   */
  until(done: () => boolean): Promise<void>
  close(): Promise<void>
}

/**
 * ag-mcp's start-up check (`GET /whoami`, sent in the background after its first answer), for
 * tests that count the requests tool calls make: `record: notStartupCheck` leaves it out.
 */
export const notStartupCheck = (s: Seen): boolean => !(s.method === 'GET' && s.url === '/agwp/v1/whoami')

/**
 * `body: 'buffer'` reads the whole body before `answer` runs (and records it); 'stream' (the
 * default) calls `answer` at once, so it can hold, stream or forward the request. Every request
 * is answered; only those `record` accepts (default: all) join `requests`.
 */
export async function recordingServer(
  answer: (req: http.IncomingMessage, res: http.ServerResponse, seen: Seen) => void,
  o: { body?: 'buffer' | 'stream'; record?: (s: Seen) => boolean } = {},
): Promise<RecordingServer> {
  const requests: Seen[] = []
  const waiting = new Set<() => void>()
  const changed = (): void => {
    for (const check of [...waiting]) check()
  }
  const push = (s: Seen): void => {
    if (o.record?.(s) ?? true) requests.push(s)
    changed()
  }
  let closedSockets = 0
  const server = http.createServer((req, res) => {
    const seen: Seen = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: '' }
    if (o.body !== 'buffer') {
      push(seen)
      answer(req, res, seen)
      return
    }
    req.setEncoding('utf8')
    req.on('data', (c: string) => (seen.body += c))
    req.on('end', () => {
      push(seen)
      answer(req, res, seen)
    })
  })
  server.on('connection', (s) =>
    s.on('close', () => {
      closedSockets++
      changed()
    }),
  )
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', () => ok()))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    get closedSockets() {
      return closedSockets
    },
    until: (done) =>
      new Promise<void>((resolve) => {
        const check = (): void => {
          if (!done()) return
          waiting.delete(check)
          resolve()
        }
        waiting.add(check)
        check()
      }),
    async close() {
      server.closeAllConnections()
      await new Promise<void>((ok) => server.close(() => ok()))
    },
  }
}

export interface ProxyHooks {
  /** Sees each request first; returns true when it dealt with the request itself (answered or dropped it). */
  request?: (req: http.IncomingMessage, res: http.ServerResponse) => boolean
  /** Sees each upstream answer; returns true when it dealt with it (otherwise it is relayed unchanged). */
  answer?: (req: http.IncomingMessage, res: http.ServerResponse, answer: http.IncomingMessage) => boolean
}

/** A recording listener that forwards every request unchanged to `target` (an origin or URL on loopback). */
export function forwardingProxy(
  target: string,
  hooks: ProxyHooks = {},
  record?: (s: Seen) => boolean,
): Promise<RecordingServer> {
  const to = new URL(target)
  return recordingServer(
    (req, res) => {
      if (hooks.request?.(req, res) === true) return
      const fwd = http.request(
        { host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers },
        (answer) => {
          if (hooks.answer?.(req, res, answer) === true) return
          res.writeHead(answer.statusCode ?? 502, answer.headers)
          answer.pipe(res)
        },
      )
      req.pipe(fwd)
    },
    record ? { record } : {},
  )
}
