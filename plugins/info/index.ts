// The info plugin (built in): tools about this ag-mcp process itself. No upstream, no state.
import { definePlugin } from '../../core/src/plugin-api.ts'
import type { Handlers } from '../../core/src/plugin-api.ts'
import type { PluginTools } from '../../generated/types/tools.ts'

const handlers: Handlers<PluginTools['info']> = {
  server_info: async (_args, ctx) => ({
    name: ctx.server.name,
    version: ctx.server.version,
    groups: [...ctx.server.groups],
    ...(ctx.server.absent && Object.keys(ctx.server.absent).length > 0 ? { absent: { ...ctx.server.absent } } : {}),
    revisions: [...ctx.server.revisions],
    limits: { ...ctx.server.limits },
  }),
}

export default definePlugin({ name: 'info', api: 1, handlers })
