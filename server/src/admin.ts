import fs from 'node:fs'
import path from 'node:path'
import { execFileSync } from 'node:child_process'
import { mintToken, publicToken } from './auth.ts'
import { conflict, invalid, notFound } from './errors.ts'
import type { State, StateReader } from './state.ts'
import { DEFAULT_POLICY, type TokenRec, type Policy, type Role, type Scope, type RepoMeta } from './types.ts'
import { checkRepoName } from './paths.ts'
import { initShared } from './shared.ts'

// Operator operations, shared by the /admin endpoints and the CLI's offline mode (which
// opens the data directory itself when no server holds it).

export async function adminMint(
  state: State,
  b: { principal: string; scopes: Scope[]; repos: string[]; ttl_s?: number; label?: string },
): Promise<{ token: string; info: Record<string, unknown> }> {
  return state.tx([], async (t) => {
    const { token, rec, op } = mintToken(t.now, b.principal, b.scopes, b.repos, b.ttl_s ?? 8 * 3600, b.label)
    t.write(op)
    return { token, info: publicToken(rec) }
  })
}

export function adminRevoke(
  state: State,
  id: string,
  visible: (t: TokenRec) => boolean = () => true,
): Promise<Record<string, unknown>> {
  return state.tx([`token:${id}`], async (t) => {
    const tok = await t.get('tokens', id)
    if (!tok || !visible(tok)) throw notFound(`token '${id.slice(0, 64)}' not found`, { token: id.slice(0, 64) })
    const next = { ...tok, revoked: true }
    t.write({ c: 'tokens', k: id, v: next })
    return publicToken(next)
  })
}

export async function adminTokens(
  state: StateReader,
  visible: (t: TokenRec) => boolean = () => true,
): Promise<Record<string, unknown>[]> {
  return (await state.all('tokens'))
    .filter(visible)
    .sort((a, b) => (a.created_at < b.created_at ? -1 : 1))
    .map(publicToken)
}

async function meta(state: StateReader, repo: string): Promise<RepoMeta> {
  return (await state.get('repos', repo)) ?? { policy: { ...DEFAULT_POLICY }, roles: {} }
}

export function adminSetRole(state: State, repo: string, principal: string, role: Role | 'none'): Promise<RepoMeta> {
  checkRepoName(repo)
  return state.tx([`repo:${repo}`], async (t) => {
    const m = await meta(t, repo)
    const roles = { ...m.roles }
    if (role === 'none') delete roles[principal]
    else roles[principal] = role
    const next = { ...m, roles }
    t.write({ c: 'repos', k: repo, v: next })
    return next
  })
}

export function adminSetPolicy(state: State, repo: string, patch: Partial<Policy>): Promise<Policy> {
  checkRepoName(repo)
  return state.tx([`repo:${repo}`], async (t) => {
    const m = await meta(t, repo)
    const policy: Policy = { ...m.policy, ...patch }
    t.write({ c: 'repos', k: repo, v: { ...m, policy } })
    return policy
  })
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
