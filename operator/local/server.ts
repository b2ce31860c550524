// The private ag-server, shared by every session and command in the repository. It runs
// detached (its own process group, output in .ag/server.log) with --exit-with-holders: each
// process that uses it holds one connection to its holders' port, the kernel closes that
// connection however the process ends (kill -9 too), and the server exits when the last one
// closes. So it lives exactly as long as someone uses it, and nothing a crash leaves blocks
// the next start: a dead server's lock is broken by the next one, a dead session's
// connection is gone.
//
// Races: two processes that find no server both spawn one; the data directory's lock lets one
// win and the other's child exits, so both hold the winner. A server whose last holder just
// left closes its holders' port before anything else, so a newcomer is refused at once (or
// told "closing") and starts the next server, which takes the lock once the old one let go.
// A session whose server dies under it (a crash) starts or finds the next one on the same
// port, which its ag-mcp already talks to; the tokens live in the server's journal.
import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { closeSync, existsSync, openSync, readFileSync, statSync, truncateSync } from 'node:fs'
import { connect } from 'node:net'
import type { Socket } from 'node:net'
import { join } from 'node:path'
import { LocalError } from './repo.ts'
import { alive } from '../../lib/alive.ts'
import type { LocalState } from './setup.ts'

export interface PrivateServer {
  /** The upstream base URL (without /agwp/v1). */
  url: string
  /** This session's slot (1, 2, …: the lowest no other live session holds), when asked for. */
  slot: number | undefined
  /** Lets go of the server (it exits if nobody else holds it). */
  stop(): void
}

interface Lock {
  pid: number
  kind: string
  listen?: string
  holders?: string
}

/** How long to keep trying to start or reach the server before giving up with the log's tail. */
const DEADLINE_MS = 60_000
/** A server that keeps exiting (a port taken, a broken data directory) is not started forever. */
const MAX_SPAWNS = 5
const LOG_LIMIT = 1024 * 1024

export function readLock(data: string): Lock | undefined {
  try {
    return JSON.parse(readFileSync(join(data, 'lock'), 'utf8')) as Lock
  } catch {
    return undefined
  }
}

const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

/**
 * Holds the repository's private server, starting it if none runs. `slot`: a session (it gets
 * a slot number); a command does not. `onLost` is called when the server went away on its own
 * (not through stop), after this process holds the next one again, or with the error if it
 * could not.
 */
export async function holdServer(
  s: LocalState,
  o: { slot: boolean | number; onLost?: (e: Error | undefined, next: PrivateServer | undefined) => void },
  listen = '127.0.0.1:0',
): Promise<PrivateServer> {
  const deadline = Date.now() + DEADLINE_MS
  let child: ChildProcess | undefined
  let spawned = 0
  let last = ''
  for (;;) {
    const lock = readLock(s.data)
    if (lock?.kind === 'server' && alive(lock.pid) && lock.listen && lock.holders) {
      const held = await hello(s, lock.holders, o.slot).catch((e: Error) => {
        last = e.message
        return undefined
      })
      if (held) {
        const url = `http://${lock.listen}`
        let stopped = false
        const server: PrivateServer = {
          url,
          slot: held.slot,
          stop: () => {
            stopped = true
            held.socket.destroy()
            child?.stdin?.destroy()
          },
        }
        held.socket.once('close', () => {
          if (stopped || !o.onLost) return
          child?.stdin?.destroy()
          // The server went away: hold the next one on the same port (ag-mcp talks to it).
          holdServer(s, { ...o, slot: held.slot ?? false }, lock.listen).then(
            (next) => o.onLost?.(undefined, next),
            (e: Error) => o.onLost?.(e, undefined),
          )
        })
        return server
      }
    } else if (!lock || !alive(lock.pid)) {
      if (!existsSync(join(s.data, 'ag-server.json')))
        throw new LocalError(`local mode's state in ${s.dir} is gone (ag-mcp local remove?)`)
      if (!child || child.exitCode !== null) {
        if (++spawned > MAX_SPAWNS)
          throw new LocalError(`the private ag-server would not start (${MAX_SPAWNS} tries); its log: ${logTail(s)}`)
        child = spawnServer(s, listen)
      }
    } else if (lock.kind === 'server' && lock.listen && !lock.holders && lockAge(s) > 5000) {
      throw new LocalError(
        `the private ag-server (pid ${lock.pid}) was started by an older ag-mcp and cannot be shared: end the session that started it (or stop pid ${lock.pid}), then start again`,
      )
    }
    // else: a server is starting (no address yet), or an ag-server command holds the lock.
    if (Date.now() > deadline)
      throw new LocalError(
        `could not start or reach the private ag-server in ${s.data}${last ? ` (${last})` : ''}; its log: ${logTail(s)}`,
      )
    await pause(25)
  }
}

