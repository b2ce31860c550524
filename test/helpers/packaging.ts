// Shared by the packaging tests: an environment for nested npm runs that inherits nothing from the
// `npm test` around it (its npm_* variables would steer the inner npm), and a discover round trip.
import { join } from 'node:path'
import type { McpProcess } from './mcp-process.ts'

export function npmEnv(dir: string): Record<string, string> {
  return {
    PATH: process.env['PATH'] ?? '',
    HOME: dir,
    npm_config_cache: join(dir, 'npm-cache'),
    npm_config_update_notifier: 'false',
    npm_config_audit: 'false',
    npm_config_fund: 'false',
  }
}

/** server/discover, then one tools/call: the binary serves MCP, plugins included. */
export async function roundTrip(p: McpProcess): Promise<{ versions: unknown; serverInfo: unknown }> {
  const discover = await p.request('server/discover', {})
  const call = await p.request('tools/call', { name: 'server_info', arguments: {} })
  return {
    versions: discover.result?.['supportedVersions'],
    serverInfo: (call.result?.['structuredContent'] as Record<string, unknown> | undefined)?.['name'],
  }
}
