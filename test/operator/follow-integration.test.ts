// Your branch follows what the private server integrated even when the server's branch no
// longer names it: a running session mirrors your branches into the server's repository
// whenever yours change (watchYourRefs), and a mirror delayed past the integration sets the
// server's branch back to your commit. CI saw it: "`efd592d0c1` - not something we can merge"
// after a commit made just before `ag-mcp proposals integrate`, because the branch's name
// brought your own commit. The integration is fetched by its id.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { followIntegration } from '../../operator/local/checkout.ts'
import { LocalError } from '../../operator/local/repo.ts'
import type { LocalState } from '../../operator/local/setup.ts'
import { initBorrowing, mirrorRefs } from '../../lib/mirror.ts'
import { GIT_IDENTITY } from '../helpers/git-identity.ts'
import { commitFiles, git, makeRepo } from '../helpers/local-mode.ts'

const ENV = { ...process.env, ...GIT_IDENTITY }

/** A repository, the private server's bare one borrowing its objects, and a merge the server made. */
function world(home: string, checkedOut: boolean) {
  const top = makeRepo(join(home, 'proj'), { 'README.md': '# p\n' }, 'trunk')
  const bare = join(home, 'bare.git')
  initBorrowing(bare, join(top, '.git', 'objects'), ENV)
  mirrorRefs(top, bare, 'trunk', ENV)
  const base = git(top, ['rev-parse', 'trunk'])
  // The agent's proposal: a commit only the server's repository holds.
  const blob = git(bare, ['--git-dir', bare, 'hash-object', '-w', '--stdin'], '# Guide\n')
  const docs = git(bare, ['--git-dir', bare, 'mktree'], `100644 blob ${blob}\tguide.md\n`)
  const readme = git(top, ['rev-parse', 'trunk:README.md'])
  const withDocs = git(
    bare,
    ['--git-dir', bare, 'mktree'],
    `100644 blob ${readme}\tREADME.md\n040000 tree ${docs}\tdocs\n`,
  )
  const proposal = git(bare, ['--git-dir', bare, 'commit-tree', withDocs, '-p', base], 'guide')
  // You committed meanwhile; the server merged the proposal onto your commit...
  commitFiles(top, { 'NOTES.md': 'mine\n' }, 'my own work')
  mirrorRefs(top, bare, 'trunk', ENV)
  const mine = git(top, ['rev-parse', 'trunk'])
  const merged = git(bare, ['--git-dir', bare, 'merge-tree', '--write-tree', mine, proposal])
  const merge = git(bare, ['--git-dir', bare, 'commit-tree', merged, '-p', mine, '-p', proposal], 'Integrate pr-1')
  git(bare, ['--git-dir', bare, 'update-ref', 'refs/heads/trunk', merge, mine])
  // ...and then a session's late mirror of your branches set the server's back to yours.
  mirrorRefs(top, bare, 'trunk', ENV)
  t.equal(git(bare, ['--git-dir', bare, 'rev-parse', 'refs/heads/trunk']), mine, "the server's branch is yours again")
  if (!checkedOut) git(top, ['checkout', '-q', '-b', 'elsewhere'])
  const s = { top, bare, repo: 'proj' } as LocalState
  return { s, top, mine, merge }
}

for (const checkedOut of [true, false])
  t.test(`the integration is followed by its id (${checkedOut ? 'checked out' : 'not checked out'})`, async (t) => {
    const { s, top, mine, merge } = world(t.testdir({}), checkedOut)
    followIntegration(s, 'pr-1', { target: 'trunk', commit: merge, previous_target_head: mine })
    t.equal(git(top, ['rev-parse', 'trunk']), merge, 'your branch is the merge')
    t.equal(git(top, ['rev-parse', 'trunk^1']), mine)
    if (checkedOut) {
      t.equal(readFileSync(join(top, 'docs', 'guide.md'), 'utf8'), '# Guide\n', 'the checkout followed')
      t.equal(git(top, ['status', '--porcelain']), '', 'and is clean')
    }
    t.equal(git(top, ['for-each-ref', 'refs/ag/']), '', 'the kept ref is gone once followed')
  })

t.test('a commit id that is not one is refused before git sees it', async (t) => {
  const { s, top, mine } = world(t.testdir({}), true)
  let thrown: unknown
  try {
    followIntegration(s, 'pr-1', { target: 'trunk', commit: '--upload-pack=touch x', previous_target_head: mine })
  } catch (e) {
    thrown = e
  }
  t.ok(thrown instanceof LocalError, 'a LocalError (a message for you, no stack)')
  t.match((thrown as Error).message, /answered "--upload-pack=touch x" as pr-1's integration commit/)
  t.equal(git(top, ['rev-parse', 'trunk']), mine, 'nothing moved')
})
