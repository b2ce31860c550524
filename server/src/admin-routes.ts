import type { Router, Req } from './router.ts'
import { authorize, inScope, tokenCoversRepo, type Caller } from './auth.ts'
import { forbidden } from './errors.ts'
import { checkRepoName } from './paths.ts'
import { adminMint, adminRevoke, adminSetPolicy, adminSetRole, adminTokens } from './admin.ts'
import { createTask, viewTask } from './coordination.ts'
import { keyAdd, keyList, keyRevoke, viewKey } from './keys.ts'
import { canonicalStatement, statementFor } from './provenance.ts'
import type { Policy, Role, Scope } from './types.ts'
import { maintenanceStatus } from './maintenance.ts'

// /admin: operator endpoints. The admin scope is required for every one of them, so an
// agent token (and therefore ag-mcp) can never reach them.

function admin(r: Req, repo: string | null): Promise<void> {
  return authorize(r.ctx.state, r.caller, 'admin', repo, null)
}

/**
 * May this caller administer a token that reaches `repos`? Only if it administers every
 * one of them: its own token covers it and AGWP-Repo (if sent) names it. A token for all
 * repositories ('*') is managed only by an admin for all repositories, without AGWP-Repo.
 */
function administers(caller: Caller, repos: string[]): boolean {
  return repos.every((repo) =>
    repo === '*'
      ? caller.token.repos.includes('*') && caller.repoScope === undefined
      : tokenCoversRepo(caller.token, repo) && (caller.repoScope === undefined || caller.repoScope === repo),
  )
}

export function registerAdminRoutes(router: Router): void {
  registerTokenRoutes(router)
  registerKeyRoutes(router)
  registerRepoAdminRoutes(router)
}

/** Tokens: list, mint and revoke, only within the repositories the caller administers. */
function registerTokenRoutes(router: Router): void {
  router.add('GET', '/admin/tokens', async (r) => {
    await admin(r, null)
    return { body: { tokens: await adminTokens(r.ctx.state, (t) => administers(r.caller, t.repos)) } }
  })
  router.add(
    'POST',
    '/admin/tokens',
    async (r) => {
      await admin(r, null)
      const b = r.body as { principal: string; scopes: Scope[]; repos: string[]; ttl_s?: number; label?: string }
      // An admin may only hand out access it holds itself.
      if (!administers(r.caller, b.repos))
        throw forbidden('cannot mint a token for repositories outside your own token (or AGWP-Repo)', {})
      return { status: 201, body: await adminMint(r.ctx.state, b) }
    },
    'AdminTokenMintRequest',
  )
  router.add('DELETE', '/admin/tokens/:id', async (r) => {
    await admin(r, null)
    // A token outside the caller's repositories is answered as if it did not exist.
    return { body: await adminRevoke(r.ctx.state, r.params['id'] ?? '', (t) => administers(r.caller, t.repos)) }
  })
}

/** Signing keys and what a key holder signs: provenance. */
function registerKeyRoutes(router: Router): void {
  // What the key holder signs for a proposal's current head (provenance sign, online).
  router.add('GET', '/admin/proposals/:id/statement', async (r) => {
    const id = r.params['id'] ?? ''
    const p = inScope(r.caller, await r.ctx.state.get('proposals', id), 'proposal', id)
    await admin(r, p.repo)
    const statement = canonicalStatement(await statementFor(r.ctx.repos.get(p.repo), p))
    return { body: { proposal: p.id, head: p.head, statement } }
  })
  // A key vouches for its principal in every repository: only an admin of all of them manages keys.
  const keyAdmin = async (r: Req): Promise<void> => {
    await admin(r, null)
    if (!administers(r.caller, ['*']))
      throw forbidden('keys are managed only with an admin token for all repositories (and no AGWP-Repo)', {})
  }
  router.add('GET', '/admin/keys', async (r) => {
    await keyAdmin(r)
    return { body: { keys: (await keyList(r.ctx.state, r.query.get('principal') ?? undefined)).map(viewKey) } }
  })
  router.add(
    'POST',
    '/admin/keys',
    async (r) => {
      await keyAdmin(r)
      return {
        status: 201,
        body: viewKey(await keyAdd(r.ctx.state, r.body as { principal: string; public_key: string; label?: string })),
      }
    },
    'AdminKeyAddRequest',
  )
  router.add('DELETE', '/admin/keys/:id', async (r) => {
    await keyAdmin(r)
    return { body: viewKey(await keyRevoke(r.ctx.state, r.params['id'] ?? '')) }
  })
}

/** One repository's roles, policy, maintenance and tasks. */
function registerRepoAdminRoutes(router: Router): void {
  router.add(
    'PUT',
    '/admin/repos/:repo/roles',
    async (r) => {
      const repo = checkRepoName(r.params['repo'])
      await admin(r, repo)
      r.ctx.repos.get(repo)
      const b = r.body as { principal: string; role: Role | 'none' }
      await adminSetRole(r.ctx.state, repo, b.principal, b.role)
      return { body: { ok: true } }
    },
    'AdminRoleSetRequest',
  )
  router.add(
    'PUT',
    '/admin/repos/:repo/policy',
    async (r) => {
      const repo = checkRepoName(r.params['repo'])
      await admin(r, repo)
      r.ctx.repos.get(repo)
      return { body: await adminSetPolicy(r.ctx.state, repo, r.body as Partial<Policy>) }
    },
    'AdminPolicySetRequest',
  )
  // Repository maintenance (maintenance.ts): the counts now and the last runs.
  router.add('GET', '/admin/repos/:repo/maintenance', async (r) => {
    const repo = checkRepoName(r.params['repo'])
    await admin(r, repo)
    return { body: await maintenanceStatus(r.ctx.repos.get(repo)) }
  })
  router.add(
    'POST',
    '/admin/repos/:repo/tasks',
    async (r) => {
      const repo = checkRepoName(r.params['repo'])
      await admin(r, repo)
      return {
        status: 201,
        body: await viewTask(
          r.ctx,
          await createTask(r.ctx, r.caller.principal, repo, r.body as { title: string }),
          await r.ctx.state.now(),
        ),
      }
    },
    'AdminTaskCreateRequest',
  )
}
