// Start-up, from outside: every refused configuration exits 2 with a message naming the fix
// and never starts serving; the informational flags print and exit; the token stays secret.
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { chmodSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { BINARY, REPO_ROOT, startMcp } from '../helpers/mcp-process.ts'

const TOKEN = 'agwp_' + 'St4rt'.repeat(8)

function run(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [BINARY, ...args], {
    cwd: REPO_ROOT,
    input: '',
    encoding: 'utf8',
    env: { PATH: process.env['PATH'] ?? '', ...env },
    timeout: 10_000,
  })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

t.test('refused configurations: exit 2, a reason and the fix, nothing on stdout', async (t) => {
  const dir = t.testdir({ 'bad.json': JSON.stringify({ token: TOKEN }) })
  const cases: [string[], RegExp][] = [
    [
      ['--allow', 'read,admin'],
      /--allow admin is refused: there is no admin group: policy, roles and credentials are deliberately not reachable through MCP/,
    ],
    [
      ['--allow', 'read,integrate'],
      /--allow integrate is refused: the integrate group can only be switched on with --enable-integrate/,
    ],
    [['--allow', 'read,wrokspace'], /unknown group "wrokspace"; valid groups: .*workspace/],
    [['--enable-review'], /--enable-review names no group that needs its own flag/],
    [['--token', TOKEN], /there is no --token flag/],
    [
      ['--upstream', 'http://10.1.2.3:7420'],
      /refused: plain http:\/\/ would send the token in clear to a non-loopback host; use https:\/\/, or pass --allow-insecure-http/,
    ],
    [['--token-file', join(dir, 'missing')], /--token-file .*missing: cannot read it \(ENOENT\)/],
    [
      ['--token-env', 'AG_MCP_TEST_NO_SUCH_VAR'],
      /--token-env AG_MCP_TEST_NO_SUCH_VAR: the variable is not set or empty/,
    ],
    [['--config', join(dir, 'bad.json')], /key "token" is refused/],
    [['--max-output-bytes', '10'], /--max-output-bytes must be an integer of at least 1024/],
  ]
  for (const [args, re] of cases) {
    const r = run(args)
    t.equal(r.code, 2, `${args.join(' ')} exits 2`)
    t.match(r.stderr, re, args.join(' '))
    t.equal(r.stdout, '', 'stdout stays empty')
    t.notOk(r.stderr.includes(TOKEN) || r.stdout.includes(TOKEN), 'the token value is not echoed')
  }
})

t.test('--help lists every flag from the one table, with the groups; --version prints the version', async (t) => {
  const help = run(['--help'])
  t.equal(help.code, 0)
  for (const flag of [
    '--upstream',
    '--token-file',
    '--token-env',
    '--allow',
    '--repo',
    '--write-path',
    '--require-lease',
    '--max-output-bytes',
    '--rate-limit',
    '--enable-integrate',
  ]) {
    t.match(help.stdout, flag)
  }
  t.match(help.stdout, /AG_MCP_MAX_OUTPUT_BYTES/)
  t.match(help.stdout, /integrate\s+flag-only\s+proposal_integrate/)
  const version = run(['--version'])
  const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }
  t.equal(version.stdout.trim(), `ag-mcp ${pkg.version}`)
})

t.test('--print-config shows the resolved configuration and never the token', async (t) => {
  const dir = t.testdir({})
  const file = join(dir, 'token')
  writeFileSync(file, TOKEN)
  chmodSync(file, 0o600)
  const p = run(
    [
      '--upstream',
      'http://127.0.0.1:9',
      '--token-file',
      file,
      '--repo',
      'team-*',
      '--max-output-bytes',
      '4096',
      '--print-config',
    ],
    {
      AG_MCP_PAGE_SIZE: '7',
    },
  )
  t.equal(p.code, 0)
  const cfg = JSON.parse(p.stdout) as Record<string, unknown>
  t.same(cfg['repo'], ['team-*'])
  t.equal(cfg['maxOutputBytes'], 4096)
  t.equal(cfg['pageSize'], 7, 'environment variables set flags')
  // Run inside this repository's checkout (a git work tree): agit is on beside the AGWP groups.
  t.same(cfg['enabledGroups'], ['core', 'agit', 'coordinate', 'propose', 'read', 'workspace'])
  t.notOk(p.stdout.includes(TOKEN))
})

