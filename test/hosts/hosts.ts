// What test:hosts does with each host: how ag-mcp is wired into it (`ag-mcp install <host>`
// where we support the host, else the host's own `mcp add`), and what its own client checks:
// health (it connects), tools (it lists ours), call (it calls one), each where the host can do
// it without a model. A check a host cannot do says so, with what the host printed.
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { BINARY } from '../helpers/mcp-process.ts'
import type { Binaries, Pinned } from './cache.ts'
import { codexView, startAppServer } from './codex-app.ts'
import { agMcp, run } from './sandbox.ts'
import { haveTmux, typeAndRead } from './tui.ts'
import type { Ran, Sandbox } from './sandbox.ts'

export type Mode = 'local' | 'agit'

/**
 * What a mode serves: a tool to find and call, what its answer says, another tool that must be
 * listed too, and one that must be absent.
 */
export interface Expect {
  mode: Mode
  tool: string
  args: Record<string, string>
  said: RegExp
  also?: string
  absent?: string
}

export function expectFor(mode: Mode, box: Sandbox): Expect {
  return mode === 'local'
    ? {
        mode,
        tool: 'file_read',
        args: { repo: box.repoName, path: 'README.md' },
        said: /hello from test:hosts/,
        also: 'agit_get_status',
      }
    : { mode, tool: 'agit_get_status', args: {}, said: /No pending thoughts/, absent: 'file_read' }
}

export type Status = 'ok' | 'FAIL' | 'n/a'
export interface Outcome {
  check: string
  status: Status
  detail: string
}

export interface Host {
  name: string
  pkg: Pinned
  /** The host's own `--version`, and the version read from it. */
  version(b: Binaries, box: Sandbox): { ran: Ran; version: string | undefined }
  /** Puts ag-mcp into the host's configuration; says how. */
  wire(b: Binaries, box: Sandbox, mode: Mode): string
  checks(b: Binaries, box: Sandbox, e: Expect): Promise<Outcome[]>
}

/** ag-mcp's command line for a mode, as a host starts it. */
const serverArgs = (box: Sandbox, mode: Mode): string[] => (mode === 'local' ? [BINARY, '--local', box.repo] : [BINARY])

/** Writes a host's file before ag-mcp's entry is merged into it. */
function seed(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, text)
}

const fromVersion = (ran: Ran, re: RegExp) => ({ ran, version: re.exec(ran.stdout)?.[1] })
const ok = (check: string, detail: string): Outcome => ({ check, status: 'ok', detail })
const fail = (check: string, detail: string): Outcome => ({ check, status: 'FAIL', detail })
const na = (check: string, detail: string): Outcome => ({ check, status: 'n/a', detail })
const firstLine = (s: string): string => s.trim().split('\n')[0]?.slice(0, 400) ?? ''
const why = (r: Ran): string => `${r.shown} exited ${r.code}: ${firstLine(r.stderr) || firstLine(r.stdout)}`

/** Wires ag-mcp with the host's own command (`mcp add`, `config add`): what it ran. */
function ownAdd(box: Sandbox, cmd: string, args: string[]): string {
  const r = run(box.repo, box.env, cmd, args)
  if (r.code !== 0) throw new Error(why(r))
  return r.shown
}

/** The tools check: ours are listed, the expected one among them, the absent one not. */
function toolsOutcome(how: string, tools: string[], e: Expect): Outcome {
  for (const want of [e.tool, e.also ?? e.tool])
    if (!tools.includes(want)) return fail('tools', `${how}: ${want} not among ${tools.length}: ${tools.join(', ')}`)
  if (e.absent && tools.includes(e.absent)) return fail('tools', `${how}: ${e.absent} listed in ${e.mode} mode`)
  const among = e.also ? `${e.tool} and ${e.also}` : e.tool
  return ok('tools', `${how}: ${tools.length} tools, ${among} among them${e.absent ? `, no ${e.absent}` : ''}`)
}

function callOutcome(how: string, isError: boolean, text: string, e: Expect): Outcome {
  if (isError || !e.said.test(text)) return fail('call', `${how}: ${firstLine(text)}`)
  return ok('call', `${how} → ${e.said.exec(text)?.[0]}`)
}

