import fs from 'node:fs'
import path from 'node:path'
import { execFileSync } from 'node:child_process'
import { mintToken, publicToken } from './auth.ts'
import { conflict, invalid, notFound } from './errors.ts'
import type { Store } from './store.ts'
import { DEFAULT_POLICY, type TokenRec, type Policy, type Role, type Scope, type RepoMeta } from './types.ts'
import { checkRepoName } from './paths.ts'
import { initShared } from './shared.ts'

// Operator operations, shared by the /admin endpoints and the CLI's offline mode (which
// opens the data directory itself when no server holds it).

export function adminMint(
  store: Store,
  b: { principal: string; scopes: Scope[]; repos: string[]; ttl_s?: number; label?: string },
): { token: string; info: Record<string, unknown> } {
  const { token, rec, op } = mintToken(store, b.principal, b.scopes, b.repos, b.ttl_s ?? 8 * 3600, b.label)
  store.commit([op])
  return { token, info: publicToken(rec) }
}

export function adminRevoke(
  store: Store,
  id: string,
  visible: (t: TokenRec) => boolean = () => true,
): Record<string, unknown> {
  const t = store.get('tokens', id)
  if (!t || !visible(t)) throw notFound(`token '${id.slice(0, 64)}' not found`, { token: id.slice(0, 64) })
  const next = { ...t, revoked: true }
  store.commit([{ c: 'tokens', k: id, v: next }])
  return publicToken(next)
}

export function adminTokens(store: Store, visible: (t: TokenRec) => boolean = () => true): Record<string, unknown>[] {
  return store
    .all('tokens')
    .filter(visible)
    .sort((a, b) => (a.created_at < b.created_at ? -1 : 1))
    .map(publicToken)
}

function meta(store: Store, repo: string): RepoMeta {
  return store.get('repos', repo) ?? { policy: { ...DEFAULT_POLICY }, roles: {} }
}

export function adminSetRole(store: Store, repo: string, principal: string, role: Role | 'none'): RepoMeta {
  checkRepoName(repo)
  const m = meta(store, repo)
  const roles = { ...m.roles }
  if (role === 'none') delete roles[principal]
  else roles[principal] = role
  const next = { ...m, roles }
  store.commit([{ c: 'repos', k: repo, v: next }])
  return next
}

export function adminSetPolicy(store: Store, repo: string, patch: Partial<Policy>): Policy {
  checkRepoName(repo)
  const m = meta(store, repo)
  const policy: Policy = { ...m.policy, ...patch }
  store.commit([{ c: 'repos', k: repo, v: { ...m, policy } }])
  return policy
}

/**
 * Add a repository: a bare clone of an existing one, a new empty one, or (shared) one that
 * borrows the objects of --from through git alternates and copies none (shared.ts).
 */
export function repoAdd(
  dataDir: string,
  name: string,
  from: string | undefined,
  branch = 'main',
  shared = false,
): string {
  checkRepoName(name)
  const dest = path.join(dataDir, 'repos', `${name}.git`)
  if (fs.existsSync(dest)) throw conflict(`repository '${name}' already exists`, { repo: name })
  const env = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_TERMINAL_PROMPT: '0' }
  const tmp = `${dest}.tmp-${process.pid}`
  fs.rmSync(tmp, { recursive: true, force: true })
  if (from !== undefined && shared) {
    if (!fs.existsSync(from)) throw invalid(`--from path does not exist: ${from}`)
    initShared(tmp, path.resolve(from), env)
  } else if (from !== undefined) {
    if (!fs.existsSync(from)) throw invalid(`--from path does not exist: ${from}`)
    execFileSync('git', ['clone', '--bare', '--quiet', '--no-hardlinks', '--', path.resolve(from), tmp], {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    // A bare clone keeps only branches and tags; drop the origin remote it points back to.
    execFileSync('git', ['--git-dir', tmp, 'remote', 'remove', 'origin'], { env, stdio: 'ignore' })
  } else {
    execFileSync('git', ['init', '--bare', '--quiet', `--initial-branch=${branch}`, tmp], { env, stdio: 'ignore' })
  }
  // Rename into place last, so a server never sees a half-cloned repository.
  fs.renameSync(tmp, dest)
  return dest
}
