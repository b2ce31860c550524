// Operator input, refused at start with a message that names the flag and the fix (exit 2, no stack
// trace, nothing on stdout); and the one start-up line that says what a running ag-mcp serves.
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { BINARY, REPO_ROOT, startMcp } from '../helpers/mcp-process.ts'

const TOKEN = `agwp_${'Inp0t'.repeat(8)}`

function run(...args: string[]) {
  const r = spawnSync(process.execPath, [BINARY, ...args], {
    cwd: REPO_ROOT,
    input: '',
    encoding: 'utf8',
    env: { PATH: process.env['PATH'] ?? '' },
    timeout: 10_000,
  })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

t.test('every bad input: the flag, what is wrong, the fix', async (t) => {
  const dir = t.testdir({ folder: {} })
  const cases: [string[], RegExp][] = [
    [
      ['--write-path', '/abs/**'],
      /--write-path '\/abs\/\*\*' is absolute; paths are relative to the repository root \(e\.g\. --write-path 'docs\/\*\*'\)/,
    ],
    [['--write-path', '../x'], /--write-path '\.\.\/x' leaves the repository with '\.\.'; name paths inside it/],
    [['--write-path', 'docs/[a-'], /--write-path 'docs\/\[a-' is not a valid glob: the \[ at 6 is never closed/],
    // A list flag splits at commas, so '{a,b' arrives as '{a' and 'b'.
    [['--repo', '{a,b'], /--repo '\{a' is not a valid glob: a \{ is never closed \(e\.g\. --repo 'team-\*'\)/],
    [
      ['--allow', ''],
      /--allow is empty: name the groups to enable \(e\.g\. --allow read,workspace,propose, or --allow \+continuity to add one to the defaults\), or leave --allow out/,
    ],
    [['--token-file', join(dir, 'folder')], /--token-file .*folder is a directory; name the token file inside it/],
    [
      ['--log-file', '/nonexistent/dir/x.log'],
      /--log-file \/nonexistent\/dir\/x\.log: cannot open it for appending \(ENOENT\); create its folder/,
    ],
    [['--alow', 'read'], /unknown flag --alow \(did you mean --allow\?\)/],
    [['--upstrem', 'http://127.0.0.1:1'], /unknown flag --upstrem \(did you mean --upstream\?\)/],
    [['--write-pth', 'docs/**'], /unknown flag --write-pth \(did you mean --write-path\?\)/],
    [['--print-confg'], /unknown flag --print-confg \(did you mean --print-config\?\)/],
  ]
  for (const [args, re] of cases) {
    const r = run(...args)
    t.equal(r.code, 2, args.join(' '))
    t.match(r.stderr, re, args.join(' '))
    t.notMatch(r.stderr, /\n\s+at /, `${args.join(' ')}: no stack trace`)
    t.equal(r.stdout, '', 'nothing on stdout')
  }
  t.match(run('--help').stdout, /--print-config\s+Print the resolved configuration/, '--help lists --print-config')
})

t.test('the start-up line: version, groups, upstream origin, never the token', async (t) => {
  const dir = t.testdir({})
  const file = join(dir, 'token')
  writeFileSync(file, TOKEN)
  chmodSync(file, 0o600)
  // Outside any git work tree (t.testdir is inside the checkout), so the agit group is absent.
  const cwd = mkdtempSync(join(tmpdir(), 'ag-mcp-startup-'))
  t.teardown(() => rmSync(cwd, { recursive: true, force: true }))
  const p = startMcp(t, { args: ['--upstream', 'http://127.0.0.1:7420/agwp/v1', '--token-file', file], cwd })
  await p.request('server/discover', {})
  await p.close()
  t.match(
    p.stderr,
    /info ag-mcp \S+ serving MCP on stdio groups="core,coordinate,propose,read,workspace" upstream="http:\/\/127\.0\.0\.1:7420"/,
  )
  t.notOk(p.stderr.includes(TOKEN))
  const bare = startMcp(t, {})
  await bare.request('server/discover', {})
  await bare.close()
  // Upstream groups that are enabled with no upstream are named in a warning (a build that leaves
  // them out of the default set when there is no upstream has none to name).
  const enabled = /serving MCP on stdio groups="([^"]*)"/.exec(bare.stderr)?.[1]?.split(',') ?? []
  const idle = ['coordinate', 'propose', 'read', 'workspace'].filter((g) => enabled.includes(g))
  if (idle.length > 0)
    t.match(
      bare.stderr,
      `warn no --upstream: the ${idle.join(', ')} group(s) have no server to call; pass --upstream URL (the URL ag-server prints), or run ag-mcp --local`,
    )
  t.match(bare.stderr, /upstream="none"/)
})

t.test('the start-up line is written without any request, and after the first answer', async (t) => {
  // Nothing is sent: the line still comes (it waits at most a moment for a first request).
  const idle = startMcp(t, {})
  const line = await new Promise<string>((resolve) => {
    const look = (): void => {
      const m = /^.* info ag-mcp \S+ serving MCP on stdio .*$/m.exec(idle.stderr)
      if (m) resolve(m[0])
    }
    idle.child.stderr.on('data', look)
    look()
  })
  t.match(line, /groups="core/)
  await idle.close()
  // Closed at once, before any request: the line is written before the process exits.
  const gone = run()
  t.equal(gone.code, 0)
  t.match(gone.stderr, /serving MCP on stdio/)
  t.equal(gone.stderr.match(/serving MCP on stdio/g)?.length, 1, 'once')
})
