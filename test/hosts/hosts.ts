// What test:hosts does with each host: how ag-mcp is wired into it (`ag-mcp install <host>`
// where we support the host, else the host's own `mcp add`), what a person approves before the
// host uses the entry (approve.ts), and what its own client checks: health (it connects), tools
// (it lists ours), call (it calls one), each where the host can do it without a model. A check a
// host cannot do says so, with what the host printed.
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { BINARY } from '../helpers/mcp-process.ts'
import { approveClaudeCode, approveCodex, approveGemini } from './approve.ts'
import type { Binaries, Pinned } from './cache.ts'
import { codexView, startAppServer } from './codex-app.ts'
import { escapeRe, fail, firstLine, na, ok, serverLine, why } from './outcome.ts'
import type { Outcome } from './outcome.ts'
import { agMcp, run } from './sandbox.ts'
import { haveTmux, typeAndRead } from './tui.ts'
import type { Ran, Sandbox } from './sandbox.ts'

export type Mode = 'local' | 'agit'

/**
 * What a mode serves: the entry's name in the host's configuration, a tool to find and call with
 * its arguments, what its answer says, another tool that must be listed too, and one that must
 * be absent.
 */
export interface Expect {
  mode: Mode
  server: string
  tool: string
  args: Record<string, string>
  said: RegExp
  also?: string
  absent?: string
}

/**
 * Local mode: `install --local` names the entry after the repository's folder, and the call reads
 * the repository's README. Plain agit mode: the entry is `agentgit`, and the call is the first
 * thing a user does there, logging a thought (on a repository without `.agit/`, it starts the
 * log; every other agit tool would answer "AGIT not initialized").
 */
export function expectFor(mode: Mode, box: Sandbox, host: string): Expect {
  if (mode === 'local')
    return {
      mode,
      server: `agentgit-${box.repoName}`,
      tool: 'file_read',
      args: { repo: box.repoName, path: 'README.md' },
      said: /hello from test:hosts/,
      also: 'agit_get_status',
    }
  const content = `checked through ${host}`
  return {
    mode,
    server: 'agentgit',
    tool: 'agit_log_step',
    args: { role: 'ai', category: 'intent', content },
    // AGIT's answer to one step: `Logged: [<role>/<category>] <content, cut at 50 bytes>`.
    said: new RegExp(escapeRe(`Logged: [ai/intent] ${content}`)),
    also: 'agit_get_status',
    absent: 'file_read',
  }
}