function lockAge(s: LocalState): number {
  try {
    return Date.now() - statSync(join(s.data, 'lock')).mtimeMs
  } catch {
    return 0
  }
}

function spawnServer(s: LocalState, listen: string): ChildProcess {
  const [program, ...leading] = s.agServer
  const logFile = join(s.dir, 'server.log')
  try {
    if (statSync(logFile).size > LOG_LIMIT) truncateSync(logFile, 0)
  } catch {
    // no log yet
  }
  const log = openSync(logFile, 'a', 0o600)
  try {
    const child = spawn(
      program as string,
      [...leading, 'serve', '--data', s.data, '--listen', listen, '--exit-with-holders', '--ui'],
      // Detached: its own process group, so a Ctrl-C meant for one session does not stop the
      // server the others use. stdin is our pipe: it holds the server until we connect.
      { stdio: ['pipe', log, log], detached: true },
    )
    child.on('error', () => undefined)
    child.stdin?.on('error', () => undefined)
    child.unref()
    ;(child.stdin as unknown as { unref?: () => void } | null)?.unref?.()
    return child
  } finally {
    closeSync(log)
  }
}

function logTail(s: LocalState): string {
  try {
    const text = readFileSync(join(s.dir, 'server.log'), 'utf8').trim().split('\n').slice(-3).join(' | ')
    return text || '(empty)'
  } catch {
    return '(none)'
  }
}

/** Connects to the holders' port and says who we are; resolves with our slot. */
function hello(
  s: LocalState,
  address: string,
  slot: boolean | number,
): Promise<{ socket: Socket; slot: number | undefined }> {
  const m = /^(.*):(\d+)$/.exec(address)
  const host = (m?.[1] ?? '127.0.0.1').replace(/^\[|\]$/g, '')
  const admin = readFileSync(join(s.data, 'admin.token'), 'utf8').trim()
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port: Number(m?.[2]) })
    socket.setEncoding('utf8')
    let line = ''
    const fail = (why: string): void => {
      socket.destroy()
      reject(new Error(why))
    }
    socket.once('connect', () => socket.write(`${JSON.stringify({ token: admin, pid: process.pid, slot })}\n`))
    socket.on('error', (e) => fail(e.message))
    socket.once('close', () => fail('the server closed the connection (it is stopping)'))
    socket.on('data', function onData(chunk: string) {
      line += chunk
      const nl = line.indexOf('\n')
      if (nl < 0) return
      socket.off('data', onData)
      socket.removeAllListeners('close')
      socket.removeAllListeners('error')
      socket.on('error', () => socket.destroy())
      let reply: { slot?: unknown }
      try {
        reply = JSON.parse(line.slice(0, nl)) as { slot?: unknown }
      } catch {
        return fail('the server answered the holder greeting with something else')
      }
      socket.unref()
      resolve({ socket, slot: typeof reply.slot === 'number' ? reply.slot : undefined })
    })
  })
}

export interface Holder {
  pid: number
  slot?: number
  since: string
}

/** Who holds the running private server (sessions have a slot), or undefined when none runs. */
export async function listHolders(s: Pick<LocalState, 'data'>): Promise<Holder[] | undefined> {
  const lock = readLock(s.data)
  if (!(lock?.kind === 'server' && alive(lock.pid) && lock.holders)) return undefined
  const m = /^(.*):(\d+)$/.exec(lock.holders)
  const admin = readFileSync(join(s.data, 'admin.token'), 'utf8').trim()
  return new Promise((resolve) => {
    const socket = connect({ host: (m?.[1] ?? '127.0.0.1').replace(/^\[|\]$/g, ''), port: Number(m?.[2]) })
    let text = ''
    socket.setEncoding('utf8')
    socket.once('connect', () => socket.write(`${JSON.stringify({ token: admin, list: true })}\n`))
    socket.on('data', (c: string) => {
      text += c
    })
    socket.on('error', () => resolve(undefined))
    socket.on('close', () => {
      try {
        resolve((JSON.parse(text) as { holders: Holder[] }).holders)
      } catch {
        resolve(undefined)
      }
    })
  })
}
