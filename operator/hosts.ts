// Where each MCP host keeps its server list, and in what shape. Sources (checked 2026-12):
//   Claude Code      ~/.claude.json, top-level "mcpServers" (user scope)      code.claude.com/docs/en/mcp
//   Claude Desktop   <appData>/Claude/claude_desktop_config.json, "mcpServers" modelcontextprotocol.io/quickstart/user
//   Cursor           ~/.cursor/mcp.json, "mcpServers"                         cursor.com/docs/mcp
//   VS Code          <appData>/Code/User/mcp.json, "servers" (type stdio)     code.visualstudio.com/docs/copilot/reference/mcp-configuration
//   Codex            $CODEX_HOME/config.toml (~/.codex), [mcp_servers.<name>] developers.openai.com/codex/mcp
//   Windsurf         ~/.codeium/windsurf/mcp_config.json, "mcpServers"        docs.windsurf.com/windsurf/cascade/mcp
//   Gemini CLI       $GEMINI_CLI_HOME (~)/.gemini/settings.json, "mcpServers" geminicli.com/docs/tools/mcp-server
//   mcporter         $MCPORTER_CONFIG, else $XDG_CONFIG_HOME/mcporter/mcporter.json where it exists,
//                    else ~/.mcporter/mcporter.json, "mcpServers"              mcporter's README (config resolution)
// <appData> is what Electron apps use: ~/Library/Application Support on macOS, %APPDATA% on
// Windows, $XDG_CONFIG_HOME or ~/.config elsewhere.
// Project scope (a file in the repository, same shape; checked 2026-12 in the same documentation):
//   Claude Code <repo>/.mcp.json (asks to approve its servers on first use) · Cursor
//   <repo>/.cursor/mcp.json · VS Code <repo>/.vscode/mcp.json · Codex <repo>/.codex/config.toml (read
//   only in a project Codex trusts) · Gemini CLI <repo>/.gemini/settings.json · mcporter
//   <repo>/config/mcporter.json (read when mcporter runs in the repository). Claude Desktop and
//   Windsurf have none.
import { join } from 'node:path'

export const HOSTS = [
  'claude-code',
  'claude-desktop',
  'cursor',
  'vscode',
  'codex',
  'windsurf',
  'gemini',
  'mcporter',
] as const
export type HostName = (typeof HOSTS)[number]

export interface HostFormat {
  label: string
  file: string
  format: 'json' | 'toml'
  /** JSON: the top-level key holding the servers by name. */
  key: string
  /** Extra fields the host wants in a stdio entry. */
  extra: Record<string, string>
  /** The host's project-scope file, relative to the repository (same format), if it has one. */
  project?: string
}

export interface Place {
  home: string
  platform: NodeJS.Platform
  env: NodeJS.ProcessEnv
  /** Does this file exist? (mcporter reads its XDG file only where there is one.) */
  exists: (file: string) => boolean
}

function appData(p: Place): string {
  if (p.platform === 'darwin') return join(p.home, 'Library', 'Application Support')
  if (p.platform === 'win32') return p.env['APPDATA'] ?? join(p.home, 'AppData', 'Roaming')
  return p.env['XDG_CONFIG_HOME'] || join(p.home, '.config')
}

export function hostFormat(host: HostName, p: Place): HostFormat {
  switch (host) {
    case 'claude-code':
      return {
        label: 'Claude Code',
        file: join(p.home, '.claude.json'),
        format: 'json',
        key: 'mcpServers',
        extra: { type: 'stdio' },
        project: '.mcp.json',
      }
    case 'claude-desktop':
      return {
        label: 'Claude Desktop',
        file: join(appData(p), 'Claude', 'claude_desktop_config.json'),
        format: 'json',
        key: 'mcpServers',
        extra: {},
      }
    case 'cursor':
      return {
        label: 'Cursor',
        file: join(p.home, '.cursor', 'mcp.json'),
        format: 'json',
        key: 'mcpServers',
        extra: {},
        project: '.cursor/mcp.json',
      }
    case 'vscode':
      return {
        label: 'VS Code',
        file: join(appData(p), 'Code', 'User', 'mcp.json'),
        format: 'json',
        key: 'servers',
        extra: { type: 'stdio' },
        project: '.vscode/mcp.json',
      }
    case 'codex':
      return {
        label: 'Codex',
        file: join(p.env['CODEX_HOME'] || join(p.home, '.codex'), 'config.toml'),
        format: 'toml',
        key: 'mcp_servers',
        extra: {},
        project: '.codex/config.toml',
      }
    case 'windsurf':
      return {
        label: 'Windsurf',
        file: join(p.home, '.codeium', 'windsurf', 'mcp_config.json'),
        format: 'json',
        key: 'mcpServers',
        extra: {},
      }
    case 'gemini':
      return {
        label: 'Gemini CLI',
        file: join(p.env['GEMINI_CLI_HOME'] || p.home, '.gemini', 'settings.json'),
        format: 'json',
        key: 'mcpServers',
        extra: {},
        project: '.gemini/settings.json',
      }
    case 'mcporter':
      return {
        label: 'mcporter',
        file: mcporterFile(p),
        format: 'json',
        key: 'mcpServers',
        extra: {},
        project: 'config/mcporter.json',
      }
  }
}

/** The one home config mcporter reads (a new XDG file would hide an existing ~/.mcporter one). */
function mcporterFile(p: Place): string {
  const set = p.env['MCPORTER_CONFIG']
  if (set) return set
  const xdg = p.env['XDG_CONFIG_HOME']
  const xdgFile = xdg ? join(xdg, 'mcporter', 'mcporter.json') : undefined
  return xdgFile && p.exists(xdgFile) ? xdgFile : join(p.home, '.mcporter', 'mcporter.json')
}
