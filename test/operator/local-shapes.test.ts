// Local mode on every shape of repository a person has (issue 26, item 1), each through the real
// binary over stdio: `ag-mcp --local` in it, the agent writes and proposes, the work tree and
// index stay byte-identical until the person integrates with `ag-mcp proposals integrate`, the
// commits carry the agent's and the person's identities, and .ag/ stays under 10% of .git
// (the private server borrows the repository's objects instead of copying them).
//
// Each shape starts from a project of 800 small files, so .git is the size of a small real
// project (~200 KB) and .ag/'s fixed cost (the server's journal, a few KB) is measured against
// something. The 50,000-file repository is the start-up benchmark's (bench/local.bench.mjs);
// here a 5,000-file one, built with one fast-import, stands for "large".
import t, { type Test } from 'tap'
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import {
  NO_IDENTITY_ENV,
  agMcp,
  bytesUnder,
  call,
  commitFiles,
  fingerprint,
  git,
  gone,
  localSession,
  makeRepo,
  manyFiles,
  propose,
  refAppears,
  serverPid,
  whoMade,
} from '../helpers/local-mode.ts'
import { REPO_ROOT } from '../helpers/mcp-process.ts'
import type { McpProcess } from '../helpers/mcp-process.ts'

const PROJECT = { ...manyFiles(800), 'README.md': '# a project\n' }
const AGENT = 'ag-mcp (agent) <local@agent.agwp.invalid>'
const AG_SERVER = join(REPO_ROOT, 'dist', 'ag-server.mjs')

/**
 * .ag/ (at `home`) is under a fifth of the repository's .git (`common`): nothing was copied (a
 * copy is all of it). The tests' projects are small (a .git of 170 KB): a session's journal and
 * its few packs (each with a 1 KB index) are 8-12% of it.
 */
function small(t: Test, home: string, common: string): void {
  const ag = bytesUnder(join(home, '.ag'))
  const dotGit = bytesUnder(common)
  t.ok(ag > 0 && ag < dotGit / 5, `.ag/ is ${ag} bytes beside .git's ${dotGit} (${((100 * ag) / dotGit).toFixed(1)}%)`)
}

/** Ends the session and sees its private server (of the repository whose .ag/ is at `home`) go with it. */
async function end(t: Test, p: McpProcess, home: string): Promise<void> {
  const pid = serverPid(home)
  t.equal((await p.close()).code, 0, 'the session ends cleanly')
  t.ok(pid !== undefined && (await gone(pid)), 'the private server exits with the last session')
}

/** The person integrates `id` from `top`; returns what the command printed. */
function integrate(t: Test, home: string, top: string, id: string, env = {}): string {
  const r = agMcp(home, top, ['proposals', 'integrate', id], env)
  t.equal(r.status, 0, r.stderr)
  return r.stdout
}

/** Proposes `files` and waits for refs/proposals/<id> in `top`; the work tree must not have moved. */
async function proposeUntouched(
  t: Test,
  p: McpProcess,
  top: string,
  repo: string,
  files: Record<string, string>,
  o: { runId?: string } = {},
): Promise<{ id: string; head: string }> {
  const before = fingerprint(top)
  const id = await propose(p, repo, files, o)
  t.ok(await refAppears(top, `refs/proposals/${id}`), `${id} is in your repository as refs/proposals/${id}`)
  t.equal(fingerprint(top), before, 'the work tree, the index and git status are byte-identical')
  return { id, head: git(top, ['rev-parse', `refs/proposals/${id}`]) }
}

t.test('no commits yet: a clear message, and nothing left behind', async (t) => {
  const home = t.testdir({})
  const top = join(home, 'fresh')
  git(home, ['init', '-q', top])
  const exclude = readFileSync(join(top, '.git', 'info', 'exclude'), 'utf8')
  const r = agMcp(home, top, ['--local'])
  t.equal(r.status, 2)
  t.match(r.stderr, /has no commits yet: make a first commit \(git add \. && git commit -m "first commit"\)/)
  t.notMatch(r.stderr, /\n\s+at /, 'no stack trace')
  t.notOk(existsSync(join(top, '.ag')), 'no .ag/')
  t.equal(readFileSync(join(top, '.git', 'info', 'exclude'), 'utf8'), exclude, 'info/exclude unchanged')
})

