// The CLI frictions of issue 28, tried as a new user would, on the built binaries: help answers
// with exit 0 wherever it is asked for, a slip gets the nearest name, and a usage error exits 2
// with the fix. CLI_DIST=<dir> points the test at another build (main's fails it).
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const DIST = process.env['CLI_DIST'] ?? fileURLToPath(new URL('../../dist', import.meta.url))
// A directory outside any repository and with no config file: a command that ran would show it.
const CWD = mkdtempSync(join(tmpdir(), 'ag-cli-help-'))
t.teardown(() => rmSync(CWD, { recursive: true, force: true }))

function run(binary: 'ag-mcp' | 'ag-server', ...args: string[]) {
  const r = spawnSync(process.execPath, [join(DIST, `${binary}.mjs`), ...args], {
    cwd: CWD,
    encoding: 'utf8',
    env: { PATH: process.env['PATH'] ?? '', HOME: CWD },
    input: '',
    timeout: 20_000,
  })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

t.test('--help and help <cmd> print help and exit 0', async (t) => {
  const cases: [binary: 'ag-mcp' | 'ag-server', args: string[], help: RegExp][] = [
    ['ag-mcp', ['help'], /usage: ag-mcp/],
    ['ag-mcp', ['install', '--help'], /usage: ag-mcp install </],
    ['ag-mcp', ['proposals', '--help'], /usage: ag-mcp proposals list/],
    ['ag-mcp', ['config', '--help'], /usage: ag-mcp config <command>[\s\S]*init/],
    ['ag-mcp', ['help', 'config', 'init'], /usage: ag-mcp config init[\s\S]*--out PATH/],
    ['ag-mcp', ['doctor', '--help'], /usage: ag-mcp doctor\b/],
    ['ag-mcp', ['tools', '--help'], /usage: ag-mcp tools\b/],
    ['ag-mcp', ['agit', '--help'], /usage: ag-mcp agit <command>/],
    ['ag-mcp', ['continuity', '--help'], /Usage: ag-mcp continuity/],
    ['ag-mcp', ['agit', 'help'], /usage: ag-mcp agit <command>/],
    ['ag-mcp', ['continuity', 'help'], /Usage: ag-mcp continuity/],
    ['ag-mcp', ['help', 'agit'], /usage: ag-mcp agit <command>/],
    ['ag-server', ['--help'], /usage: ag-server <command>[\s\S]*serve/],
    ['ag-server', ['help', 'serve'], /usage: ag-server serve[\s\S]*--listen/],
    ['ag-server', ['token', 'mint', '--help'], /usage: ag-server token mint[\s\S]*--scopes/],
  ]
  for (const [binary, args, help] of cases) {
    const r = run(binary, ...args)
    t.equal(r.code, 0, `${binary} ${args.join(' ')} exits 0`)
    t.match(r.stdout, help, `${binary} ${args.join(' ')} prints its help`)
  }
  // doctor and tools would print their checks and tool list had they run instead.
  t.notMatch(run('ag-mcp', 'doctor', '--help').stdout, /✓|✗|FAIL|ok /, 'doctor --help runs no check')
})

t.test('a slip gets the nearest name, and exit 2', async (t) => {
  const cases: [binary: 'ag-mcp' | 'ag-server', args: string[], message: RegExp][] = [
    ['ag-mcp', ['proposal', 'list'], /unknown command "proposal" \(did you mean proposals\?\)/],
    ['ag-mcp', ['--locl'], /unknown flag --locl \(did you mean --local\?\)/],
    ['ag-mcp', ['config', 'int'], /unknown command "config int" \(did you mean config init\?\)/],
    ['ag-mcp', ['local', 'status', '--repo-dri', 'x'], /unknown flag --repo-dri \(did you mean --repo-dir\?\)/],
    ['ag-server', ['srve'], /unknown command "srve" \(did you mean serve\?\)/],
    ['ag-server', ['serve', '--prot', '7420'], /unknown flag --prot \(--port\?\): ag-server takes --listen HOST:PORT/],
    // A plugin's commands, declared in its definePlugin: lib/cli names the nearest, not the plugin.
    [
      'ag-mcp',
      ['agit', 'stauts'],
      /^ag-mcp: unknown command "agit stauts" \(did you mean agit status\?\); ag-mcp help agit lists/,
    ],
    ['ag-mcp', ['agit', '--json', 'serch', 'x'], /unknown command "agit serch" \(did you mean agit search\?\)/],
    ['ag-mcp', ['agit', 'status', '--jsno'], /unknown flag --jsno \(did you mean --json\?\)/],
    [
      'ag-mcp',
      ['continuity', 'resum'],
      /^ag-mcp: unknown command "continuity resum" \(did you mean continuity resume\?\)/,
    ],
    [
      'ag-mcp',
      ['continuity', '--root', '.', 'task', 'strat', 'x'],
      /unknown command "continuity task strat" \(did you mean continuity task start\?\)/,
    ],
    ['ag-mcp', ['continuity', 'task'], /continuity task needs one of: start, status, list/],
    ['ag-mcp', ['continuity'], /name a command/],
  ]
  for (const [binary, args, message] of cases) {
    const r = run(binary, ...args)
    t.equal(r.code, 2, `${binary} ${args.join(' ')} exits 2`)
    t.match(r.stderr, message, `${binary} ${args.join(' ')} names the nearest`)
  }
})

t.test('--version prints the program name and its version, alike for both binaries', async (t) => {
  for (const binary of ['ag-mcp', 'ag-server'] as const) {
    const r = run(binary, '--version')
    t.equal(r.code, 0, `${binary} --version exits 0`)
    t.match(
      r.stdout,
      new RegExp(`^${binary} \\d+\\.\\d+\\.\\d+\\S*\\n$`),
      `${binary} --version says ${binary} <version>`,
    )
  }
})
