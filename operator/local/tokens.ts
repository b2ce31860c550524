// Tokens for local mode's processes, minted through the running private server's admin API with
// the repository's admin token (.ag/server/admin.token), written to a 0600 file under .ag/tokens
// named for this process, and revoked when it ends. A process killed outright cannot revoke its
// own: the next one revokes every token whose process is gone, and removes its file.
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { client } from './api.ts'
import { LocalError } from './repo.ts'
import type { PrivateServer } from './server.ts'
import { alive } from '../../lib/alive.ts'
import type { LocalState } from './setup.ts'

export interface Who {
  principal: string
  scopes: string
}

export interface Token {
  file: string
  id: string
}

const LABEL = 'ag-mcp local pid '

export async function adminCall(
  s: Pick<LocalState, 'data'>,
  server: Pick<PrivateServer, 'url'>,
  method: string,
  path: string,
  body?: unknown,
): Promise<unknown> {
  const admin = readFileSync(join(s.data, 'admin.token'), 'utf8').trim()
  const res = await fetch(`${server.url}/agwp/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    redirect: 'error',
  })
  const json = (await res.json().catch(() => ({}))) as { error?: { code?: string; message?: string } }
  if (!res.ok)
    throw new LocalError(
      `the private ag-server refused ${method} ${path}: ${json.error?.code ?? res.status} ${json.error?.message ?? ''}`.trim(),
    )
  return json
}

/** A token for `who` on this repository, in a file only this user can read. */
export async function mintToken(
  s: LocalState,
  server: Pick<PrivateServer, 'url'>,
  who: Who,
  ttlSeconds: number,
): Promise<Token> {
  const tokens = join(s.dir, 'tokens')
  mkdirSync(tokens, { recursive: true, mode: 0o700 })
  const file = join(tokens, `${who.principal.replace(/[^a-z0-9]/g, '-')}-${process.pid}.token`)
  rmSync(file, { force: true })
  const minted = (await adminCall(s, server, 'POST', '/admin/tokens', {
    principal: who.principal,
    scopes: who.scopes.split(','),
    repos: [s.repo],
    ttl_s: ttlSeconds,
    label: `${LABEL}${process.pid}`,
  })) as { token?: unknown; info?: { id?: unknown } }
  if (typeof minted.token !== 'string' || typeof minted.info?.id !== 'string')
    throw new LocalError('the private ag-server answered a token request without a token')
  // The file is created with its final mode: the secret is never readable by anyone else.
  writeFileSync(file, `${minted.token}\n`, { mode: 0o600, flag: 'wx' })
  return { file, id: minted.info.id }
}

/** Revokes the token and removes its file; a failure is left to the token's expiry. */
export async function revokeToken(s: LocalState, server: Pick<PrivateServer, 'url'>, t: Token): Promise<void> {
  if (t.file) rmSync(t.file, { force: true })
  await adminCall(s, server, 'DELETE', `/admin/tokens/${encodeURIComponent(t.id)}`).catch(() => undefined)
}

/**
 * What processes that are gone (killed before they could clean up) left: their tokens are
 * revoked, their token files removed. Returns the ids of the tokens still live, or undefined
 * when no process left anything (no token file of a dead process).
 */
export async function revokeOrphans(
  s: LocalState,
  server: Pick<PrivateServer, 'url'>,
): Promise<Set<string> | undefined> {
  const tokens = join(s.dir, 'tokens')
  let orphans = 0
  try {
    for (const f of readdirSync(tokens)) {
      const pid = Number(/-(\d+)\.token$/.exec(f)?.[1])
      if (pid && !alive(pid)) {
        rmSync(join(tokens, f), { force: true })
        orphans++
      }
    }
  } catch {
    // no tokens folder yet
  }
  // Every process that ended normally revoked its own: only a file left behind means otherwise.
  if (orphans === 0) return undefined
  const listed = (await adminCall(s, server, 'GET', '/admin/tokens')) as {
    tokens: { id: string; label?: string; revoked: boolean; expires_at: string }[]
  }
  const live = new Set<string>()
  for (const t of listed.tokens) {
    if (t.revoked || Date.parse(t.expires_at) <= Date.now()) continue
    const pid = t.label?.startsWith(LABEL) ? Number(t.label.slice(LABEL.length)) : undefined
    if (pid !== undefined && pid > 0 && !alive(pid)) await revokeToken(s, server, { file: '', id: t.id })
    else live.add(t.id)
  }
  return live
}

/** The agent's scopes: it can only propose (the safety thesis, locally). */
export const AGENT_SCOPES = 'read,workspace,propose,coordinate'
/**
 * The person at the keyboard: reviews and integrates through `ag-mcp proposals`. `propose` is
 * there for `proposals reject`: AGWP's withdraw needs it (a maintainer may withdraw any proposal).
 */
export const OWNER: Who = { principal: 'human:owner', scopes: 'read,propose,review,integrate' }

/** A session's principal: agent:local for the first, agent:local-2, -3, … beside it. */
export const agentPrincipal = (slot: number | undefined): string =>
  slot === undefined || slot <= 1 ? 'agent:local' : `agent:local-${slot}`

/**
 * The roles and policy of local mode on this repository that `ag-mcp proposals` needs: you
 * maintain, and integrating is your approval (no separate review needed). Idempotent.
 */
export async function grantOwner(s: LocalState, server: Pick<PrivateServer, 'url'>): Promise<void> {
  const repo = `/admin/repos/${encodeURIComponent(s.repo)}`
  await adminCall(s, server, 'PUT', `${repo}/roles`, { principal: OWNER.principal, role: 'maintainer' })
  await adminCall(s, server, 'PUT', `${repo}/policy`, { required_approvals: 0 })
}

/**
 * A session's principal contributes; asked of the server with the session's own token first,
 * so a start where the role is there already writes nothing to the server's journal.
 */
export async function grantAgent(
  s: LocalState,
  server: Pick<PrivateServer, 'url'>,
  principal: string,
  token: Token,
): Promise<void> {
  const me = (await client(server.url, token.file)('GET', '/whoami')) as { roles?: Record<string, string> }
  if (me.roles?.[s.repo] === 'contributor') return
  await adminCall(s, server, 'PUT', `/admin/repos/${encodeURIComponent(s.repo)}/roles`, {
    principal,
    role: 'contributor',
  })
}
