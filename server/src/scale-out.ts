import type { Ctx } from './context.ts'
import { settleForOwner } from './intents.ts'
import type { InstanceOptions, Ownership } from './owners.ts'

// Several instances on one PostgreSQL: the ownership of repositories (pg/owners.ts) started
// for a server, each takeover settling what the repository's previous owner left. Loaded
// only with a PostgreSQL store: the journal path never evaluates pg.

export async function startOwnership(ctx: Ctx, inst: InstanceOptions, log: (m: string) => void): Promise<Ownership> {
  const [{ PgState }, { PgOwnership }] = await Promise.all([import('./pg/pg-state.ts'), import('./pg/owners.ts')])
  if (!(ctx.state instanceof PgState))
    throw new Error('several instances need a PostgreSQL store (--store postgres://…)')
  return PgOwnership.start(ctx.state, {
    instance: inst.instance,
    url: inst.advertise,
    leaseMs: inst.leaseMs,
    settle: (repo) => settleForOwner(ctx, repo, log),
    log,
  })
}
