import { policyOf, roleOf, tokenCoversRepo } from '../auth.ts'
import type { Router } from '../router.ts'
import { readableRepo } from './params.ts'

// Who the caller is and which repositories it sees.

export function registerRepoRoutes(router: Router): void {
  router.add('GET', '/whoami', async ({ ctx, caller }) => {
    const repos = caller.token.repos.includes('*') ? ctx.repos.names() : caller.token.repos
    const roles: Record<string, string> = {}
    for (const n of repos) {
      const role = await roleOf(ctx.state, n, caller.principal)
      if (role) roles[n] = role
    }
    const body: Record<string, unknown> = {
      principal: caller.principal,
      kind: caller.kind,
      actor: caller.actor,
      scopes: caller.token.scopes,
      repos: caller.token.repos,
      expires_at: caller.token.expires_at,
      roles,
    }
    if (caller.run) body['run_id'] = caller.run.run_id
    return { body }
  })

  router.add('GET', '/repos', async ({ ctx, caller }) => {
    const names: string[] = []
    for (const n of ctx.repos.names())
      if (
        (caller.repoScope === undefined || n === caller.repoScope) &&
        tokenCoversRepo(caller.token, n) &&
        (await roleOf(ctx.state, n, caller.principal)) !== null
      )
        names.push(n)
    const repos = await Promise.all(
      names.map(async (n) => ({
        name: n,
        default_branch: await ctx.repos.get(n).defaultBranch(),
        role: await roleOf(ctx.state, n, caller.principal),
      })),
    )
    return { body: { repos } }
  })

  router.add('GET', '/repos/:repo', async ({ ctx, caller, params }) => {
    const repo = await readableRepo(ctx, caller, params['repo'] ?? '')
    const def = await repo.defaultBranch()
    return {
      body: {
        name: repo.name,
        default_branch: def,
        head: await repo.branchHead(def),
        branches: await repo.branches(),
        role: await roleOf(ctx.state, repo.name, caller.principal),
        policy: await policyOf(ctx.state, repo.name),
      },
    }
  })
}
