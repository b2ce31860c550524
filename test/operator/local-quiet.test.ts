// Quiet, honest local sessions (issue 26, frictions 10 and 11), through the real binaries: a
// session that only initializes and closes (what a host's health check does) warns about nothing,
// and the scripted agent works on a repository it did not make (a lower-case readme.md, a docs/
// guide already there), with an exit code that says what its last line says.
import t from 'tap'
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { GIT_IDENTITY } from '../helpers/git-identity.ts'
import { startMcp } from '../helpers/mcp-process.ts'

const AGENT = fileURLToPath(new URL('../../dist/scripted-agent.mjs', import.meta.url))
const home = mkdtempSync(join(tmpdir(), 'ag-mcp-local-quiet-'))
t.teardown(() => rmSync(home, { recursive: true, force: true }))
const env = { PATH: process.env['PATH'] ?? '', HOME: home, ...GIT_IDENTITY }

function makeRepo(name: string): string {
  const repo = join(home, name)
  mkdirSync(join(repo, 'docs'), { recursive: true })
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, env })
  git('init', '-q', '-b', 'trunk')
  writeFileSync(join(repo, 'readme.md'), '# a project\n')
  writeFileSync(join(repo, 'docs', 'getting-started.md'), '# Already here\n')
  git('add', '.')
  git('commit', '-qm', 'initial')
  return repo
}

const repo = makeRepo('project')
const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, env, encoding: 'utf8' }).trim()

t.test('a session that only initializes and closes warns about nothing', async (t) => {
  // Three in a row: main warned in most of them (its start-up check raced the revoke at the end).
  for (let i = 1; i <= 3; i++) {
    const p = startMcp(t, { args: ['--local', repo], env, exactEnv: true, cwd: repo })
    const init = await p.initialize('2025-06-18')
    t.ok(init.result, `session ${i} initialized`)
    const { code } = await p.close()
    t.equal(code, 0)
    t.notMatch(p.stderr, / (warn|error) /, `session ${i} logged no warning: ${p.stderr}`)
  }
})

t.test('the scripted agent works on any repository; its exit code matches its last line', async (t) => {
  const run = (extra: Record<string, string> = {}) =>
    spawnSync(process.execPath, [AGENT, '--local', repo], {
      cwd: repo,
      env: { ...env, ...extra },
      encoding: 'utf8',
      timeout: 120_000,
    })
  const ok = run()
  const last = ok.stdout.trimEnd().split('\n').at(-1) ?? ''
  t.equal(ok.status, 0, ok.stdout + ok.stderr)
  t.match(last, /^done: proposed (pr-\d+); every call succeeded$/)
  const id = /proposed (pr-\d+)/.exec(last)?.[1] as string
  t.same(
    git('show', '--name-only', '--format=', `refs/proposals/${id}`).split('\n').sort(),
    ['docs/getting-started-2.md', 'readme.md'],
    'it changed the readme it read and added a guide beside the one there; no README.md',
  )
  t.notMatch(ok.stdout, /✗/, 'no call failed')
  // A session whose writes ag-mcp refuses: it says so last, and exits 1.
  const refused = run({ AG_MCP_WRITE_PATH: 'nothing/**' })
  t.equal(refused.status, 1)
  t.match(
    refused.stdout.trimEnd().split('\n').at(-1),
    /^failed: \d+ call\(s\) failed \(file_write, .*no proposal was made$/,
  )
})