const claudeCode: Host = {
  name: 'claude-code',
  pkg: '@anthropic-ai/claude-code',
  version: (b, box) => fromVersion(run(box.repo, box.env, b.claude, ['--version']), /^(\S+) \(Claude Code\)/),
  wire: (b, box, mode) => {
    if (mode === 'local') return agMcp(box, 'install', 'claude-code', '--local', box.repo, '--write').shown
    return ownAdd(box, b.claude, [
      'mcp',
      'add',
      '--scope',
      'user',
      'agentgit',
      '--',
      process.execPath,
      ...serverArgs(box, mode),
    ])
  },
  checks: async (b, box, e) => {
    const out: Outcome[] = []
    const list = run(box.repo, box.env, b.claude, ['mcp', 'list'])
    const line = /^agentgit: .*$/m.exec(list.stdout)?.[0] ?? ''
    out.push(
      list.code === 0 && /✔ Connected$/.test(line)
        ? ok('health', `claude mcp list: ${line.replace(/^agentgit: .* - /, 'agentgit … ')}`)
        : fail('health', `claude mcp list: ${line || why(list)}`),
    )
    // A print-mode session announces its tools and MCP servers in its first event, before any
    // model request; with no login, the model step then stops at once ("Not logged in").
    const p = run(box.repo, box.env, b.claude, [
      '-p',
      'hi',
      '--output-format',
      'stream-json',
      '--verbose',
      '--max-turns',
      '1',
    ])
    const events = p.stdout
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>)
    const init = events.find((ev) => ev['type'] === 'system' && ev['subtype'] === 'init')
    const result = events.find((ev) => ev['type'] === 'result')
    const server = (init?.['mcp_servers'] as { name: string; status: string }[] | undefined)?.find(
      (s) => s.name === 'agentgit',
    )
    const tools = ((init?.['tools'] as string[] | undefined) ?? [])
      .filter((n) => n.startsWith('mcp__agentgit__'))
      .map((n) => n.slice('mcp__agentgit__'.length))
    out.push(
      server?.status === 'connected'
        ? toolsOutcome(
            `claude -p init event (server ${server.status}; model step: "${String(result?.['result'] ?? '')}")`,
            tools,
            e,
          )
        : fail('tools', `claude -p: agentgit ${server ? server.status : 'absent'}; ${why(p)}`),
    )
    out.push(
      na(
        'call',
        `Claude Code calls a tool only from a model's turn; without a login its print mode stops at "${String(result?.['result'] ?? firstLine(p.stdout))}"`,
      ),
    )
    return out
  },
}

/** Codex's config before ag-mcp is added: a model provider on a closed loopback port, no update check. */
const CODEX_SEED = `# test:hosts: no model is ever reached
check_for_update_on_startup = false
model_provider = "offline"

[model_providers.offline]
name = "offline (test:hosts)"
base_url = "http://127.0.0.1:9/v1"
wire_api = "responses"
`

const codex: Host = {
  name: 'codex',
  pkg: '@openai/codex',
  version: (b, box) => fromVersion(run(box.repo, box.env, b.codex, ['--version']), /codex-cli (\S+)/),
  wire: (b, box, mode) => {
    seed(join(box.home, '.codex', 'config.toml'), CODEX_SEED)
    if (mode === 'local') return agMcp(box, 'install', 'codex', '--local', box.repo, '--write').shown
    return ownAdd(box, b.codex, ['mcp', 'add', 'agentgit', '--', process.execPath, ...serverArgs(box, mode)])
  },
  checks: async (b, box, e) => {
    const out: Outcome[] = []
    // `codex mcp list` reads the configuration only (it starts no server): the entry is there.
    const list = run(box.repo, box.env, b.codex, ['mcp', 'list', '--json'])
    const entry = (
      JSON.parse(list.code === 0 ? list.stdout : '[]') as {
        name: string
        enabled: boolean
        transport?: { command?: string }
      }[]
    ).find((s) => s.name === 'agentgit')
    out.push(
      entry?.enabled && entry.transport?.command === process.execPath
        ? ok('config', `codex mcp list: agentgit enabled, stdio ${entry.transport.command} (it starts no server)`)
        : fail('config', `codex mcp list: ${entry ? JSON.stringify(entry).slice(0, 200) : why(list)}`),
    )
    const app = startAppServer(b.codex, box.repo, box.env, 60_000)
    try {
      const v = await codexView(app, box.repo, 'agentgit', e.tool, e.args)
      out.push(
        v.tools.length > 0
          ? ok('health', `codex app-server mcpServerStatus/list: agentgit connected`)
          : fail('health', 'codex app-server: agentgit lists no tools'),
      )
      out.push(toolsOutcome('codex app-server mcpServerStatus/list', v.tools, e))
      out.push(callOutcome(`codex app-server mcpServer/tool/call ${e.tool}`, !v.call.ok, v.call.text, e))
    } catch (err) {
      out.push(fail('tools', (err as Error).message))
    } finally {
      await app.close()
    }
    return out
  },
}

