// Git state per call: branch and HEAD come from the .git files (no process), the status is one
// process, and a call asks git at most once for each thing. Counted, never timed.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { GitProbe, gitProcesses, sameHead } from '../../../plugins/continuity/git.ts'
import { startTask } from '../../../plugins/continuity/lifecycle.ts'
import { taskStatus } from '../../../plugins/continuity/reports.ts'
import { buildResume } from '../../../plugins/continuity/resume.ts'
import { git, pack, refusal, repo } from './_pack.ts'

t.test('refs match git, from files, for branches, packed refs, detached HEAD and worktrees', async (t) => {
  const root = await repo(t)
  const before = gitProcesses()
  let refs = await new GitProbe(root).refs()
  t.same(refs, { available: true, topLevel: root, branch: 'main', oid: git(root, 'rev-parse', 'HEAD') })
  git(root, 'pack-refs', '--all')
  refs = await new GitProbe(root).refs()
  t.equal(refs.oid, git(root, 'rev-parse', 'HEAD'), 'packed-refs')
  git(root, 'checkout', '-q', '--detach')
  t.equal((await new GitProbe(join(root, 'src')).refs()).branch, 'detached', 'detached, from a subdirectory')
  git(root, 'checkout', '-q', 'main')
  const wt = `${root}-wt`
  git(root, 'worktree', 'add', '-q', '-b', 'side', wt)
  t.teardown(() => git(root, 'worktree', 'remove', '--force', wt))
  refs = await new GitProbe(wt).refs()
  t.same([refs.branch, refs.oid, refs.topLevel], ['side', git(root, 'rev-parse', 'HEAD'), wt], 'a linked worktree')
  t.equal(gitProcesses() - before, 0, 'no git process for any of it')
  const unborn = await repo(t, { git: false })
  git(unborn, 'init', '-q', '-b', 'trunk')
  t.same((await new GitProbe(unborn).refs()).oid, null, 'an unborn branch has no HEAD')
  const none = await new GitProbe('/').refs()
  t.equal(none.available, false)
})

t.test("short HEAD is git's own abbreviation; drift compares by prefix", async (t) => {
  const root = await repo(t)
  t.equal(await new GitProbe(root).short(), git(root, 'rev-parse', '--short', 'HEAD'))
  const full = git(root, 'rev-parse', 'HEAD')
  t.ok(sameHead(full.slice(0, 9), full))
  t.notOk(sameHead('deadbee', full))
})

t.test('processes per call: task_status none, load_context one, task_start at most one', async (t) => {
  const root = await repo(t)
  writeFileSync(join(root, 'src', 'a.ts'), 'changed\n')
  let g = gitProcesses()
  await startTask(pack(root), { title: 'count' })
  t.ok(gitProcesses() - g <= 1, 'task_start: the short HEAD once (memoised per commit)')
  g = gitProcesses()
  const s = await taskStatus(pack(root))
  t.equal(gitProcesses() - g, 0, 'task_status starts no git process')
  t.match(s.text, 'Drift: none')
  g = gitProcesses()
  const r = await buildResume(pack(root), { budget: 4000 })
  t.equal(gitProcesses() - g, 2, 'load_context with a tracked change: git status, and the diff stat')
  t.match(r.markdown, ' M src/a.ts')
  t.match(r.markdown, '- Current diff: 1 file changed, 1 insertion(+), 1 deletion(-)', "Agentpack's diff line")
  git(root, 'checkout', '--', 'src/a.ts')
  g = gitProcesses()
  const clean = await buildResume(pack(root), { budget: 4000 })
  t.equal(gitProcesses() - g, 1, 'load_context on a clean tree: one git status')
  t.match(clean.markdown, '- Current diff: none')
})

t.test('a cancelled signal stops a git read', async (t) => {
  const root = await repo(t)
  const ac = new AbortController()
  ac.abort()
  t.equal((await refusal(new GitProbe(root, ac.signal).status())).code, 'cancelled')
})
