import { authorize } from '../auth.ts'
import { checkRepoName } from '../paths.ts'
import type { Caller } from '../auth.ts'
import type { Ctx } from '../context.ts'
import type { Repo } from '../repos.ts'
import type { Req } from '../router.ts'

// What the route modules read from a request: a query parameter, a repository the caller may read.

/** A query parameter's first value, undefined when absent. */
export const q = (r: Req, k: string): string | undefined => r.query.get(k) ?? undefined

/** The named repository, once the caller is known to hold read on it. */
export async function readableRepo(ctx: Ctx, caller: Caller, name: string): Promise<Repo> {
  checkRepoName(name)
  await authorize(ctx.state, caller, 'read', name, 'reader')
  return ctx.repos.get(name)
}
