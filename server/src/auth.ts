import crypto from 'node:crypto'
import { AgwpError, forbidden, invalid, notFound } from './errors.ts'
import { checkRepoName } from './paths.ts'
import type { Op, StateReader } from './state.ts'
import { ROLES, type Role, type Scope, type TokenRec, type RunRec, DEFAULT_POLICY, type Policy } from './types.ts'

// Tokens: 256 random bits, shown once, stored as SHA-256 (a hash of a full-entropy secret
// needs no salt or slow KDF). The `agwp_` prefix lets clients scrub tokens from output.
export const TOKEN_PREFIX = 'agwp_'

export const hashToken = (t: string): string => crypto.createHash('sha256').update(t, 'utf8').digest('hex')

/** A new token, expiring ttlS after `now` (the transaction's clock), and the op that stores it. */
export function mintToken(
  now: Date,
  principal: string,
  scopes: Scope[],
  repos: string[],
  ttlS: number,
  label?: string,
): { token: string; rec: TokenRec; op: Op } {
  const token = TOKEN_PREFIX + crypto.randomBytes(32).toString('base64url')
  const id = 'tok_' + crypto.randomBytes(6).toString('hex')
  const rec: TokenRec = {
    id,
    hash: hashToken(token),
    principal,
    scopes: [...new Set(scopes)],
    repos: [...new Set(repos)],
    expires_at: new Date(now.getTime() + ttlS * 1000).toISOString(),
    created_at: now.toISOString(),
    revoked: false,
  }
  if (label !== undefined) rec.label = label
  return { token, rec, op: { c: 'tokens', k: id, v: rec } }
}

export function publicToken(t: TokenRec): Omit<TokenRec, 'hash'> {
  const { hash: _h, ...rest } = t
  return rest
}

/** Who is calling: the token, and the run the call acts within (AGWP-Run). */
export interface Caller {
  token: TokenRec
  principal: string
  kind: 'agent' | 'human'
  run?: RunRec
  /** principal, or principal#run-N inside a run */
  actor: string
  /** AGWP-Repo: the one repository this request may act on. */
  repoScope?: string
}

export async function authenticate(
  state: StateReader,
  header: string | undefined,
  runHeader: string | undefined,
  repoHeader?: string,
): Promise<Caller> {
  const m = header ? /^Bearer ([A-Za-z0-9_\-.~+/=]{10,200})$/.exec(header) : null
  if (!m || !m[1]) throw new AgwpError('unauthenticated', 'missing or malformed bearer token')
  const h = hashToken(m[1])
  // Lookup by hash (an index kept by the store); comparing hashes leaks nothing useful. The
  // run is read with it (one round trip) but looked at only once the token is good.
  const runId = runHeader !== undefined && runHeader !== '' ? runHeader : undefined
  const { token: rec, run, now: clock } = await state.credentials(h, runId)
  if (!rec) throw new AgwpError('unauthenticated', 'unknown token')
  if (rec.revoked) throw new AgwpError('unauthenticated', 'token revoked')
  // Expiry by the state's clock (the database's on PostgreSQL), so instances agree.
  const now = clock.getTime()
  if (Date.parse(rec.expires_at) <= now) throw new AgwpError('unauthenticated', 'token expired')
  const kind = rec.principal.startsWith('agent:') ? 'agent' : 'human'
  const caller: Caller = { token: rec, principal: rec.principal, kind, actor: rec.principal }
  if (repoHeader !== undefined && repoHeader !== '') {
    try {
      caller.repoScope = checkRepoName(repoHeader)
    } catch {
      throw invalid('AGWP-Repo is not a valid repository name', { header: 'AGWP-Repo' })
    }
  }
  if (runId !== undefined) {
    // A run of another repository than AGWP-Repo is answered as if it did not exist.
    if (!run || (caller.repoScope !== undefined && run.repo !== caller.repoScope)) {
      const where = caller.repoScope !== undefined ? ` in repository '${caller.repoScope}'` : ''
      throw forbidden(`run '${runId.slice(0, 64)}' does not exist${where}`, { run_id: runId.slice(0, 64) })
    }
    if (run.principal !== rec.principal) throw forbidden('run belongs to another principal', { run_id: run.run_id })
    if (run.state !== 'active' || Date.parse(run.lease_expires_at) <= now)
      throw forbidden('run is not active (released or expired)', { run_id: run.run_id })
    caller.run = run
    caller.actor = `${rec.principal}#${run.run_id}`
  }
  return caller
}