t.test(
  'a default branch that is not main, a claimed task, your identity from git config: a merge in your name',
  async (t) => {
    const home = t.testdir({})
    const top = makeRepo(join(home, 'proj'), PROJECT, 'trunk')
    git(top, ['config', 'user.name', 'Repo Person'])
    git(top, ['config', 'user.email', 'repo@person.invalid'])
    const p = localSession(t, home, top, ['--agent-name', 'Claude', '--agent-email', 'claude@agent.invalid'])
    t.notOk((await call(p, 'server_info', {})).isError)
    const data = join(top, '.ag', 'server')
    const task = execFileSync(
      process.execPath,
      [AG_SERVER, 'task', 'add', '--repo', 'proj', '--title', 'Guide', '--data', data],
      {
        encoding: 'utf8',
      },
    ).trim()
    const claim = await call(p, 'task_claim', { repo: 'proj', task, ttl_s: 600 })
    t.notOk(claim.isError, claim.text)
    const runId = claim.structured['run_id'] as string
    const { id, head } = await proposeUntouched(t, p, top, 'proj', { 'docs/guide.md': '# Guide\n' }, { runId })
    t.same(whoMade(top, head), {
      author: 'Claude (agent) <claude@agent.invalid>',
      committer: 'Claude (agent) <claude@agent.invalid>',
      parents: 1,
    })
    t.match(git(top, ['log', '-1', '--format=%B', head]), new RegExp(`AGWP-Run: ${runId}`), 'the run is in the commit')
    // The person moved on meanwhile: integrating now takes a merge, in the person's name as git config gives it.
    commitFiles(top, { 'NOTES.md': 'mine\n' }, 'my own work')
    t.match(integrate(t, home, top, id, NO_IDENTITY_ENV), new RegExp(`^integrated ${id} into trunk \\(merge commit\\)`))
    t.same(whoMade(top, 'trunk'), {
      author: 'Repo Person <repo@person.invalid>',
      committer: 'Repo Person <repo@person.invalid>',
      parents: 2,
    })
    t.equal(git(top, ['rev-parse', 'trunk^2']), head, "the merge's second parent is the proposal")
    t.equal(readFileSync(join(top, 'docs', 'guide.md'), 'utf8'), '# Guide\n', 'the checkout followed')
    t.equal(git(top, ['status', '--porcelain']), '', 'and is clean')
    t.equal(git(top, ['for-each-ref', 'refs/proposals/']), '', 'the integrated proposal left refs/proposals/')
    small(t, top, join(top, '.git'))
    await end(t, p, top)
  },
)

t.test('a detached HEAD: the agent works on the branch, your checkout stays where it is', async (t) => {
  const home = t.testdir({})
  const top = makeRepo(join(home, 'proj'), PROJECT)
  git(top, ['checkout', '-q', '--detach'])
  const p = localSession(t, home, top)
  const { id, head } = await proposeUntouched(t, p, top, 'proj', { 'docs/a.md': 'a\n' })
  const before = fingerprint(top)
  t.match(integrate(t, home, top, id), new RegExp(`^integrated ${id} into main \\(fast-forward\\)`))
  t.equal(git(top, ['rev-parse', 'main']), head, 'main fast-forwarded to the proposal')
  t.same(whoMade(top, 'main'), { author: AGENT, committer: AGENT, parents: 1 }, "the agent's commit, as proposed")
  t.equal(fingerprint(top), before, 'the detached checkout was not touched')
  small(t, top, join(top, '.git'))
  await end(t, p, top)
})

