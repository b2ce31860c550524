// The agwp plugin: AGWP v1 over HTTP. Most tools are manifest-only (the generic executor runs
// their `operation`); handlers.ts holds the few that need logic, lease.ts the --require-lease check.
import type { Plugin } from '../../core/src/plugin-api.ts'
import { createClient } from './client.ts'
import { execute } from './executor.ts'
import { handlers } from './handlers.ts'
import { confirmLease } from './lease.ts'

const plugin: Plugin = {
  name: 'agwp',
  init: (env) => createClient(env),
  handlers,
  operation: (args, ctx) => execute(ctx, args),
  confirmLease,
}

export default plugin
