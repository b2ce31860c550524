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

function admin(r: Req, repo: string | null): void {
  authorize(r.ctx.store, r.caller, 'admin', repo, null)
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
  router.add('GET', '/admin/tokens', (r) => {
    admin(r, null)
    return { body: { tokens: adminTokens(r.ctx.store, (t) => administers(r.caller, t.repos)) } }
  })
  router.add(
    'POST',
    '/admin/tokens',
    (r) => {
      admin(r, null)
      const b = r.body as { principal: string; scopes: Scope[]; repos: string[]; ttl_s?: number; label?: string }
      // An admin may only hand out access it holds itself.
      if (!administers(r.caller, b.repos))
        throw forbidden('cannot mint a token for repositories outside your own token (or AGWP-Repo)', {})
      return { status: 201, body: adminMint(r.ctx.store, b) }
    },
    'AdminTokenMintRequest',
  )
  router.add('DELETE', '/admin/tokens/:id', (r) => {
    admin(r, null)
    // A token outside the caller's repositories is answered as if it did not exist.
    return { body: adminRevoke(r.ctx.store, r.params['id'] ?? '', (t) => administers(r.caller, t.repos)) }
  })
  // What the key holder signs for a proposal's current head (provenance sign, online).
  router.add('GET', '/admin/proposals/:id/statement', async (r) => {
    const id = r.params['id'] ?? ''
    const p = inScope(r.caller, r.ctx.store.get('proposals', id), 'proposal', id)
    admin(r, p.repo)
    const statement = canonicalStatement(await statementFor(r.ctx.repos.get(p.repo), p))
    return { body: { proposal: p.id, head: p.head, statement } }
  })
  // A key vouches for its principal in every repository: only an admin of all of them manages keys.
  const keyAdmin = (r: Req): void => {
    admin(r, null)
    if (!administers(r.caller, ['*']))
      throw forbidden('keys are managed only with an admin token for all repositories (and no AGWP-Repo)', {})
  }
  router.add('GET', '/admin/keys', (r) => {
    keyAdmin(r)
    return { body: { keys: keyList(r.ctx.store, r.query.get('principal') ?? undefined).map(viewKey) } }
  })
  router.add(
    'POST',
    '/admin/keys',
    (r) => {
      keyAdmin(r)
      return {
        status: 201,
        body: viewKey(keyAdd(r.ctx.store, r.body as { principal: string; public_key: string; label?: string })),
      }
    },
    'AdminKeyAddRequest',
  )
  router.add('DELETE', '/admin/keys/:id', (r) => {
    keyAdmin(r)
    return { body: viewKey(keyRevoke(r.ctx.store, r.params['id'] ?? '')) }
  })
  router.add(
    'PUT',
    '/admin/repos/:repo/roles',
    (r) => {
      const repo = checkRepoName(r.params['repo'])
      admin(r, repo)
      r.ctx.repos.get(repo)
      const b = r.body as { principal: string; role: Role | 'none' }
      adminSetRole(r.ctx.store, repo, b.principal, b.role)
      return { body: { ok: true } }
    },
    'AdminRoleSetRequest',
  )
  router.add(
    'PUT',
    '/admin/repos/:repo/policy',
    (r) => {
      const repo = checkRepoName(r.params['repo'])
      admin(r, repo)
      r.ctx.repos.get(repo)
      return { body: adminSetPolicy(r.ctx.store, repo, r.body as Partial<Policy>) }
    },
    'AdminPolicySetRequest',
  )
  // Repository maintenance (maintenance.ts): the counts now and the last runs.
  router.add('GET', '/admin/repos/:repo/maintenance', async (r) => {
    const repo = checkRepoName(r.params['repo'])
    admin(r, repo)
    return { body: await maintenanceStatus(r.ctx.repos.get(repo)) }
  })
  router.add(
    'POST',
    '/admin/repos/:repo/tasks',
    (r) => {
      const repo = checkRepoName(r.params['repo'])
      admin(r, repo)
      return {
        status: 201,
        body: viewTask(r.ctx, createTask(r.ctx, r.caller.principal, repo, r.body as { title: string })),
      }
    },
    'AdminTaskCreateRequest',
  )
}
