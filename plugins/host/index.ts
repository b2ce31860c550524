// The host plugin: tools about this ag-mcp process itself. No upstream.
import type { Plugin } from '../../core/src/plugin-api.ts'

const plugin: Plugin = {
  name: 'host',
  handlers: {
    server_info: async (_args, ctx) => ({
      name: ctx.host.name,
      version: ctx.host.version,
      groups: [...ctx.host.groups],
      revisions: [...ctx.host.revisions],
      limits: { ...ctx.host.limits },
    }),
  },
}

export default plugin
