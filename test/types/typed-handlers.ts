// A typecheck test, run by `npm run typecheck`: a handler's arguments and result are the types
// build.mjs generates from its tool's manifest, so each line marked @ts-expect-error must fail to
// compile (if typing regressed to Record<string, unknown>, the directive itself would be the
// error). typed-handlers.test.ts compiles this file without the directives and checks that each
// one hid a real error.
import type { Handlers } from '../../core/src/plugin-api.ts'
import type { PluginTools } from '../../generated/types/tools.ts'

export const handlers: Handlers<PluginTools['agwp']> = {
  file_read: async (args) => {
    // @ts-expect-error file_read's input schema declares no "branch"
    const branch: unknown = args.branch
    return { kind: 'file', path: `${args.repo}${String(branch)}` }
  },
  search: async (args) => {
    const q: string = args.q
    // @ts-expect-error limit is optional in the schema: it may be undefined
    const limit: number = args.limit
    return { matches: [q, limit] }
  },
  // @ts-expect-error log's output schema requires "commits"
  log: async (args) => ({ next_cursor: args.repo }),
}