export interface Host {
  name: string
  pkg: Pinned
  /** The host's own `--version`, and the version read from it. */
  version(b: Binaries, box: Sandbox): { ran: Ran; version: string | undefined }
  /** Puts ag-mcp into the host's configuration; says how. */
  wire(b: Binaries, box: Sandbox, e: Expect): string
  /** What a person approves before the host uses the entry, where the host asks for it. */
  approve?(b: Binaries, box: Sandbox, e: Expect): Outcome | undefined
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
  wire: (b, box, e) => {
    if (e.mode === 'local') return agMcp(box, 'install', 'claude-code', '--local', box.repo, '--write').shown
    return ownAdd(box, b.claude, [
      'mcp',
      'add',
      '--scope',
      'user',
      e.server,
      '--',
      process.execPath,
      ...serverArgs(box, e.mode),
    ])
  },
  // The project's .mcp.json waits for the person's approval; a user-scope entry does not.
  approve: (b, box, e) => (e.mode === 'local' ? approveClaudeCode(b, box, e.server) : undefined),
  checks: async (b, box, e) => {
    const out: Outcome[] = []
    const list = run(box.repo, box.env, b.claude, ['mcp', 'list'])
    const line = serverLine(list.stdout, e.server)
    out.push(
      list.code === 0 && /✔ Connected$/.test(line)
        ? ok('health', `claude mcp list: ${line.replace(/: .* - /, ' … ')}`)
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
    const server = (init?.['mcp_servers'] as { name: string; status: string; source?: string }[] | undefined)?.find(
      (s) => s.name === e.server,
    )
    const prefix = `mcp__${e.server}__`
    const tools = ((init?.['tools'] as string[] | undefined) ?? [])
      .filter((n) => n.startsWith(prefix))
      .map((n) => n.slice(prefix.length))
    // The entry is read from the file ag-mcp wrote: the project's .mcp.json in local mode.
    const scope = e.mode === 'local' ? 'project' : 'user'
    out.push(
      server?.status === 'connected' && server.source === scope
        ? toolsOutcome(
            `claude -p init event (${e.server} ${server.status}, from ${server.source} scope; model step: "${String(result?.['result'] ?? '')}")`,
            tools,
            e,
          )
        : fail(
            'tools',
            `claude -p: ${e.server} ${server ? `${server.status}, from ${server.source} scope (expected ${scope})` : 'absent'}; ${why(p)}`,
          ),
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
  wire: (b, box, e) => {
    seed(join(box.home, '.codex', 'config.toml'), CODEX_SEED)
    if (e.mode === 'local') return agMcp(box, 'install', 'codex', '--local', box.repo, '--write').shown
    return ownAdd(box, b.codex, ['mcp', 'add', e.server, '--', process.execPath, ...serverArgs(box, e.mode)])
  },
  // The project's .codex/config.toml is read only in a trusted project; the user file always.
  approve: (b, box, e) => (e.mode === 'local' ? approveCodex(b, box, e.server) : undefined),
  checks: async (b, box, e) => {
    const out: Outcome[] = []
    // `codex mcp list` reads the configuration only (it starts no server): the entry is there.
    const list = run(box.repo, box.env, b.codex, ['mcp', 'list', '--json'])
    const listed = JSON.parse(list.code === 0 ? list.stdout : '[]') as {
      name: string
      enabled: boolean
      transport?: { command?: string }
    }[]
    const entry = listed.find((s) => s.name === e.server)
    out.push(
      entry?.enabled && entry.transport?.command === process.execPath
        ? ok('config', `codex mcp list: ${e.server} enabled, stdio ${entry.transport.command} (it starts no server)`)
        : fail(
            'config',
            `codex mcp list: ${entry ? JSON.stringify(entry).slice(0, 200) : list.code === 0 ? `no ${e.server} among [${listed.map((s) => s.name).join(', ')}]` : why(list)}`,
          ),
    )
    const app = startAppServer(b.codex, box.repo, box.env, 60_000)
    try {
      const v = await codexView(app, box.repo, e.server, e.tool, e.args)
      out.push(
        v.tools.length > 0
          ? ok('health', `codex app-server mcpServerStatus/list: ${e.server} connected`)
          : fail('health', `codex app-server: ${e.server} lists no tools`),
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
  wire: (b, box, e) => {
    // No usage statistics, no update check, and the API-key sign-in the UI is started with (see
    // geminiTools; else it opens on its sign-in dialog). In plain agit mode ag-mcp's entry is
    // merged into this user file; in local mode it goes into the project's .gemini/settings.json.
    const settings = {
      privacy: { usageStatisticsEnabled: false },
      general: { enableAutoUpdate: false },
      security: { auth: { selectedType: 'gemini-api-key' } },
    }
    seed(join(box.home, '.gemini', 'settings.json'), `${JSON.stringify(settings, null, 2)}\n`)
    if (e.mode === 'local') return agMcp(box, 'install', 'gemini', '--local', box.repo, '--write').shown
    return ownAdd(box, b.node, [
      b.gemini,
      'mcp',
      'add',
      '--scope',
      'user',
      e.server,
      process.execPath,
      ...serverArgs(box, e.mode),
    ])
  },
  // An untrusted folder disables every server, whichever file it is in.
  approve: (b, box, e) => approveGemini(b, box, e.server),
  checks: async (b, box, e) => {
    const out: Outcome[] = []
    // (it writes the list on stderr)
    const list = run(box.repo, box.env, b.node, [b.gemini, 'mcp', 'list'])
    const line = serverLine(`${list.stdout}\n${list.stderr}`, e.server)
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
  const name = escapeRe(e.server)
  const count = (s: string) => Number(new RegExp(`${name} - Ready \\((\\d+) tools?`).exec(s)?.[1] ?? -1)
  const shown = (s: string) => [...s.matchAll(new RegExp(`^\\s*- mcp_${name}_(\\w+)`, 'gm'))].map((m) => m[1] as string)
  const screen = await typeAndRead(
    [b.node, b.gemini],
    box.repo,
    env,
    /Type your message/,
    '/mcp list',
    (s) => count(s) >= 0 && shown(s).length >= count(s),
    { understood: /List configured MCP servers and tools/, notYet: new RegExp(`${name} - Starting`) },
  )
  if (!screen.ok) return fail('tools', `gemini /mcp list: ${screen.text.slice(-600)}`)
  const how = `gemini (interactive, in tmux) /mcp list: ${e.server} - Ready (${count(screen.text)} tools)`
  return toolsOutcome(how, shown(screen.text), e)
}

const inspector: Host = {
  name: 'inspector',
  pkg: '@modelcontextprotocol/inspector',
  version: (b, box) => fromVersion(run(box.repo, box.env, b.node, [b.inspector, '--version']), /(\d+\.\d+\.\S+)/),
  // A test client, not a host with a configuration of its own: it takes the server's command.
  wire: (_b, box, e) => `inspector --cli ${process.execPath} ${serverArgs(box, e.mode).join(' ')}`,
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
  wire: (b, box, e) => {
    if (e.mode === 'local') return agMcp(box, 'install', 'mcporter', '--local', box.repo, '--write').shown
    // `mcporter config add` writes the project's config/mcporter.json too, whose folder is the
    // server's working directory: inside the repository, where agit mode serves it.
    return ownAdd(box, b.node, [
      b.mcporter,
      'config',
      'add',
      e.server,
      '--command',
      process.execPath,
      ...serverArgs(box, e.mode).flatMap((a) => ['--arg', a]),
    ])
  },
  checks: async (b, box, e) => {
    const list = run(box.repo, box.env, b.node, [b.mcporter, 'list', e.server, '--json'])
    const listed =
      list.code === 0
        ? (JSON.parse(list.stdout) as { status?: string; source?: { path?: string }; tools?: { name: string }[] })
        : undefined
    // mcporter also imports other hosts' entries (the repository's .mcp.json has one of the same
    // name): the one checked must come from the project's config/mcporter.json.
    const file = join(box.repo, 'config', 'mcporter.json')
    const call = run(box.repo, box.env, b.node, [
      b.mcporter,
      'call',
      `${e.server}.${e.tool}`,
      ...Object.entries(e.args).map(([k, v]) => `${k}=${v}`),
      '--output',
      'json',
    ])
    return [
      listed?.status === 'ok' && listed.source?.path === file
        ? ok('health', `mcporter list ${e.server}: status ok, from REPO/config/mcporter.json`)
        : fail('health', listed ? `status ${listed.status}, from ${listed.source?.path}` : why(list)),
      listed
        ? toolsOutcome(
            `mcporter list ${e.server} --json`,
            (listed.tools ?? []).map((t) => t.name),
            e,
          )
        : fail('tools', why(list)),
      call.code === 0
        ? callOutcome(`mcporter call ${e.server}.${e.tool}`, false, call.stdout, e)
        : fail('call', why(call)),
    ]
  },
}

export const HOSTS: Host[] = [claudeCode, codex, gemini, inspector, mcporter]
