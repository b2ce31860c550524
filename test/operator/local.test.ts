// Local mode end to end, from outside: `ag-mcp --local REPO` on a fresh git repository, driven by
// the scripted agent; the proposal appears in that repository as refs/proposals/<id>, the person
// integrates it with `ag-mcp proposals`, and the private ag-server never outlives ag-mcp.
import t from 'tap'
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { runSession } from '../../examples/agents/session.ts'
import { GIT_IDENTITY } from '../helpers/git-identity.ts'
import { BINARY, startMcp } from '../helpers/mcp-process.ts'

function makeRepo(root: string): string {
  const repo = join(root, 'myproject')
  mkdirSync(repo)
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, env: { ...process.env, ...GIT_IDENTITY } })
  git('init', '-q', '-b', 'main')
  writeFileSync(join(repo, 'README.md'), '# my project\n')
  git('add', '.')
  git('commit', '-qm', 'initial')
  return repo
}

const env = (home: string) => ({ PATH: process.env['PATH'] ?? '', HOME: home, ...GIT_IDENTITY })
const git = (repo: string, ...args: string[]) =>
  execFileSync('git', args, { cwd: repo, encoding: 'utf8', env: { ...process.env, ...GIT_IDENTITY } }).trim()
const agMcp = (home: string, cwd: string, ...args: string[]) =>
  spawnSync(process.execPath, [BINARY, ...args], { cwd, env: env(home), encoding: 'utf8', timeout: 60_000 })

function serverPid(repo: string): number {
  return (JSON.parse(readFileSync(join(repo, '.ag', 'server', 'lock'), 'utf8')) as { pid: number }).pid
}

