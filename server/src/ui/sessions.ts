import crypto from 'node:crypto'

// The review page's sessions and one-time sign-in links, in memory: a restart signs everyone
// out (and kills unused links). A session is bound to the token it was made from, by the
// token's id: the token is checked again on every request, so revoking it (or its expiry) ends
// the session at once. Only hashes of the cookie and link secrets are kept, like the tokens'.

export interface Session {
  /** The token record the session acts as (never the token itself). */
  tokenId: string
  principal: string
  /** Sent by the page in a header with every action; compared in constant time. */
  csrf: string
  expiresAt: number
}

interface Link {
  tokenId: string
  expiresAt: number
}

/** How long a one-time sign-in link stays usable: it is meant to be opened at once. */
export const LINK_TTL_MS = 2 * 60 * 1000
/** Bounds on what the maps may hold: a sign-in needs a valid token, but memory is not spent on faith. */
const MAX_SESSIONS = 10_000
const MAX_LINKS = 1_000

const hash = (s: string): string => crypto.createHash('sha256').update(s, 'utf8').digest('hex')
const secret = (): string => crypto.randomBytes(32).toString('base64url')

export class SessionError extends Error {}

export class Sessions {
  private readonly sessions = new Map<string, Session>()
  private readonly links = new Map<string, Link>()

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** A new session for the token, ending no later than it does; returns the cookie's secret. */
  create(tokenId: string, principal: string, tokenExpiresAt: number): { secret: string; session: Session } {
    this.prune(this.sessions)
    if (this.sessions.size >= MAX_SESSIONS) throw new SessionError('too many open sessions; try again later')
    const s = secret()
    const session: Session = {
      tokenId,
      principal,
      // Hex: a session's own value never looks like a credential to the scrubber.
      csrf: crypto.randomBytes(32).toString('hex'),
      expiresAt: Math.min(this.now() + this.ttlMs, tokenExpiresAt),
    }
    this.sessions.set(hash(s), session)
    return { secret: s, session }
  }

  /** The live session a cookie's secret names, if any. */
  get(cookieSecret: string | undefined): Session | undefined {
    if (!cookieSecret) return undefined
    const key = hash(cookieSecret)
    const s = this.sessions.get(key)
    if (s && s.expiresAt <= this.now()) {
      this.sessions.delete(key)
      return undefined
    }
    return s
  }

  end(cookieSecret: string | undefined): void {
    if (cookieSecret) this.sessions.delete(hash(cookieSecret))
  }

  /** A one-time link for the token: its secret is good for one sign-in within LINK_TTL_MS. */
  createLink(tokenId: string, tokenExpiresAt: number): { secret: string; expiresAt: number } {
    this.prune(this.links)
    if (this.links.size >= MAX_LINKS) throw new SessionError('too many unused sign-in links; try again later')
    const s = secret()
    const expiresAt = Math.min(this.now() + LINK_TTL_MS, tokenExpiresAt)
    this.links.set(hash(s), { tokenId, expiresAt })
    return { secret: s, expiresAt }
  }

  /** The token a link was made for; the link is gone after this, used or not. */
  redeemLink(linkSecret: string): string | undefined {
    const key = hash(linkSecret)
    const l = this.links.get(key)
    this.links.delete(key)
    return l && l.expiresAt > this.now() ? l.tokenId : undefined
  }

  private prune(m: Map<string, { expiresAt: number }>): void {
    const now = this.now()
    for (const [k, v] of m) if (v.expiresAt <= now) m.delete(k)
  }
}
