// The agwp plugin: AGWP v1 over HTTP. Most tools are manifest-only (the generic executor runs
// their `operation`); handlers.ts holds the few that need logic, lease.ts the --require-lease check.
import type { Handler, Plugin } from '../../core/src/plugin-api.ts'
import { createClient } from './client.ts'
import { execute, scoped } from './executor.ts'
import { handlers } from './handlers.ts'
import { confirmLease } from './lease.ts'

// Every entry point runs in the call's repository scope (AGWP-Repo on each request it makes).
const inScope =
  (h: Handler): Handler =>
  (args, ctx) =>
    h(args, scoped(ctx, args))

const plugin: Plugin = {
  name: 'agwp',
  init: (env) => createClient(env),
  handlers: Object.fromEntries(Object.entries(handlers).map(([name, h]) => [name, inScope(h)])),
  operation: (args, ctx) => execute(scoped(ctx, args), args),
  confirmLease: (q, ctx) => confirmLease(q, scoped(ctx, q.args)),
}

export default plugin
