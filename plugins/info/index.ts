// The info plugin (built in): tools about this ag-mcp process itself. No upstream.
import type { Plugin } from '../../core/src/plugin-api.ts'

const plugin: Plugin = {
  name: 'info',
  handlers: {
    server_info: async (_args, ctx) => ({
      name: ctx.server.name,
      version: ctx.server.version,
      groups: [...ctx.server.groups],
      revisions: [...ctx.server.revisions],
      limits: { ...ctx.server.limits },
    }),
  },
}

export default plugin
