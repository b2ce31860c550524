import os from 'node:os'
import { AgwpError } from './errors.ts'
import type { Tx } from './state.ts'

// Which instance serves a repository. With the journal there is one instance and it owns
// everything: no Ownership at all (ctx.owners undefined), so the hot path pays nothing.
// With several instances on one PostgreSQL, pg/owners.ts records one owner per repository
// with an epoch; a request for a repository another live instance owns is forwarded there
// (forward.ts), and every ref update checks the epoch inside its transaction (the fence).

/** Who this instance is among those on one database (serve --instance, --advertise, --owner-lease). */
export interface InstanceOptions {
  instance: string
  /** the base URL other instances reach this one at (http://host:port, no /agwp/v1) */
  advertise: string
  /** how long a silent owner keeps its repositories (ms) */
  leaseMs: number
}

/** Where a request for a repository goes. */
export type Placement = { serve: true } | { serve: false; owner: string; url: string }

export const SERVE_HERE: Placement = { serve: true }

export interface Ownership {
  /** this instance's id (serve --instance) */
  readonly instance: string
  /** The owner's lease (ms): how long a silent owner keeps its repositories. */
  readonly leaseMs: number
  /** Whether this instance serves repo now (background work, maintenance, touches only those). */
  serves(repo: string): boolean
  /** Serve here (taking the repository over if it has no live owner), or forward to its owner. */
  place(repo: string): Promise<Placement>
  /**
   * Inside the transaction of a ref update, before the ref moves: throws 503 `not_owner`
   * unless this instance still owns repo at the epoch it took it with. A takeover waits for
   * that transaction to end, so none can fall between the check and the commit.
   */
  fence(t: Tx, repo: string): Promise<void>
  /** Whether `owner` still holds repo with a live heartbeat (a forward waiting on it gives up otherwise). */
  ownerAlive(repo: string, owner: string): Promise<boolean>
  close(): Promise<void>
}

/** An instance's identity when serve is not told: HOSTNAME:PORT, reached at the address it listens on. */
export function defaultInstance(bound: { host: string; port: number }, leaseMs = 15_000): InstanceOptions {
  // Listening on every address says nothing about which one the others use: the host's name.
  const host = bound.host === '0.0.0.0' || bound.host === '::' ? os.hostname() : bound.host
  return {
    instance: `${os.hostname()}:${bound.port}`,
    advertise: `http://${host.includes(':') ? `[${host}]` : host}:${bound.port}`,
    leaseMs,
  }
}

/** Seconds a client waits before retrying a request no owner could take: about one lease. */
export const retryAfterS = (leaseMs: number): string => String(Math.max(1, Math.ceil(leaseMs / 1000)))

export function notOwner(message: string, leaseMs: number, details: Record<string, unknown> = {}): AgwpError {
  return new AgwpError('not_owner', message, details, { 'Retry-After': retryAfterS(leaseMs) })
}
