// `ag-mcp proposals integrate` in the person's name (issue 26, item 3; friction 3): a proposal on
// the branch's tip fast-forwards (it made a merge commit), merges and squashes are by the person
// as git resolves them (they were by human:owner), a refused strategy names the ones that would
// work, an unknown identity is refused with the fix, and a refusal over uncommitted changes
// names the files. Integrated and rejected proposals leave refs/proposals/.
import t from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import {
  NO_IDENTITY_ENV,
  agMcp,
  commitFiles,
  git,
  localSession,
  makeRepo,
  manyFiles,
  propose,
  refAppears,
  whoMade,
} from '../helpers/local-mode.ts'

const AGENT = 'ag-mcp (agent) <local@agent.agwp.invalid>'
const PERSON = 'Test Person <person@test.invalid>'

t.test('integrate: fast-forward when it can, merge otherwise, always in your name', async (t) => {
  const home = t.testdir({})
  const top = makeRepo(join(home, 'proj'), { ...manyFiles(50), 'README.md': '# p\n' })
  const p = localSession(t, home, top)
  const integrate = (id: string, ...rest: string[]) => agMcp(home, top, ['proposals', 'integrate', id, ...rest])

  // On the tip: a fast-forward, the agent's commit as it was proposed, no commit of ours.
  const first = await propose(p, 'proj', { 'docs/a.md': 'a\n' })
  t.ok(await refAppears(top, `refs/proposals/${first}`))
  const head = git(top, ['rev-parse', `refs/proposals/${first}`])
  const ff = integrate(first)
  t.equal(ff.status, 0, ff.stderr)
  t.match(
    ff.stdout,
    new RegExp(`^integrated ${first} into main \\(fast-forward\\): [0-9a-f]{10}\\.\\.${head.slice(0, 10)}\\n$`),
  )
  t.equal(git(top, ['rev-parse', 'main']), head, 'main is the proposal itself')
  t.same(whoMade(top, 'main'), { author: AGENT, committer: AGENT, parents: 1 }, 'no merge commit')

  // You committed meanwhile: a fast-forward cannot work, and the refusal says what would.
  const second = await propose(p, 'proj', { 'docs/b.md': 'b\n' })
  t.ok(await refAppears(top, `refs/proposals/${second}`))
  commitFiles(top, { 'NOTES.md': 'mine\n' }, 'my own work')
  const mine = git(top, ['rev-parse', 'main'])
  const refused = integrate(second, '--strategy', 'fast_forward')
  t.equal(refused.status, 1)
  t.match(refused.stderr, /not a fast-forward.*; --strategy merge or --strategy squash would work\n$/)
  t.equal(git(top, ['rev-parse', 'main']), mine, 'nothing moved')

  // git does not know who you are: refused, with the fix, and nothing moved.
  const nobody = agMcp(home, top, ['proposals', 'integrate', second], {
    ...NO_IDENTITY_ENV,
    GIT_CONFIG_COUNT: '1',
    GIT_CONFIG_KEY_0: 'user.useConfigOnly',
    GIT_CONFIG_VALUE_0: 'true',
  })
  t.equal(nobody.status, 1)
  t.match(nobody.stderr, /git does not know who you are.*git config user\.name "Your Name" and git config user\.email/)
  t.equal(git(top, ['rev-parse', 'main']), mine, 'nothing moved')

  // Uncommitted changes on the branch's checkout: refused, naming the files.
  writeFileSync(join(top, 'README.md'), '# changed\n')
  writeFileSync(join(top, 'new file é.txt'), 'staged\n')
  git(top, ['add', 'new file é.txt'])
  const dirty = integrate(second)
  t.equal(dirty.status, 1)
  t.match(
    dirty.stderr,
    /main is checked out in .*, which has uncommitted changes in (README\.md, new file é\.txt|new file é\.txt, README\.md): commit or stash them/,
  )
  git(top, ['reset', '-q', '--hard'])

  // A merge, by you as the environment says (author and committer apart, as git keeps them).
  const merged = agMcp(home, top, ['proposals', 'integrate', second], {
    GIT_AUTHOR_NAME: 'Env Author',
    GIT_AUTHOR_EMAIL: 'author@env.invalid',
    GIT_COMMITTER_NAME: 'Env Committer',
    GIT_COMMITTER_EMAIL: 'committer@env.invalid',
  })
  t.equal(merged.status, 0, merged.stderr)
  t.match(merged.stdout, /\(merge commit\)/)
  t.same(whoMade(top, 'main'), {
    author: 'Env Author <author@env.invalid>',
    committer: 'Env Committer <committer@env.invalid>',
    parents: 2,
  })

  // A squash keeps the agent as its author and has you as its committer.
  commitFiles(top, { 'NOTES.md': 'more\n' }, 'more of my work')
  const third = await propose(p, 'proj', { 'docs/c.md': 'c\n' })
  t.ok(await refAppears(top, `refs/proposals/${third}`))
  const squash = integrate(third, '--strategy', 'squash')
  t.equal(squash.status, 0, squash.stderr)
  t.same(whoMade(top, 'main'), { author: AGENT, committer: PERSON, parents: 1 })

  // A rejected proposal leaves refs/proposals/ too, and can still be shown.
  const fourth = await propose(p, 'proj', { 'docs/d.md': 'd\n' })
  t.ok(await refAppears(top, `refs/proposals/${fourth}`))
  t.equal(agMcp(home, top, ['proposals', 'reject', fourth]).status, 0)
  t.equal(git(top, ['for-each-ref', 'refs/proposals/']), '', 'no proposal is open: refs/proposals/ is empty')
  const shown = agMcp(home, top, ['proposals', 'show', fourth])
  t.match(shown.stdout, /state\s+withdrawn[\s\S]*docs\/d\.md \| 1 \+/, 'the private server still has it')
  t.equal((await p.close()).code, 0)
})