t.test(
  'a token file readable by others is used, with a warning; --log-file gets the same scrubbed lines',
  async (t) => {
    const dir = t.testdir({})
    const file = join(dir, 'token')
    writeFileSync(file, `${TOKEN}\n`)
    chmodSync(file, 0o644)
    const logFile = join(dir, 'ag-mcp.log')
    const p = startMcp(t, { args: ['--token-file', file, '--log-file', logFile, '--log-level', 'debug'] })
    const r = await p.request('tools/call', { name: 'server_info', arguments: {} })
    t.equal(r.result?.['isError'], undefined)
    t.equal((await p.close()).code, 0)
    t.match(p.stderr, /warn token file is readable by group or others; chmod 600 it/)
    const logged = readFileSync(logFile, 'utf8')
    t.match(logged, /tool call tool="server_info" group="core"/)
    t.match(logged, /token file is readable/)
    t.notOk(logged.includes(TOKEN) || p.stderr.includes(TOKEN) || p.lines.join('\n').includes(TOKEN))
  },
)

t.test('--token-env: the token comes from the environment and goes nowhere else', async (t) => {
  const p = startMcp(t, { args: ['--token-env', 'AGWP_TOKEN', '--log-level', 'debug'], env: { AGWP_TOKEN: TOKEN } })
  const r = await p.request('tools/call', { name: 'server_info', arguments: {} })
  t.notOk(r.result?.['isError'])
  t.equal((await p.close()).code, 0)
  t.notOk(p.stderr.includes(TOKEN) || p.lines.join('\n').includes(TOKEN))
})

t.test('a token typed into the wrong flag is never echoed (start-up errors, --print-config)', async (t) => {
  const dir = t.testdir({})
  // one token ag-server would mint, one of no known shape: only the comparison with the
  // configured token can recognise the second
  for (const secret of [TOKEN, 'Sup3r-Secret-Value-8c1f0e77d2a94b']) {
    const file = join(dir, `token-${secret.length}`)
    writeFileSync(file, `${secret}\n`)
    chmodSync(file, 0o600)
    const cases: [string, string[], Record<string, string>, number][] = [
      ['--upstream', ['--token-file', file, '--upstream', secret], {}, 2],
      ['--upstream=', ['--token-file', file, `--upstream=${secret}`], {}, 2],
      ['--log-level', ['--token-file', file, '--log-level', secret], {}, 2],
      ['a positional argument', ['--token-file', file, secret], {}, 2],
      ['AG_MCP_UPSTREAM', ['--token-file', file], { AG_MCP_UPSTREAM: secret }, 2],
      [
        '--token-env with the token in the environment',
        ['--token-env', 'MY_TOKEN', '--upstream', secret],
        { MY_TOKEN: secret },
        2,
      ],
      ['--token-env given the token itself', ['--token-env', secret], {}, 2],
      ['--repo, --print-config', ['--token-file', file, '--repo', secret, '--print-config'], {}, 0],
      [
        '--write-path, --print-config',
        ['--token-file', file, '--write-path', `docs/${secret}/*`, '--print-config'],
        {},
        0,
      ],
      ['AG_MCP_REPO, --print-config', ['--token-file', file, '--print-config'], { AG_MCP_REPO: secret }, 0],
    ]
    for (const [what, args, env, code] of cases) {
      const r = run(args, env)
      t.equal(r.code, code, `${what}: exits ${code}${r.code !== code ? `: ${r.stderr}` : ''}`)
      const out = r.stdout + r.stderr
      t.notOk(out.includes(secret), `${what}: the token is not echoed`)
      t.notOk(out.includes(secret.slice(6, 18)), `${what}: nor a part of it`)
      if (code === 2) t.match(r.stderr, /^ag-mcp: /, `${what}: still says what is wrong`)
    }
  }
})