const gemini: Host = {
  name: 'gemini',
  pkg: '@google/gemini-cli',
  version: (b, box) => fromVersion(run(box.repo, box.env, b.node, [b.gemini, '--version']), /^(\d+\.\d+\.\S+)/),
  wire: (b, box, mode) => {
    // No usage statistics, no update check, and the API-key sign-in the UI is started with (see
    // geminiTools; else it opens on its sign-in dialog); ag-mcp's entry is merged into this.
    const settings = {
      privacy: { usageStatisticsEnabled: false },
      general: { enableAutoUpdate: false },
      security: { auth: { selectedType: 'gemini-api-key' } },
    }
    seed(join(box.home, '.gemini', 'settings.json'), `${JSON.stringify(settings, null, 2)}\n`)
    if (mode === 'local') return agMcp(box, 'install', 'gemini', '--local', box.repo, '--write').shown
    return ownAdd(box, b.node, [
      b.gemini,
      'mcp',
      'add',
      '--scope',
      'user',
      'agentgit',
      process.execPath,
      ...serverArgs(box, mode),
    ])
  },
  checks: async (b, box, e) => {
    const out: Outcome[] = []
    // (it writes the list on stderr)
    const list = run(box.repo, box.env, b.node, [b.gemini, 'mcp', 'list'])
    const line = /^\S+ agentgit: .*$/m.exec(`${list.stdout}\n${list.stderr}`)?.[0] ?? ''
    out.push(
      list.code === 0 && / - Connected$/.test(line)
        ? ok('health', `gemini mcp list (connect and ping): ${line.replace(/: .* \(stdio\)/, ' … (stdio)')}`)
        : fail('health', `gemini mcp list: ${line || why(list)}`),
    )
    out.push(await geminiTools(b, box, e))
    out.push(na('call', 'Gemini CLI calls a tool only from a model turn'))
    return out
  },
}

/**
 * Gemini CLI shows a server's tools only in its interactive `/mcp list` (in print mode that is a
 * prompt for the model; without an auth method it stops at "Please set an Auth method…"). The
 * UI starts with an API key it never checks until a model is asked (GEMINI_API_KEY, its
 * documented variable; here a dummy, the model endpoint on a closed loopback port), and
 * `/mcp list` is answered by the CLI itself.
 */