t.test('a linked worktree: its own branch, the main work tree untouched', async (t) => {
  const home = t.testdir({})
  const main = makeRepo(join(home, 'proj'), PROJECT)
  const linked = join(home, 'proj-feature')
  git(main, ['worktree', 'add', '-q', '-b', 'feature', linked])
  const mainBefore = fingerprint(main)
  const p = localSession(t, home, linked)
  const ws = await call(p, 'workspace_create', { repo: 'proj-proj-feature' })
  t.equal(ws.structured['base_ref'], 'feature', "the linked worktree's branch is the agent's default")
  const { id, head } = await proposeUntouched(t, p, linked, 'proj-proj-feature', { 'docs/f.md': 'f\n' })
  t.match(integrate(t, home, linked, id), new RegExp(`^integrated ${id} into feature \\(fast-forward\\)`))
  t.equal(git(linked, ['rev-parse', 'HEAD']), head, 'the linked checkout fast-forwarded')
  t.same(whoMade(linked, 'HEAD'), { author: AGENT, committer: AGENT, parents: 1 })
  t.equal(readFileSync(join(linked, 'docs', 'f.md'), 'utf8'), 'f\n')
  t.equal(fingerprint(main), mainBefore, 'the main work tree was never touched')
  t.ok(existsSync(join(main, '.ag')) && !existsSync(join(linked, '.ag')), '.ag/ is in the main work tree, shared')
  small(t, main, join(main, '.git'))
  await end(t, p, main)
})

t.test('submodules: the superproject refuses writes into one; the submodule is a repository of its own', async (t) => {
  const home = t.testdir({})
  const lib = makeRepo(join(home, 'lib-src'), { ...manyFiles(800), 'lib.js': 'export const lib = 1\n' })
  const top = makeRepo(join(home, 'proj'), PROJECT)
  git(top, ['-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', lib, 'vendor/lib'])
  git(top, ['commit', '-qm', 'add the submodule'])
  const p = localSession(t, home, top)
  const ws = (await call(p, 'workspace_create', { repo: 'proj' })).structured['id']
  const into = await call(p, 'file_write', { repo: 'proj', workspace: ws, path: 'vendor/lib/x.js', content: 'x\n' })
  t.ok(into.isError)
  t.match(into.text, /'vendor\/lib' is a submodule \(commit [0-9a-f]{12}\): its files live in its own repository/)
  const over = await call(p, 'file_write', { repo: 'proj', workspace: ws, path: 'vendor/lib', content: 'x\n' })
  t.match(over.text, /'vendor\/lib' is a submodule/, 'nor can a file replace it')
  const read = await call(p, 'file_read', { repo: 'proj', path: 'vendor/lib' })
  t.match(read.text, /is a submodule \(commit [0-9a-f]{12}\)/)
  const { id } = await proposeUntouched(t, p, top, 'proj', { 'docs/s.md': 's\n' })
  t.match(integrate(t, home, top, id), /fast-forward/)
  t.same(whoMade(top, 'HEAD'), { author: AGENT, committer: AGENT, parents: 1 })
  await end(t, p, top)

  // In the submodule: its git directory is under the superproject's .git/modules.
  const sub = join(top, 'vendor', 'lib')
  const q = localSession(t, home, sub)
  const inner = await proposeUntouched(t, q, sub, 'lib', { 'lib.js': 'export const lib = 2\n' })
  t.equal(
    git(top, ['status', '--porcelain']),
    '',
    "the superproject sees no change: the submodule's .ag/ is excluded there",
  )
  t.match(integrate(t, home, sub, inner.id), /fast-forward/)
  t.same(whoMade(sub, 'HEAD'), { author: AGENT, committer: AGENT, parents: 1 })
  t.equal(readFileSync(join(sub, 'lib.js'), 'utf8'), 'export const lib = 2\n')
  small(t, sub, join(top, '.git', 'modules', 'vendor', 'lib'))
  await end(t, q, sub)
})

