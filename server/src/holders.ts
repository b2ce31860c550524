import net from 'node:net'
import { authenticate } from './auth.ts'
import type { State } from './state.ts'

// `serve --exit-with-holders`: a server that lives exactly as long as someone holds it. Each
// holder (an `ag-mcp --local` session, or an `ag-mcp proposals` command) keeps one connection
// open to a second loopback port; the kernel closes it however the holder ends (kill -9 too),
// so the count cannot go stale. When the last holder leaves, the port closes first (a newcomer
// is refused at once and starts or finds the next server), then the server exits. The parent's
// stdin pipe counts as a holder too, which covers the moment between spawning and connecting.
//
// The protocol is one JSON line each way. A holder sends
//   {"token": <an admin token of this data directory>, "pid": N, "slot": true|false|N}
// and gets {"slot": N} (the lowest number no other live holder with a slot has, or the number
// it asked for when that one is free: local mode names each session's principal by it) or {}
// without a slot; {"list": true, "token": …} gets
// {"holders": [...]} and the connection closes. Without a valid admin token the connection is
// closed, so no other local user can keep the server alive or list its holders.

export interface HolderInfo {
  pid: number
  slot?: number
  since: string
}

export interface Holders {
  /** HOST:PORT of the holders' port. */
  address: string
  list(): HolderInfo[]
}

const MAX_HELLO = 4096
/** A connection that says nothing is dropped after this; it never counted as a holder. */
const HELLO_MS = 10_000
/** With nobody holding it from the start (no stdin pipe), the server waits this long for one. */
const FIRST_HOLDER_MS = 60_000

export async function holdOpen(o: {
  host: string
  state: State
  /** stdin is the parent's pipe: it holds the server until it closes. */
  stdinHolds: boolean
  onIdle: () => void
}): Promise<Holders> {
  const held = new Map<net.Socket, HolderInfo>()
  let stdinOpen = o.stdinHolds
  let closing = false
  const server = net.createServer()
  const pendingSockets = new Set<net.Socket>()
  let firstHolder: NodeJS.Timeout | undefined
  const idleIfUnheld = (): void => {
    if (closing || held.size > 0 || stdinOpen) return
    closing = true
    server.close()
    for (const s of pendingSockets) s.destroy()
    o.onIdle()
  }
  const freeSlot = (wanted: number | undefined): number => {
    const used = new Set([...held.values()].map((h) => h.slot))
    if (wanted !== undefined && !used.has(wanted)) return wanted
    let n = 1
    while (used.has(n)) n++
    return n
  }
  server.on('connection', (socket) => {
    if (closing) return void socket.destroy()
    pendingSockets.add(socket)
    onFirstLine(socket, (line) => {
      pendingSockets.delete(socket)
      void parseHello(line, o.state).then((hello) => {
        if (!hello || closing) return void socket.destroy()
        if (hello.list) {
          socket.end(`${JSON.stringify({ holders: [...held.values()] })}\n`)
          return
        }
        const info: HolderInfo = { pid: hello.pid, since: new Date().toISOString() }
        if (hello.slot !== false) info.slot = freeSlot(hello.slot === true ? undefined : hello.slot)
        held.set(socket, info)
        clearTimeout(firstHolder)
        socket.write(`${JSON.stringify(info.slot === undefined ? {} : { slot: info.slot })}\n`)
      })
    })
    socket.on('error', () => socket.destroy())
    socket.on('close', () => {
      pendingSockets.delete(socket)
      if (held.delete(socket)) idleIfUnheld()
    })
  })
  if (o.stdinHolds) {
    const ended = (): void => {
      stdinOpen = false
      idleIfUnheld()
    }
    process.stdin.once('end', ended)
    process.stdin.once('error', ended)
    process.stdin.resume()
  }
  firstHolder = setTimeout(idleIfUnheld, FIRST_HOLDER_MS)
  firstHolder.unref()
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, o.host, () => resolve())
  })
  const addr = server.address() as net.AddressInfo
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address
  return { address: `${host}:${addr.port}`, list: () => [...held.values()] }
}

/**
 * Calls `got` with the socket's first line, its hello. A socket that sends more than MAX_HELLO
 * without a newline, or nothing for HELLO_MS, is dropped instead.
 */
function onFirstLine(socket: net.Socket, got: (line: string) => void): void {
  socket.setEncoding('utf8')
  socket.setTimeout(HELLO_MS, () => socket.destroy())
  let line = ''
  const onData = (chunk: string): void => {
    line += chunk
    const nl = line.indexOf('\n')
    if (nl < 0) {
      if (line.length > MAX_HELLO) socket.destroy()
      return
    }
    socket.off('data', onData)
    socket.setTimeout(0)
    got(line.slice(0, nl))
  }
  socket.on('data', onData)
}

async function parseHello(
  text: string,
  state: State,
): Promise<{ pid: number; slot: boolean | number; list: boolean } | undefined> {
  let v: unknown
  try {
    v = JSON.parse(text)
  } catch {
    return undefined
  }
  if (typeof v !== 'object' || v === null) return undefined
  const h = v as { token?: unknown; pid?: unknown; slot?: unknown; list?: unknown }
  if (typeof h.token !== 'string') return undefined
  try {
    if (!(await authenticate(state, `Bearer ${h.token}`, undefined)).token.scopes.includes('admin')) return undefined
  } catch {
    return undefined
  }
  if (h.list === true) return { pid: 0, slot: false, list: true }
  if (typeof h.pid !== 'number' || !Number.isInteger(h.pid) || h.pid <= 0) return undefined
  const slot = typeof h.slot === 'number' && Number.isInteger(h.slot) && h.slot > 0 ? h.slot : h.slot === true
  return { pid: h.pid, slot, list: false }
}