async function geminiTools(b: Binaries, box: Sandbox, e: Expect): Promise<Outcome> {
  if (!haveTmux()) return na('tools', 'tmux is not installed: Gemini CLI lists tools only in its interactive UI')
  const env = {
    ...box.env,
    TERM: 'xterm-256color',
    GEMINI_API_KEY: 'test-hosts-not-a-key',
    GOOGLE_GEMINI_BASE_URL: 'http://127.0.0.1:9',
  }
  const count = (s: string) => Number(/agentgit - Ready \((\d+) tools?/.exec(s)?.[1] ?? -1)
  const shown = (s: string) => [...s.matchAll(/^\s*- mcp_agentgit_(\w+)/gm)].map((m) => m[1] as string)
  const screen = await typeAndRead(
    [b.node, b.gemini],
    box.repo,
    env,
    /Type your message/,
    '/mcp list',
    (s) => count(s) >= 0 && shown(s).length >= count(s),
    { understood: /List configured MCP servers and tools/, notYet: /agentgit - Starting/ },
  )
  if (!screen.ok) return fail('tools', `gemini /mcp list: ${screen.text.slice(-600)}`)
  const how = `gemini (interactive, in tmux) /mcp list: agentgit - Ready (${count(screen.text)} tools)`
  return toolsOutcome(how, shown(screen.text), e)
}

const inspector: Host = {
  name: 'inspector',
  pkg: '@modelcontextprotocol/inspector',
  version: (b, box) => fromVersion(run(box.repo, box.env, b.node, [b.inspector, '--version']), /(\d+\.\d+\.\S+)/),
  // A test client, not a host with a configuration of its own: it takes the server's command.
  wire: (_b, box, mode) => `inspector --cli ${process.execPath} ${serverArgs(box, mode).join(' ')}`,
  checks: async (b, box, e) => {
    const cli = [b.inspector, '--cli', '--cwd', box.repo, process.execPath, ...serverArgs(box, e.mode)]
    const list = run(box.repo, box.env, b.node, [...cli, '--method', 'tools/list'])
    const tools =
      list.code === 0 ? (JSON.parse(list.stdout) as { tools: { name: string }[] }).tools.map((t) => t.name) : []
    const args = Object.entries(e.args).map(([k, v]) => `${k}=${v}`)
    const call = run(box.repo, box.env, b.node, [
      ...cli,
      '--method',
      'tools/call',
      '--tool-name',
      e.tool,
      ...(args.length ? ['--tool-arg', ...args] : []),
    ])
    const result =
      call.code === 0 ? (JSON.parse(call.stdout) as { isError?: boolean; content: { text?: string }[] }) : undefined
    return [
      list.code === 0 ? toolsOutcome('inspector --cli --method tools/list', tools, e) : fail('tools', why(list)),
      result
        ? callOutcome(
            `inspector --cli --method tools/call ${e.tool}`,
            result.isError === true,
            result.content[0]?.text ?? '',
            e,
          )
        : fail('call', why(call)),
    ]
  },
}

const mcporter: Host = {
  name: 'mcporter',
  pkg: 'mcporter',
  version: (b, box) => fromVersion(run(box.repo, box.env, b.node, [b.mcporter, '--version']), /(\d+\.\d+\.\S+)/),
  wire: (b, box, mode) => {
    // No imports: the entry checked is the one written here, not one read from another host's file.
    if (mode === 'local') {
      seed(join(box.home, '.mcporter', 'mcporter.json'), '{\n  "mcpServers": {},\n  "imports": []\n}\n')
      return agMcp(box, 'install', 'mcporter', '--local', box.repo, '--write').shown
    }
    // `mcporter config add` writes the project's config/mcporter.json, whose folder is the
    // server's working directory: inside the repository, where agit mode serves it.
    seed(join(box.repo, 'config', 'mcporter.json'), '{\n  "mcpServers": {},\n  "imports": []\n}\n')
    return ownAdd(box, b.node, [
      b.mcporter,
      'config',
      'add',
      'agentgit',
      '--command',
      process.execPath,
      ...serverArgs(box, mode).flatMap((a) => ['--arg', a]),
    ])
  },
  checks: async (b, box, e) => {
    const list = run(box.repo, box.env, b.node, [b.mcporter, 'list', 'agentgit', '--json'])
    const listed =
      list.code === 0 ? (JSON.parse(list.stdout) as { status?: string; tools?: { name: string }[] }) : undefined
    const call = run(box.repo, box.env, b.node, [
      b.mcporter,
      'call',
      `agentgit.${e.tool}`,
      ...Object.entries(e.args).map(([k, v]) => `${k}=${v}`),
      '--output',
      'json',
    ])
    return [
      listed?.status === 'ok'
        ? ok('health', 'mcporter list agentgit: status ok')
        : fail('health', listed ? `status ${listed.status}` : why(list)),
      listed
        ? toolsOutcome(
            'mcporter list agentgit --json',
            (listed.tools ?? []).map((t) => t.name),
            e,
          )
        : fail('tools', why(list)),
      call.code === 0
        ? callOutcome(`mcporter call agentgit.${e.tool}`, false, call.stdout, e)
        : fail('call', why(call)),
    ]
  },
}

export const HOSTS: Host[] = [claudeCode, codex, gemini, inspector, mcporter]