t.test('non-ASCII and case-only-differing names, read, written and integrated byte for byte', async (t) => {
  const home = t.testdir({})
  const names = {
    'Readme.md': 'one\n',
    'README.md': 'two\n',
    'docs/café.md': 'crème\n',
    '日本語/ファイル.txt': 'テキスト\n',
  }
  const top = makeRepo(join(home, 'proj'), { ...PROJECT, ...names })
  const p = localSession(t, home, top)
  for (const [path, content] of Object.entries(names)) {
    const r = await call(p, 'file_read', { repo: 'proj', path })
    t.equal(r.structured['content'], content, `${path} reads as itself`)
  }
  const written = { 'README.md': 'two, revised\n', 'docs/naïve — ü.md': 'ü\n', '日本語/新しい.txt': '新\n' }
  const { id, head } = await proposeUntouched(t, p, top, 'proj', written)
  const show = agMcp(home, top, ['proposals', 'show', id])
  t.match(show.stdout, /docs\/naïve — ü\.md/, 'show names the path as it is')
  integrate(t, home, top, id)
  t.equal(git(top, ['rev-parse', 'HEAD']), head)
  t.same(whoMade(top, 'HEAD'), { author: AGENT, committer: AGENT, parents: 1 })
  for (const [path, content] of Object.entries({ ...names, ...written }))
    t.equal(readFileSync(join(top, path), 'utf8'), content, `${path} is in your checkout, byte for byte`)
  small(t, top, join(top, '.git'))
  await end(t, p, top)
})

t.test('a large repository (5,000 files): read deep, write, propose, integrate', async (t) => {
  const home = t.testdir({})
  const top = makeRepo(join(home, 'big'), { ...manyFiles(5000), 'README.md': '# big\n' })
  const p = localSession(t, home, top)
  const deep = await call(p, 'file_read', { repo: 'big', path: 'src/d77/f4977.js' })
  t.equal(deep.structured['content'], 'export const v4977 = 4977\n')
  const { id } = await proposeUntouched(t, p, top, 'big', { 'src/d77/f4977.js': 'export const v4977 = -1\n' })
  integrate(t, home, top, id)
  t.same(whoMade(top, 'HEAD'), { author: AGENT, committer: AGENT, parents: 1 })
  t.equal(readFileSync(join(top, 'src', 'd77', 'f4977.js'), 'utf8'), 'export const v4977 = -1\n')
  small(t, top, join(top, '.git'))
  await end(t, p, top)
})

/** Resolves once the private server's `branch` is at `oid` (a bounded wait for the session's copy). */
async function mirrored(bare: string, branch: string, oid: string): Promise<boolean> {
  for (let i = 0; i < 200; i++) {
    if (git(bare, ['--git-dir', bare, 'rev-parse', `refs/heads/${branch}`]) === oid) return true
    await new Promise((r) => setTimeout(r, 50))
  }
  return false
}

t.test("git gc in your repository cannot break the private server's refs", async (t) => {
  const home = t.testdir({})
  const top = makeRepo(join(home, 'proj'), PROJECT)
  const first = git(top, ['rev-parse', 'HEAD'])
  commitFiles(top, { 'NOTES.md': 'soon dropped\n' }, 'a commit you will drop')
  const p = localSession(t, home, top)
  const ws = (await call(p, 'workspace_create', { repo: 'proj' })).structured['id'] as string
  t.notOk((await call(p, 'file_write', { repo: 'proj', workspace: ws, path: 'wip.md', content: 'wip\n' })).isError)
  const { id } = await proposeUntouched(t, p, top, 'proj', { 'docs/p.md': 'p\n' })
  t.ok(await refAppears(top, `refs/ag/proj/agwp/workspaces/${ws}`), 'the open workspace is kept in your repository')
  // You drop the commit both were made on, and prune everything unreachable at once.
  git(top, ['reset', '-q', '--hard', first])
  git(top, ['reflog', 'expire', '--expire=now', '--all'])
  git(top, ['gc', '-q', '--prune=now'])
  const bare = join(top, '.ag', 'server', 'repos', 'proj.git')
  t.ok(await mirrored(bare, 'main', first), "the server's main follows yours (the session watches your refs)")
  t.equal(
    git(home, ['--git-dir', bare, 'fsck', '--connectivity-only', '--no-dangling']),
    '',
    "every object the server's refs reach is there",
  )
  const status = await call(p, 'workspace_status', { repo: 'proj', workspace: ws, diff: true })
  t.notOk(status.isError, 'the open workspace still works')
  t.match(agMcp(home, top, ['proposals', 'show', id]).stdout, /docs\/p\.md \| 1 \+/, 'and the proposal shows')
  await end(t, p, top)
})