/**
 * An object looked up by id, as the caller may see it: missing, or (with AGWP-Repo) in
 * another repository, is the same 404, so the header reveals nothing about other repositories.
 */
export function inScope<T extends { repo: string }>(
  caller: Caller,
  rec: T | undefined,
  kind: string,
  id: string,
  key: string = kind,
): T {
  if (rec && (caller.repoScope === undefined || rec.repo === caller.repoScope)) return rec
  const shown = id.slice(0, 64)
  if (caller.repoScope === undefined) throw notFound(`${kind} '${shown}' not found`, { [key]: shown })
  throw notFound(`no ${kind} '${shown}' in repository '${caller.repoScope}'`, { [key]: shown, repo: caller.repoScope })
}

export async function roleOf(state: StateReader, repo: string, principal: string): Promise<Role | null> {
  return (await state.get('repos', repo))?.roles[principal] ?? null
}

export async function policyOf(state: StateReader, repo: string): Promise<Policy> {
  return (await state.get('repos', repo))?.policy ?? DEFAULT_POLICY
}

export const roleAtLeast = (r: Role | null, min: Role): boolean => r !== null && ROLES.indexOf(r) >= ROLES.indexOf(min)

export function tokenCoversRepo(t: TokenRec, repo: string): boolean {
  return t.repos.includes('*') || t.repos.includes(repo)
}

/** The authority rule: token scope AND token repository AND role on the repository. */
export async function authorize(
  state: StateReader,
  caller: Caller,
  scope: Scope,
  repo: string | null,
  minRole: Role | null,
): Promise<void> {
  if (!caller.token.scopes.includes(scope))
    throw forbidden(`token lacks the '${scope}' scope`, { needed_scope: scope, scopes: caller.token.scopes })
  if (repo === null) return
  if (caller.repoScope !== undefined && repo !== caller.repoScope) {
    throw forbidden(`this request is limited to repository '${caller.repoScope}' (AGWP-Repo), not '${repo}'`, {
      repo,
      agwp_repo: caller.repoScope,
    })
  }
  if (!tokenCoversRepo(caller.token, repo)) throw forbidden(`token is not valid for repository '${repo}'`, { repo })
  if (minRole !== null) {
    const role = await roleOf(state, repo, caller.principal)
    if (!roleAtLeast(role, minRole))
      throw forbidden(`role '${role ?? 'none'}' on '${repo}' is below '${minRole}'`, {
        repo,
        role,
        needed_role: minRole,
      })
  }
}

// Per-token token bucket. rate = 0 disables limiting (benchmarks).
export class RateLimiter {
  private buckets = new Map<string, { tokens: number; at: number }>()
  constructor(
    private readonly ratePerS: number,
    private readonly burst: number,
  ) {}

  take(key: string): void {
    if (this.ratePerS <= 0) return
    const now = Date.now()
    const b = this.buckets.get(key) ?? { tokens: this.burst, at: now }
    b.tokens = Math.min(this.burst, b.tokens + ((now - b.at) / 1000) * this.ratePerS)
    b.at = now
    if (b.tokens < 1) {
      const retry = Math.max(1, Math.ceil((1 - b.tokens) / this.ratePerS))
      this.buckets.set(key, b)
      throw new AgwpError(
        'rate_limited',
        'too many requests for this token',
        { retry_after_s: retry },
        { 'Retry-After': String(retry) },
      )
    }
    b.tokens -= 1
    this.buckets.set(key, b)
  }
}
