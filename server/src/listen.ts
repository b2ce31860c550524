// What `ag-server serve` says about where it listens: an occupied address as the operator's
// mistake it is (not a bare EADDRINUSE), and whether an address is loopback (plain HTTP beyond
// it carries tokens unencrypted, so serve warns).
import { isIP } from 'node:net'

/** True for 127.0.0.0/8, ::1, the IPv4-mapped loopback and `localhost`. */
export function isLoopback(host: string): boolean {
  const h = host.toLowerCase()
  if (h === 'localhost' || h === '::1') return true
  const v4 = h.startsWith('::ffff:') ? h.slice(7) : h
  return isIP(v4) === 4 && v4.startsWith('127.')
}

/** Starts listening; an address in use releases what was taken for it and names the fix. */
export async function listenOrExplain<T>(
  host: string,
  port: number,
  release: () => void,
  start: () => Promise<T>,
): Promise<T> {
  try {
    return await start()
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code
    if (code !== 'EADDRINUSE' && code !== 'EADDRNOTAVAIL') throw e
    release()
    const where = `${host.includes(':') ? `[${host}]` : host}:${port}`
    throw new Error(
      code === 'EADDRINUSE'
        ? `${where} is already in use (another ag-server, or another program): stop it, or pick another address with --listen HOST:PORT (port 0 picks a free one)`
        : `${where} is not an address of this machine: use --listen 127.0.0.1:PORT, or one of this machine's addresses`,
    )
  }
}