/** Resolves once the private ag-server has written its listen address, or after 600 polls. */
async function listening(repo: string): Promise<boolean> {
  for (let i = 0; i < 600; i++) {
    try {
      if ((JSON.parse(readFileSync(join(repo, '.ag', 'server', 'lock'), 'utf8')) as { listen?: string }).listen)
        return true
    } catch {
      // not yet written
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  return false
}

/** Resolves once `pid` is gone; fails the wait (not the clock) after 100 polls of 100 ms. */
async function gone(pid: number): Promise<boolean> {
  for (let i = 0; i < 100; i++) {
    try {
      process.kill(pid, 0)
    } catch {
      return true
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  return false
}

t.test('the agent proposes into your repository; you integrate with ag-mcp proposals', async (t) => {
  const home = t.testdir({})
  const repo = makeRepo(home)
  const lines: string[] = []
  const session = await runSession({
    command: [process.execPath, BINARY, '--local', repo, '--log-level', 'warn'],
    repo: 'myproject',
    env: env(home),
    print: (l) => lines.push(l),
  })
  t.equal(session.failures, 0, lines.join('\n'))
  const id = session.proposal as string
  t.ok(id, 'the agent got a proposal in')
  t.match(
    git(repo, 'log', '-1', '--format=%s', `refs/proposals/${id}`),
    /getting-started/,
    'the proposal is a commit in your repository',
  )
  t.equal(git(repo, 'status', '--porcelain'), '', 'your working tree is untouched (.ag/ is excluded from git)')
  t.match(readFileSync(join(repo, '.git', 'info', 'exclude'), 'utf8'), /^\/\.ag\/$/m)

  const list = agMcp(home, repo, 'proposals', 'list')
  t.equal(list.status, 0, list.stderr)
  t.match(list.stdout, new RegExp(`^${id}\\s+open\\s+Add a getting-started guide`, 'm'))
  const show = agMcp(home, repo, 'proposals', 'show', id)
  t.equal(show.status, 0, show.stderr)
  t.match(show.stdout, new RegExp(`^${id}: Add a getting-started guide\\n\\s+state\\s+open\\n`))
  t.match(show.stdout, new RegExp(`head\\s+[0-9a-f]{10} \\(refs/proposals/${id}\\)`))
  t.match(show.stdout, /can be integrated/)
  t.match(show.stdout, /docs\/getting-started\.md \| \d+ \+/, 'the diff stat of the proposal')
  const diff = agMcp(home, repo, 'proposals', 'diff', id)
  t.match(diff.stdout, /\+# Getting started/)
  const before = git(repo, 'rev-parse', 'main')
  const head = git(repo, 'rev-parse', `refs/proposals/${id}`)
  const integrate = agMcp(home, repo, 'proposals', 'integrate', id)
  t.equal(integrate.status, 0, integrate.stderr)
  t.match(integrate.stdout, new RegExp(`integrated ${id} into main`))
  t.not(git(repo, 'rev-parse', 'main'), before, 'main moved')
  t.equal(git(repo, 'merge-base', '--is-ancestor', head, 'main'), '', 'the proposal is in main')
  t.equal(git(repo, 'for-each-ref', 'refs/proposals/'), '', 'its refs/proposals/ ref is gone (integrated)')
  t.match(readFileSync(join(repo, 'docs', 'getting-started.md'), 'utf8'), /# Getting started/, 'the checkout followed')
  const after = agMcp(home, repo, 'proposals', 'list', '--all')
  t.match(after.stdout, new RegExp(`^${id}\\s+integrated`, 'm'))
  // The person's token can withdraw (AGWP asks for the propose scope); an integrated proposal stays.
  const late = agMcp(home, repo, 'proposals', 'reject', id, '--reason', 'too late')
  t.equal(late.status, 1, 'an integrated proposal cannot be rejected')
  t.match(late.stderr, /^ag-mcp proposals reject: conflict: proposal is integrated\n$/)

  // A second run of the agent, and this time the person says no.
  const again = await runSession({
    command: [process.execPath, BINARY, '--local', repo, '--log-level', 'warn'],
    repo: 'myproject',
    env: env(home),
    print: (l) => lines.push(l),
  })
  t.equal(again.failures, 0, lines.join('\n'))
  const second = again.proposal as string
  t.not(second, id, 'a new proposal')
  const reject = agMcp(home, repo, 'proposals', 'reject', second, '--reason', 'not now')
  t.equal(reject.status, 0, reject.stderr)
  t.equal(reject.stdout, `rejected ${second}: withdrawn; the agent sees it as withdrawn ("not now")\n`)
  t.match(agMcp(home, repo, 'proposals', 'show', second).stdout, /\n\s+state\s+withdrawn\n/)
  t.match(agMcp(home, repo, 'proposals', 'list').stdout, /^no open proposals/, 'nothing is left open')
  // Every token the agent's sessions and these commands used was revoked when they ended, and none
  // is left on disk: only the repository's admin token is still valid.
  const server = fileURLToPath(new URL('../../dist/ag-server.mjs', import.meta.url))
  const listed = spawnSync(process.execPath, [server, 'token', 'list', '--data', join(repo, '.ag', 'server')], {
    encoding: 'utf8',
  })
  const tokens = (JSON.parse(listed.stdout) as { tokens: { principal: string; revoked: boolean }[] }).tokens
  t.ok(tokens.length >= 8, `${tokens.length} tokens were minted`)
  t.same(
    tokens.filter((x) => !x.revoked).map((x) => x.principal),
    ['human:admin'],
    'only the admin token is still valid',
  )
  t.same(readdirSync(join(repo, '.ag', 'tokens')), [], 'no token file is left')
})

t.test('the private ag-server exits with ag-mcp: stdin closed, or ag-mcp killed', async (t) => {
  const home = t.testdir({})
  const repo = makeRepo(home)
  for (const end of ['stdin closes', 'SIGKILL'] as const) {
    const p = startMcp(t, { args: ['--local', repo], env: env(home), exactEnv: true })
    // The first start sets the repository up (several ag-server commands): slow on a busy machine.
    t.ok(await listening(repo), 'the private ag-server is up')
    const r = await p.request('tools/call', { name: 'server_info', arguments: {} })
    t.notOk(r.result?.['isError'])
    const pid = serverPid(repo)
    if (end === 'SIGKILL') {
      p.kill()
      await p.exited
    } else t.equal((await p.close()).code, 0)
    t.ok(await gone(pid), `${end}: the private ag-server (pid ${pid}) exited`)
  }
})

t.test('local mode refuses what cannot work, with the fix', async (t) => {
  // Outside the repository under test: a folder that no git repository contains.
  const home = mkdtempSync(join(tmpdir(), 'ag-mcp-local-'))
  t.teardown(() => rmSync(home, { recursive: true, force: true }))
  mkdirSync(join(home, 'plain'))
  const notRepo = agMcp(home, home, '--local', join(home, 'plain'))
  t.equal(notRepo.status, 2)
  t.match(notRepo.stderr, /is not inside a git repository: run git init there, or name one/)
  const both = agMcp(home, home, '--local', '--upstream', 'http://127.0.0.1:1')
  t.equal(both.status, 2)
  t.match(both.stderr, /--local starts its own ag-server and token; drop --upstream/)
  const none = agMcp(home, join(home, 'plain'), 'proposals', 'list')
  t.equal(none.status, 2)
  t.match(none.stderr, /not inside a git repository/)
})

t.test('started outside the repository (as mcporter does), the agit group still serves it', async (t) => {
  // mcporter starts a server in its config file's folder, Codex's thread-less listing elsewhere
  // again: the entry `install --local REPO` wrote must not depend on the working directory.
  // (in the system's temporary folder: t.testdir is inside this repository's work tree)
  const home = mkdtempSync(join(tmpdir(), 'ag-mcp-local-'))
  t.teardown(() => rmSync(home, { recursive: true, force: true }))
  mkdirSync(join(home, 'elsewhere'))
  const repo = makeRepo(home)
  const p = startMcp(t, { args: ['--local', repo], env: env(home), exactEnv: true, cwd: join(home, 'elsewhere') })
  const listed = await p.request('tools/list', {})
  const names = ((listed.result?.['tools'] ?? []) as { name: string }[]).map((x) => x.name)
  t.ok(names.includes('agit_get_status'), `agit tools listed (got ${names.length}: ${names.join(', ')})`)
  t.ok(names.includes('file_read'), 'and the AGWP ones')
  const status = await p.request('tools/call', {
    name: 'agit_log_step',
    arguments: { batch: [{ role: 'ai', category: 'intent', content: 'from elsewhere' }] },
  })
  t.notOk(status.result?.['isError'], JSON.stringify(status.result).slice(0, 300))
  t.ok(readdirSync(join(repo, '.agit')).length > 0, "the thought lands in the repository's .agit/")
  t.equal((await p.close()).code, 0)
})

t.test('a readme the agent was not shown whole is left as it is', async (t) => {
  // A readme over --max-output-bytes is shown cut, one with a hidden character cleaned: the
  // scripted agent (the README's first command on your repository) must not write that view back.
  for (const [name, content] of [
    ['long', `# long\n\n${'A line of a long readme.\n'.repeat(4000)}`],
    ['hidden', '# hidden\n\nThe family emoji 👨\u200d👩\u200d👧 joins with zero-width joiners.\n'],
  ] as const) {
    const home = t.testdir({})
    const repo = makeRepo(home)
    writeFileSync(join(repo, 'README.md'), content)
    git(repo, 'commit', '-qam', `${name} readme`)
    const lines: string[] = []
    const session = await runSession({
      command: [process.execPath, BINARY, '--local', repo, '--log-level', 'warn'],
      repo: 'myproject',
      env: env(home),
      print: (l) => lines.push(l),
    })
    t.equal(session.failures, 0, lines.join('\n'))
    const changed = git(repo, 'diff', '--name-only', 'main', `refs/proposals/${session.proposal}`)
    t.equal(changed, 'docs/getting-started.md', `${name}: only the guide is proposed, README.md untouched`)
    t.ok(
      lines.some((l) => /README\.md was not shown whole/.test(l)),
      `${name}: the agent says why`,
    )
  }
})
