// The standalone executable (`npm run build:exe`), from outside: copied alone into a directory
// and run with a PATH that holds only that directory (and, for local mode, git), so no `node`
// can be found. Built once for the file: building one takes seconds.
import t from 'tap'
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { runSession } from '../../examples/agents/session.ts'
import { REPO_ROOT, startMcp } from '../helpers/mcp-process.ts'
import { roundTrip } from '../helpers/packaging.ts'
import { GIT_IDENTITY } from '../helpers/git-identity.ts'

const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }
const dir = t.testdir({})
const exe = join(dir, 'ag-mcp')
execFileSync(process.execPath, [join(REPO_ROOT, 'packaging', 'build-exe.mjs'), '--out', exe], {
  cwd: REPO_ROOT,
  stdio: 'pipe',
})
const noNode = (path: string) =>
  t.not(spawnSync('/bin/sh', ['-c', 'command -v node'], { env: { PATH: path } }).status, 0, 'no node is on this PATH')

t.test('the standalone executable serves MCP with no node on PATH', async (t) => {
  const env = { PATH: dir, HOME: dir }
  noNode(env.PATH)
  t.equal(spawnSync(exe, ['--version'], { env, encoding: 'utf8' }).stdout.trim(), `ag-mcp ${pkg.version}`)
  t.match(
    spawnSync(exe, ['--help'], { env, encoding: 'utf8' }).stdout,
    /--upstream URL\s+Base URL of the ag-server/,
    '--help works',
  )
  const p = startMcp(t, { command: [exe], env, exactEnv: true })
  t.same(await roundTrip(p), {
    versions: ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26'],
    serverInfo: 'ag-mcp',
  })
  p.assertValid(t)
  t.equal((await p.close()).code, 0)
})

t.test('local mode runs its embedded ag-server: the agent proposes, no node anywhere', async (t) => {
  // git, and nothing else, joins the executable on PATH: local mode needs it, not node.
  const tools = join(dir, 'tools')
  mkdirSync(tools)
  symlinkSync(execFileSync('/bin/sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim(), join(tools, 'git'))
  const env = { PATH: `${dir}:${tools}`, HOME: dir, ...GIT_IDENTITY }
  noNode(env.PATH)
  const repo = join(dir, 'myproject')
  mkdirSync(repo)
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, env, encoding: 'utf8' }).trim()
  git('init', '-q', '-b', 'main')
  writeFileSync(join(repo, 'README.md'), '# my project\n')
  git('add', '.')
  git('commit', '-qm', 'initial')
  const embedded = spawnSync(exe, ['ag-server', '--help'], { env, encoding: 'utf8' })
  t.match(
    embedded.stdout,
    /usage: ag-server <command>[\s\S]*\n\s+init <dir>\s/,
    '`ag-mcp ag-server` is the embedded ag-server CLI',
  )

  const lines: string[] = []
  const session = await runSession({
    command: [exe, '--local', repo, '--log-level', 'warn'],
    repo: 'myproject',
    env,
    print: (l) => lines.push(l),
  })
  t.equal(session.failures, 0, lines.join('\n'))
  const id = session.proposal as string
  t.ok(id, 'the agent got a proposal in')
  t.match(git('log', '-1', '--format=%s', `refs/proposals/${id}`), /getting-started/, 'a commit in your repository')
  const list = spawnSync(exe, ['proposals', 'list'], { cwd: repo, env, encoding: 'utf8' })
  t.equal(list.status, 0, list.stderr)
  t.match(list.stdout, new RegExp(`^${id}\\s+open\\s+`, 'm'), 'proposals list, through the embedded server')
})
