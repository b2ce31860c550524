// `ag-mcp install|uninstall <host>` from outside, against temporary home directories: the dry run
// writes nothing, --write merges one entry and keeps everything else, a second install is refused
// without --force, uninstall removes only ours, and every written file parses.
import t from 'tap'
import { execFileSync, spawnSync } from 'node:child_process'
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { dirname, join } from 'node:path'
import { parse as parseJsonc } from 'jsonc-parser'
import type { ParseError } from 'jsonc-parser'
import { parse as parseToml } from 'smol-toml'
import { GIT_IDENTITY } from '../helpers/git-identity.ts'
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

function agMcp(cwd: string, ...args: string[]) {
  return agMcpWith({}, cwd, ...args)
}

function agMcpWith(env: Record<string, string>, cwd: string, ...args: string[]) {
  // HOME is the test's directory: the one holding a repository, or the repository's parent.
  const home = existsSync(join(cwd, '.git')) ? dirname(cwd) : cwd
  const r = spawnSync(process.execPath, [BINARY, ...args], {
    cwd,
    encoding: 'utf8',
    env: { PATH: process.env['PATH'] ?? '', HOME: home, ...GIT_IDENTITY, ...env },
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

/** A git repository with one commit, in `home`. */
function repoIn(home: string, name: string): string {
  const dir = join(home, name)
  mkdirSync(dir, { recursive: true })
  const git = (...a: string[]) => execFileSync('git', a, { cwd: dir, env: { ...process.env, ...GIT_IDENTITY } })
  git('init', '-q', '-b', 'main')
  writeFileSync(join(dir, 'readme.md'), '# x\n')
  git('add', '.')
  git('commit', '-qm', 'initial')
  return realpathSync(dir)
}

const status = (dir: string) =>
  execFileSync('git', ['status', '--porcelain'], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, ...GIT_IDENTITY },
  })

t.test('install --local: the project file of that repository, an entry named after it, no token', async (t) => {
  const home = t.testdir({})
  const repo = repoIn(home, 'proj')
  const before = status(repo)
  const r = agMcp(repo, 'install', 'claude-code', '--local', '--write')
  t.equal(r.code, 0, r.stderr)
  t.match(r.stdout, `added the server "agentgit-proj" in ${join(repo, '.mcp.json')}`)
  t.match(
    r.stdout,
    /Project scope: only this repository's Claude Code sessions see it\. The file is in your work tree, written by you/,
  )
  t.match(r.stdout, /--scope user/, 'the user-scope alternative is offered')
  t.notOk(existsSync(join(home, '.claude.json')), 'no user file: other projects do not get this repository')
  t.same(JSON.parse(readFileSync(join(repo, '.mcp.json'), 'utf8')), {
    mcpServers: {
      'agentgit-proj': {
        type: 'stdio',
        command: realpathSync(process.execPath),
        args: [realpathSync(BINARY), '--local', repo],
      },
    },
  })
  t.equal(status(repo), before, 'git status does not show it: it is listed in .git/info/exclude')
  // Each host's own project file, where it has one.
  for (const [host, file] of [
    ['cursor', '.cursor/mcp.json'],
    ['vscode', '.vscode/mcp.json'],
    ['codex', '.codex/config.toml'],
  ] as const) {
    const dry = agMcp(repo, 'install', host, '--local')
    t.equal(dry.code, 0, dry.stderr)
    t.match(dry.stdout, `would add the server "agentgit-proj" in ${join(repo, file)}`, host)
    t.notOk(existsSync(join(repo, file)), `${host}: the dry run wrote nothing`)
  }
  const un = agMcp(repo, 'uninstall', 'claude-code', '--local')
  t.equal(un.code, 0, un.stderr)
  t.notOk(existsSync(join(repo, '.mcp.json')), 'the file it created and held only our entry is gone')
  t.notMatch(readFileSync(join(repo, '.git', 'info', 'exclude'), 'utf8'), /mcp\.json|ag-mcp/, 'and its exclude line')
  const both = agMcp(home, 'install', 'cursor', '--local', 'proj', '--upstream', 'https://a.example')
  t.equal(both.code, 2)
  t.match(both.stderr, /--local starts its own ag-server and token; drop --upstream/)
})

t.test('install --local --scope user: one entry per repository, no collision', async (t) => {
  const home = t.testdir({})
  for (const name of ['one', 'two']) {
    const r = agMcp(home, 'install', 'claude-code', '--local', repoIn(home, name), '--scope', 'user', '--write')
    t.equal(r.code, 0, r.stderr)
    t.match(r.stdout, /User scope: every Claude Code project sees this entry/)
  }
  const servers = (
    JSON.parse(readFileSync(join(home, '.claude.json'), 'utf8')) as {
      mcpServers: Record<string, { args: string[] }>
    }
  ).mcpServers
  t.same(Object.keys(servers).sort(), ['agentgit-one', 'agentgit-two'])
  t.equal(servers['agentgit-two']?.args.at(-1), join(realpathSync(home), 'two'))
  const desktop = agMcp(home, 'install', 'claude-desktop', '--local', 'one', '--scope', 'project')
  t.equal(desktop.code, 2)
  t.match(desktop.stderr, /Claude Desktop has no project-scope file; use --scope user/)
})

t.test('a tracked project file is not edited without --force', async (t) => {
  const home = t.testdir({})
  const repo = repoIn(home, 'team')
  const shared = '{\n  "mcpServers": {}\n}\n'
  writeFileSync(join(repo, '.mcp.json'), shared)
  execFileSync('git', ['add', '.mcp.json'], { cwd: repo })
  execFileSync('git', ['commit', '-qm', 'team servers'], { cwd: repo, env: { ...process.env, ...GIT_IDENTITY } })
  const r = agMcp(repo, 'install', 'claude-code', '--local', '--write')
  t.equal(r.code, 1)
  t.match(
    r.stderr,
    /\.mcp\.json is tracked by git: adding the entry would change a tracked file.*use --scope user, or pass --force/,
  )
  t.equal(readFileSync(join(repo, '.mcp.json'), 'utf8'), shared, 'nothing written')
})

t.test('every flag after -- is checked by ag-mcp itself, and the token file too', async (t) => {
  const home = t.testdir({ 'agent.token': TOKEN })
  const repo = repoIn(home, 'proj')
  /** What ag-mcp itself says to these flags (its stderr without the `ag-mcp: ` prefix). */
  const says = (...args: string[]) =>
    agMcp(home, ...args)
      .stderr.replace(/^ag-mcp: /, '')
      .trim()
  const cases: [string[], string][] = [
    [['install', 'cursor', '--local', repo, '--', '--allow', 'agit,bogus'], says('--allow', 'agit,bogus')],
    [['install', 'cursor', '--local', repo, '--', '--alow', 'agit'], says('--alow', 'agit')],
    [
      ['install', 'cursor', '--upstream', 'https://a.example', '--token-file', 'missing.token'],
      says('--upstream', 'https://a.example', '--token-file', join(realpathSync(home), 'missing.token')),
    ],
    [
      ['install', 'cursor', '--upstream', 'https://a.example', '--token-file', 'agent.token', '--', '--allow', 'admin'],
      says('--allow', 'admin'),
    ],
  ]
  for (const [args, message] of cases) {
    t.ok(message.length > 20, `ag-mcp refuses: ${message}`)
    const [verb, host, ...tail] = args
    const r = agMcp(home, verb as string, host as string, '--write', ...tail)
    t.equal(r.code, 2, args.join(' '))
    t.ok(r.stderr.includes(message), `${args.join(' ')}: ${r.stderr}`)
    t.notOk(existsSync(join(home, '.cursor')) || existsSync(join(repo, '.cursor')), 'nothing was written')
  }
  // A token file ag-mcp only warns about: installed, and the warning said.
  const loose = agMcp(home, 'install', 'cursor', '--upstream', 'https://a.example', '--token-file', 'agent.token')
  t.equal(loose.code, 0, loose.stderr)
  t.match(loose.stdout, /Note: ag-mcp will warn: token file is readable by group or others/)
})

t.test('agit init: the dry run writes nothing, hooks included; --write writes the entry install writes', async (t) => {
  const home = t.testdir({})
  const repo = repoIn(home, 'proj')
  const hooks = join(repo, '.git', 'hooks')
  const snapshot = () => [
    status(repo),
    readFileSync(join(repo, '.git', 'info', 'exclude'), 'utf8'),
    readdirSync(hooks).sort().join(','),
  ]
  const before = snapshot()
  const dry = agMcp(repo, 'agit', 'init')
  t.equal(dry.code, 0, dry.stderr)
  t.match(dry.stdout, /hook post-commit: would install/)
  t.match(dry.stdout, /\.mcp\.json: would create \(server "agentgit-proj"\)/)
  t.match(dry.stdout, /dry run: nothing was written/)
  t.same(snapshot(), before, 'no hook, no .agit/, no exclude line, no file')
  t.notOk(existsSync(join(repo, '.agit')))
  const w = agMcp(repo, 'agit', 'init', '--write')
  t.equal(w.code, 0, w.stderr)
  t.ok(existsSync(join(hooks, 'post-commit')), 'now the hooks')
  const written = JSON.parse(readFileSync(join(repo, '.mcp.json'), 'utf8'))
  rmSync(join(repo, '.mcp.json'))
  t.equal(agMcp(repo, 'install', 'claude-code', '--local', '--write').code, 0)
  t.same(JSON.parse(readFileSync(join(repo, '.mcp.json'), 'utf8')), written, 'one entry: the same name and command')
})

t.test('gemini and mcporter follow the variables that move their files', async (t) => {
  const home = t.testdir({ gem: {}, xdg: { mcporter: { 'mcporter.json': '{}\n' } }, emptyxdg: {} })
  const where = (env: Record<string, string>, host: string) => {
    const r = agMcpWith(env, home, 'install', host, '--local', '.', '--scope', 'user')
    t.equal(r.code, 0, r.stderr)
    return /would add the server "agentgit[^"]*" in (\S+):/.exec(r.stdout)?.[1]
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
