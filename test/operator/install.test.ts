// `ag-mcp install|uninstall <host>` from outside, against temporary home directories: the dry run
// writes nothing, --write merges one entry and keeps everything else, a second install is refused
// without --force, uninstall removes only ours, and every written file parses.
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { mkdirSync, readFileSync, realpathSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { parse as parseJsonc } from 'jsonc-parser'
import type { ParseError } from 'jsonc-parser'
import { parse as parseToml } from 'smol-toml'
import { BINARY } from '../helpers/mcp-process.ts'

const TOKEN = `agwp_${'Inst4ll'.repeat(6)}`

interface Host {
  name: string
  file: string
  key: string
  toml?: boolean
  seed: string
  /** Fields the host's entry carries besides command and args. */
  extra: Record<string, string>
}

const HOSTS: Host[] = [
  {
    name: 'claude-code',
    file: '.claude.json',
    key: 'mcpServers',
    extra: { type: 'stdio' },
    seed: `${JSON.stringify({ numStartups: 41, projects: { '/x': { allowedTools: [] } }, mcpServers: { other: { type: 'stdio', command: 'npx', args: ['-y', 'other-mcp'] } } }, null, 2)}\n`,
  },
  {
    name: 'claude-desktop',
    file: '.config/Claude/claude_desktop_config.json',
    key: 'mcpServers',
    extra: {},
    seed: '{\n  "globalShortcut": "Ctrl+Space",\n  "mcpServers": {\n    "other": { "command": "uvx", "args": ["other-mcp"] }\n  }\n}\n',
  },
  {
    name: 'cursor',
    file: '.cursor/mcp.json',
    key: 'mcpServers',
    extra: {},
    seed: '{"mcpServers":{"other":{"command":"npx","args":["other-mcp"],"env":{"A":"1"}}}}',
  },
  {
    name: 'vscode',
    file: '.config/Code/User/mcp.json',
    key: 'servers',
    extra: { type: 'stdio' },
    seed: '{\n  // my servers\n  "servers": {\n    "other": { "type": "stdio", "command": "npx", "args": ["other-mcp"] }, // keep me\n  },\n  "inputs": [],\n}\n',
  },
  {
    name: 'codex',
    file: '.codex/config.toml',
    key: 'mcp_servers',
    toml: true,
    extra: {},
    seed: '# my codex settings\nmodel = "gpt-5"\n\n[mcp_servers.other]\ncommand = "npx"\nargs = ["-y", "other-mcp"]\n\n[mcp_servers.other.env]\nA = "1"\n\n[profiles.fast]\nmodel = "small" # keep me\n',
  },
  {
    name: 'windsurf',
    file: '.codeium/windsurf/mcp_config.json',
    key: 'mcpServers',
    extra: {},
    seed: '{\n\t"mcpServers": {\n\t\t"other": {"serverUrl": "https://example.invalid/mcp"}\n\t}\n}\n',
  },
  {
    name: 'gemini',
    file: '.gemini/settings.json',
    key: 'mcpServers',
    extra: {},
    seed: '{\n  "security": { "auth": { "selectedType": "gemini-api-key" } },\n  "mcpServers": {\n    "other": { "command": "npx", "args": ["other-mcp"], "trust": false }\n  }\n}\n',
  },
  {
    name: 'mcporter',
    file: '.mcporter/mcporter.json',
    key: 'mcpServers',
    extra: {},
    seed: '{\n  // mine\n  "mcpServers": {\n    "other": { "baseUrl": "https://example.invalid/mcp" },\n  },\n  "imports": ["cursor"],\n}\n',
  },
]

function agMcp(home: string, ...args: string[]) {
  return agMcpWith({}, home, ...args)
}

function agMcpWith(env: Record<string, string>, home: string, ...args: string[]) {
  const r = spawnSync(process.execPath, [BINARY, ...args], {
    cwd: home,
    encoding: 'utf8',
    env: { PATH: process.env['PATH'] ?? '', HOME: home, ...env },
    timeout: 20_000,
  })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

function parsed(h: Host, text: string): Record<string, unknown> {
  if (h.toml) return parseToml(text) as Record<string, unknown>
  const errors: ParseError[] = []
  const v = parseJsonc(text, errors, { allowTrailingComma: true }) as Record<string, unknown>
  if (errors.length > 0) throw new Error(`does not parse: ${JSON.stringify(errors)}`)
  return v
}

const servers = (h: Host, text: string) => parsed(h, text)[h.key] as Record<string, Record<string, unknown>>

for (const h of HOSTS) {
  t.test(`${h.name}: dry run, --write merge, refusal, --force, uninstall`, async (t) => {
    const home = t.testdir({ 'agent.token': TOKEN })
    const file = join(home, h.file)
    mkdirSync(dirname(file), { recursive: true })
    writeFileSync(file, h.seed)
    const seedOthers = parsed(h, h.seed)
    const install = (...extra: string[]) =>
      agMcp(
        home,
        'install',
        h.name,
        '--upstream',
        'http://127.0.0.1:7420/agwp/v1',
        '--token-file',
        'agent.token',
        ...extra,
      )

    const dry = install('--', '--repo', 'demo')
    t.equal(dry.code, 0, dry.stderr)
    t.match(dry.stdout, new RegExp(`would add the server "agentgit" in ${file.replace(/[.]/g, '\\.')}`))
    t.match(dry.stdout, /Nothing was written; run again with --write/)
    t.equal(readFileSync(file, 'utf8'), h.seed, 'the dry run wrote nothing')

    const w = install('--write', '--', '--repo', 'demo')
    t.equal(w.code, 0, w.stderr)
    const text = readFileSync(file, 'utf8')
    t.notOk(text.includes(TOKEN), 'the token value is never written')
    const ours = servers(h, text)['agentgit']
    t.same(ours, {
      ...h.extra,
      command: realpathSync(process.execPath),
      args: [
        realpathSync(BINARY),
        '--upstream',
        'http://127.0.0.1:7420',
        '--token-file',
        join(realpathSync(home), 'agent.token'),
        '--repo',
        'demo',
      ],
    })
    const after = parsed(h, text)
    t.same(
      servers(h, text)['other'],
      (seedOthers[h.key] as Record<string, unknown>)['other'],
      'the other entry is kept',
    )
    for (const k of Object.keys(seedOthers).filter((k) => k !== h.key)) t.same(after[k], seedOthers[k], `${k} is kept`)
    if (h.name === 'vscode' || h.name === 'codex') t.match(text, /keep me/, 'comments are kept')
    if (h.name === 'mcporter') t.match(text, /\/\/ mine/, 'comments are kept')

    const again = install('--write')
    t.equal(again.code, 1)
    t.match(again.stderr, /already has a server named "agentgit"; pass --force to replace it, or --name to add another/)
    t.equal(readFileSync(file, 'utf8'), text, 'the refused install changed nothing')

    const forced = install('--write', '--force')
    t.equal(forced.code, 0, forced.stderr)
    t.match(forced.stdout, /replaced the server "agentgit"/)
    t.notOk(servers(h, readFileSync(file, 'utf8'))['agentgit']?.['args']?.toString().includes('--repo'))

    const notOurs = agMcp(home, 'uninstall', h.name, '--name', 'other')
    t.equal(notOurs.code, 1)
    t.match(notOurs.stderr, /the server "other" does not start ag-mcp, so it is not ours/)

    const un = agMcp(home, 'uninstall', h.name)
    t.equal(un.code, 0, un.stderr)
    const final = readFileSync(file, 'utf8')
    t.equal(servers(h, final)['agentgit'], undefined, 'our entry is gone')
    t.same(parsed(h, final)[h.key], seedOthers[h.key], 'the others are as they were')
    for (const k of Object.keys(seedOthers)) t.same(parsed(h, final)[k], seedOthers[k], `${k} is as it was`)
  })
}

t.test('a host file that does not exist yet is created private (0600) and parses', async (t) => {
  const home = t.testdir({})
  const r = agMcp(
    home,
    'install',
    'cursor',
    '--write',
    '--upstream',
    'https://ag.example.com',
    '--token-env',
    'AGWP_TOKEN',
  )
  t.equal(r.code, 0, r.stderr)
  const file = join(home, '.cursor', 'mcp.json')
  t.equal(statSync(file).mode & 0o777, 0o600)
  t.match(JSON.parse(readFileSync(file, 'utf8')), {
    mcpServers: { agentgit: { args: ['--token-env', 'AGWP_TOKEN'].length ? Array : Array } },
  })
  t.match(
    (
      JSON.parse(readFileSync(file, 'utf8')) as { mcpServers: { agentgit: { args: string[] } } }
    ).mcpServers.agentgit.args.join(' '),
    /--upstream https:\/\/ag\.example\.com --token-env AGWP_TOKEN$/,
  )
})

t.test('bad input: a clear refusal, nothing written', async (t) => {
  const home = t.testdir({})
  const cases: [string[], RegExp][] = [
    [['install', 'cursr'], /unknown host "cursr" \(did you mean cursor\?\)/],
    [['install', 'cursor', '--upstream', 'https://a.example', '--token', TOKEN], /there is no --token/],
    [
      ['install', 'cursor', '--upstream', 'http://10.1.2.3:7420', '--token-env', 'T'],
      /plain http:\/\/ would send the token in clear/,
    ],
    [['install', 'cursor', '--upstream', 'https://a.example'], /name exactly one source of the token/],
    [['install', 'cursor', '--token-env', 'T'], /name the ag-server with --upstream URL/],
    [
      ['install', 'cursor', '--upstream', 'https://a.example', '--token-env', 'T', '--wrte'],
      /unknown argument --wrte \(did you mean --write\?\)/,
    ],
    [
      ['install', 'cursor', '--upstream', 'https://a.example', '--token-env', 'T', '--', '--x', TOKEN],
      /looks like a credential/,
    ],
    [
      ['install', 'cursor', '--upstream', 'https://a.example', '--token-env', 'T', '--name', 'a b'],
      /--name "a b" must be/,
    ],
  ]
  for (const [args, re] of cases) {
    const r = agMcp(home, ...args)
    t.equal(r.code, 2, args.join(' '))
    t.match(r.stderr, re, args.join(' '))
    t.notOk(r.stderr.includes(TOKEN), 'the token is not echoed')
  }
  const broken = join(home, '.cursor', 'mcp.json')
  mkdirSync(dirname(broken), { recursive: true })
  writeFileSync(broken, '{"mcpServers": {')
  const r = agMcp(home, 'install', 'cursor', '--write', '--upstream', 'https://a.example', '--token-env', 'T')
  t.equal(r.code, 1)
  t.match(r.stderr, /mcp\.json: it is not valid JSON/)
  t.equal(readFileSync(broken, 'utf8'), '{"mcpServers": {', 'a broken file is left alone')
})

t.test('install --local: the entry runs local mode on that repository, with no token at all', async (t) => {
  const home = t.testdir({ proj: {} })
  const r = agMcp(home, 'install', 'claude-code', '--local', 'proj', '--write')
  t.equal(r.code, 0, r.stderr)
  const entry = (
    JSON.parse(readFileSync(join(home, '.claude.json'), 'utf8')) as { mcpServers: Record<string, unknown> }
  ).mcpServers['agentgit']
  t.same(entry, {
    type: 'stdio',
    command: realpathSync(process.execPath),
    args: [realpathSync(BINARY), '--local', join(realpathSync(home), 'proj')],
  })
  const both = agMcp(home, 'install', 'cursor', '--local', '--upstream', 'https://a.example')
  t.equal(both.code, 2)
  t.match(both.stderr, /--local starts its own ag-server and token; drop --upstream/)
})

t.test('gemini and mcporter follow the variables that move their files', async (t) => {
  const home = t.testdir({ gem: {}, xdg: { mcporter: { 'mcporter.json': '{}\n' } }, emptyxdg: {} })
  const where = (env: Record<string, string>, host: string) => {
    const r = agMcpWith(env, home, 'install', host, '--local', '.')
    t.equal(r.code, 0, r.stderr)
    return /would add the server "agentgit" in (\S+):/.exec(r.stdout)?.[1]
  }
  t.equal(where({ GEMINI_CLI_HOME: join(home, 'gem') }, 'gemini'), join(home, 'gem', '.gemini', 'settings.json'))
  t.equal(where({}, 'gemini'), join(home, '.gemini', 'settings.json'))
  t.equal(where({ MCPORTER_CONFIG: join(home, 'm.json') }, 'mcporter'), join(home, 'm.json'))
  t.equal(
    where({ XDG_CONFIG_HOME: join(home, 'xdg') }, 'mcporter'),
    join(home, 'xdg', 'mcporter', 'mcporter.json'),
    'the XDG file, where mcporter has one',
  )
  t.equal(
    where({ XDG_CONFIG_HOME: join(home, 'emptyxdg') }, 'mcporter'),
    join(home, '.mcporter', 'mcporter.json'),
    'else ~/.mcporter, which mcporter still reads (a new XDG file would hide it)',
  )
})
