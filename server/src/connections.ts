import type http from 'node:http'
import type net from 'node:net'

// Connection lifetimes, so that a client keeping a socket alive never has a request dropped on
// it without an answer, and the guards against slow clients measure the client, not this
// server's own busy event loop (issue 16).
//
// What 100 ag-mcp processes on two cores showed: with keepAliveTimeout 5 s, a client whose own
// event loop was starved picked its pooled socket 5.02 s after the last answer (its clock),
// before it had processed the FIN the server sent at 5 s; the request met a closed socket and
// came back ECONNRESET. A Node agent honours the `Keep-Alive: timeout=N` hint only when it has
// an idle timeout of its own, and then keeps just 1 s of margin. So the server keeps idle
// sockets long (KEEP_ALIVE_MS, advertised in the hint) and clients close theirs well before
// (ag-mcp: plugins/agwp/client.ts); retrying a request a reset cut off is made safe by
// Idempotency-Key (idempotency.ts).
//
// Every timeout here is a timer, and Node runs due timers before it reads sockets: after the
// loop was busy for a while, a timer fires although the client's bytes are already waiting
// unread. So a timeout never acts at once: it looks again after the pending reads (setImmediate
// runs after the poll phase) and stands down if the client sent anything meanwhile.

/** Idle time before the server closes a kept-alive socket (the client is told, minus a margin). */
export const KEEP_ALIVE_MS = 65_000
/** The whole request head must arrive within this (slowloris guard). */
export const HEADERS_TIMEOUT_MS = 20_000

/** Node's private link from a socket to the response it is writing (as used by closeIdleConnections). */
interface ServedSocket extends net.Socket {
  _httpMessage?: http.ServerResponse | null
}

const STATUS_OF: Record<string, string> = {
  ERR_HTTP_REQUEST_TIMEOUT: '408 Request Timeout',
  HPE_HEADER_OVERFLOW: '431 Request Header Fields Too Large',
  HPE_CHUNK_EXTENSIONS_OVERFLOW: '413 Payload Too Large',
}

export function tuneConnections(server: http.Server, requestTimeoutMs: number): void {
  server.keepAliveTimeout = KEEP_ALIVE_MS
  server.headersTimeout = Math.min(HEADERS_TIMEOUT_MS, requestTimeoutMs)
  server.requestTimeout = requestTimeoutMs

  // Keep-alive idle (and the fallback guard below): with a listener here Node leaves the socket
  // open and the decision to us.
  server.on('timeout', (socket: ServedSocket) => {
    const seen = socket.bytesRead
    setImmediate(() => {
      if (socket.destroyed || socket.bytesRead !== seen) return // the client spoke: serve it
      const res = socket._httpMessage
      if (res && !res.writableFinished) return // this server still owes an answer
      socket.destroy()
    })
  })

  // Node's headers/request deadline check (every connectionsCheckingInterval) calls a request
  // that is not complete by its deadline a slow client. If bytes were waiting unread, the
  // server was the slow one: the request goes on, guarded from then on by inactivity alone
  // (no byte for a whole request timeout). Everything else gets Node's own answer.
  server.on('clientError', (err: NodeJS.ErrnoException, socket: ServedSocket) => {
    if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
      const seen = socket.bytesRead
      setImmediate(() => {
        if (socket.destroyed) return
        if (socket.bytesRead !== seen) {
          socket.setTimeout(requestTimeoutMs)
          return
        }
        refuse(socket, err)
      })
      return
    }
    refuse(socket, err)
  })
}

/** What Node answers without a clientError listener: a status line if nothing was sent yet, then close. */
function refuse(socket: ServedSocket, err: NodeJS.ErrnoException): void {
  const res = socket._httpMessage
  if (socket.writable && (!res || !res.headersSent))
    socket.write(`HTTP/1.1 ${STATUS_OF[err.code ?? ''] ?? '400 Bad Request'}\r\nConnection: close\r\n\r\n`)
  socket.destroy()
}
