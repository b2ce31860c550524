// The agwp plugin: AGWP v1 over HTTP (an upstream plugin). Most tools are manifest-only (the
// generic executor runs their `operation` block, see operation.ts); handlers.ts holds the few
// that need logic, lease.ts the --require-lease check, options.ts the flags it adds.
import { definePlugin } from '../../core/src/plugin-api.ts'
import type { Handler, ToolArgs, ToolTypes } from '../../core/src/plugin-api.ts'
import { createClient } from './client.ts'
import type { AgwpClient } from './client.ts'
import { execute, scoped } from './executor.ts'
import { handlers } from './handlers.ts'
import { confirmLease } from './lease.ts'
import { writtenPaths } from './written.ts'
import { checkOperation, describeOperation, OPERATION_SCHEMA } from './operation.ts'
import { options } from './options.ts'
import { memoryOf, remember, withMemory, workspaceFiles } from './open-workspaces.ts'
import { runNotes } from './run-notes.ts'
import { warnUnservedGroups } from './scopes.ts'

// Every entry point runs in the call's repository scope (AGWP-Repo on each request it makes),
// and the workspace a call worked in is remembered (open-workspaces.ts) once it succeeded.
const inScope =
  <T extends ToolTypes>(h: Handler<T, AgwpClient>): Handler<T, AgwpClient> =>
  async (args, ctx) => {
    const answer = await h(args, scoped(ctx, args as ToolArgs))
    remember(memoryOf(ctx.state), ctx.tool, args as ToolArgs, answer)
    return answer
  }

export default definePlugin({
  name: 'agwp',
  api: 1,
  optionPrefix: '',
  options,
  init: ({ options: o, credential, log }): AgwpClient =>
    withMemory(
      createClient({
        upstream:
          o.upstream === undefined
            ? undefined
            : {
                url: o.upstream,
                timeoutMs: o['timeout-ms'],
                connectTimeoutMs: o['connect-timeout-ms'],
                maxResponseBytes: o['max-response-bytes'],
              },
        tokens: credential,
        log,
      }),
    ),
  start: (client, { groups, log }, signal) => warnUnservedGroups(client, groups, log, signal),
  handlers: Object.fromEntries(
    Object.entries(handlers).map(([name, h]) => [name, inScope(h as Handler<ToolTypes, AgwpClient>)]),
  ),
  operation: {
    schema: OPERATION_SCHEMA,
    check: checkOperation,
    describe: describeOperation,
    run: async (args, ctx) => {
      const answer = await execute(scoped(ctx, args), args)
      remember(memoryOf(ctx.state), ctx.tool, args, answer)
      return answer
    },
  },
  confirmLease: (q, ctx) => confirmLease(q, scoped(ctx, q.args)),
  writtenPaths: (args, ctx) => writtenPaths(args, scoped(ctx, args)),
  attachments: { run_notes: runNotes, workspace_files: workspaceFiles },
})
