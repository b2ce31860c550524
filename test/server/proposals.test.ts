import t from 'tap'
import path from 'node:path'
import { fixture, contractErrors, sh, registerKey, signedRecord, type SigningKey } from './helpers.ts'
import type { Json } from '../helpers/json.ts'

const fx = await fixture({
  policy: { required_approvals: 1, require_provenance_for_agents: true, protected_branches: ['release/*'] },
})
t.teardown(fx.close)
const { api } = fx
const bare = path.join(fx.data, 'repos/demo.git')

async function propose(
  who: string,
  files: Record<string, string>,
  body: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Promise<Json> {
  const ws = (await api(who, 'POST', '/repos/demo/workspaces', {}, headers)).body.id
  for (const [p, c] of Object.entries(files))
    await api(who, 'PUT', `/workspaces/${ws}/files`, { path: p, content: c }, headers)
  const r = await api(who, 'POST', `/workspaces/${ws}/proposals`, { title: 'Change', ...body }, headers)
  return { ...r.body, _status: r.status, _ws: ws }
}

const keys: Record<string, SigningKey> = {}
for (const principal of ['agent:alice', 'agent:bob', 'agent:maxi']) keys[principal] = await registerKey(fx, principal)
// The author's key holder signs the current head; the server verifies the record.
const attach = async (id: string): Promise<Json> => {
  const author = (await api('admin', 'GET', `/proposals/${id}`)).body.author_principal as string
  return api('admin', 'POST', `/proposals/${id}/provenance`, await signedRecord(fx, id, keys[author] as SigningKey))
}

t.test('a proposal is a real commit on refs/proposals/<id>', async (t) => {
  const p = await propose(
    'alice',
    { 'lib/util.ts': 'export const x = 2;\n' },
    { description: 'why', reasoning: 'because' },
  )
  t.equal(p._status, 201)
  const { _status, _ws, ...body } = p
  t.equal(contractErrors('Proposal', body), '')
  t.equal(sh(bare, 'rev-parse', `refs/proposals/${p.id}`).trim(), p.head)
  t.equal(sh(bare, 'rev-parse', `${p.head}^`).trim(), p.base, 'parent is the workspace base')
  t.equal(
    sh(bare, 'log', '-1', '--format=%an|%cn', p.head).trim(),
    'agent:alice|agent:alice',
    'author and committer from the principal',
  )
  t.equal(sh(bare, 'show', `${p.head}:lib/util.ts`), 'export const x = 2;\n')
  t.match(p, {
    state: 'open',
    target: 'main',
    mergeable: true,
    mergeability: 'fast_forward',
    approvals: [],
    approvals_required: 1,
  })
  t.equal(p.provenance.status, 'missing')
  t.same(p.integration_blockers.map((b: { code: string }) => b.code).sort(), [
    'approvals_missing',
    'provenance_missing',
  ])
  const d = await api('alice', 'GET', `/proposals/${p.id}/diff`)
  t.equal(contractErrors('DiffResponse', d.body), '')
  t.equal(d.body.files[0].path, 'lib/util.ts')
  const empty = await api(
    'alice',
    'POST',
    `/workspaces/${(await api('alice', 'POST', '/repos/demo/workspaces', {})).body.id}/proposals`,
    { title: 'nothing' },
  )
  t.equal(empty.status, 422, 'nothing to propose')
  t.equal((await api('reed', 'POST', `/workspaces/${p._ws}/proposals`, { title: 'x' })).status, 403)
})

t.test('review and integration authority', async (t) => {
  const p = await propose('alice', { 'README.md': '# reviewed\n' })
  const self = await api('alice', 'POST', `/proposals/${p.id}/reviews`, { verdict: 'approve' })
  t.equal(self.status, 403, 'alice lacks review scope anyway')
  const maxiOwn = await propose('maxi', { 'm.txt': 'm\n' })
  const selfApprove = await api('maxi', 'POST', `/proposals/${maxiOwn.id}/reviews`, { verdict: 'approve' })
  t.equal(selfApprove.status, 403, 'a reviewer cannot approve its own proposal')
  t.match(selfApprove.body.error.message, /author/)

  const rv = await api('rita', 'POST', `/proposals/${p.id}/reviews`, {
    verdict: 'approve',
    body: 'lgtm',
    comments: [{ path: 'README.md', line: 1, body: 'nice' }],
  })
  t.equal(rv.status, 201)
  t.equal(contractErrors('Review', rv.body), '')
  const after = (await api('alice', 'GET', `/proposals/${p.id}`)).body
  t.same(after.approvals, ['human:rita'])
  t.same(
    after.integration_blockers.map((b: { code: string }) => b.code),
    ['provenance_missing'],
  )

  const contrib = await api('alice', 'POST', `/proposals/${p.id}/integrate`, {})
  t.equal(contrib.status, 403, 'a contributor cannot integrate')
  const noProv = await api('mona', 'POST', `/proposals/${p.id}/integrate`, {})
  t.equal(noProv.status, 403, 'provenance required for agent proposals')
  t.match(noProv.body.error.message, /provenance/)

  const viaAgent = await api('alice', 'POST', `/proposals/${p.id}/provenance`, {
    key_id: 'k',
    signature: 's',
    statement: 'x',
  })
  t.equal(viaAgent.status, 403, 'provenance only with the key holder credential')
  t.equal((await attach(p.id)).status, 200)
  const ready = (await api('mona', 'GET', `/proposals/${p.id}`)).body
  t.equal(ready.provenance.status, 'verified')
  t.same(ready.integration_blockers, [])

  const stale = await api('mona', 'POST', `/proposals/${p.id}/integrate`, { expected_target_head: 'f'.repeat(40) })
  t.equal(stale.status, 409, 'expected_target_head mismatch')
  const before = sh(bare, 'rev-parse', 'main').trim()
  const ok = await api('mona', 'POST', `/proposals/${p.id}/integrate`, { expected_target_head: ready.target_head })
  t.equal(ok.status, 200)
  t.equal(contractErrors('IntegrateResponse', ok.body), '')
  t.equal(sh(bare, 'rev-parse', 'main').trim(), ok.body.commit)
  t.same(sh(bare, 'log', '-1', '--format=%P', 'main').trim().split(' '), [before, p.head], 'merge commit')
  t.equal(sh(bare, 'log', '-1', '--format=%cn', 'main').trim(), 'human:mona')
  const again = await api('mona', 'POST', `/proposals/${p.id}/integrate`, {})
  t.equal(again.status, 409, 'already integrated')
  const view = (await api('mona', 'GET', `/proposals/${p.id}`)).body
  t.equal(view.state, 'integrated')
  t.equal(view.integrated.commit, ok.body.commit)
})

t.test('an agent never integrates its own proposal', async (t) => {
  const p = await propose('maxi', { 'own.txt': 'own\n' })
  await api('rita', 'POST', `/proposals/${p.id}/reviews`, { verdict: 'approve' })
  await attach(p.id)
  const r = await api('maxi', 'POST', `/proposals/${p.id}/integrate`, {})
  t.equal(r.status, 403)
  t.match(r.body.error.message, /own proposal/)
})

t.test('conflicts, revisions, stale approvals, strategies, withdraw', async (t) => {
  const a = await propose('alice', { 'README.md': 'version A\n' })
  const b = await propose('bob', { 'README.md': 'version B\n' })
  for (const p of [a, b]) {
    await api('rita', 'POST', `/proposals/${p.id}/reviews`, { verdict: 'approve' })
    await attach(p.id)
  }
  t.equal((await api('mona', 'POST', `/proposals/${a.id}/integrate`, { strategy: 'squash' })).status, 200)
  t.equal(
    sh(bare, 'log', '-1', '--format=%an|%P', 'main').trim().split('|')[0],
    'agent:alice',
    'squash keeps the author',
  )
  const bv = (await api('bob', 'GET', `/proposals/${b.id}`)).body
  t.equal(bv.mergeability, 'conflicts')
  t.same(bv.conflicts, ['README.md'])
  t.ok(bv.integration_blockers.some((x: { code: string }) => x.code === 'conflicts'))
  const refused = await api('mona', 'POST', `/proposals/${b.id}/integrate`, {})
  t.equal(refused.status, 409)

  // revise on top of the new main: approvals and provenance of the old head stop counting
  const ws = (await api('bob', 'POST', '/repos/demo/workspaces', { base: 'main' })).body.id
  await api('bob', 'PUT', `/workspaces/${ws}/files`, { path: 'README.md', content: 'version A\nplus B\n' })
  t.equal(
    (await api('alice', 'POST', `/proposals/${b.id}/revisions`, { workspace: ws })).status,
    403,
    'only the author revises',
  )
  const rev = await api('bob', 'POST', `/proposals/${b.id}/revisions`, { workspace: ws, note: 'rebased' })
  t.equal(rev.status, 200)
  t.equal(rev.body.revisions.length, 2)
  t.equal(sh(bare, 'rev-parse', `refs/proposals/${b.id}`).trim(), rev.body.head)
  t.equal(rev.body.mergeability, 'fast_forward')
  t.same(rev.body.approvals, [], 'approval was for the old head')
  t.equal(rev.body.provenance.status, 'stale')
  await api('rita', 'POST', `/proposals/${b.id}/reviews`, { verdict: 'approve' })
  await attach(b.id)
  const ff = await api('mona', 'POST', `/proposals/${b.id}/integrate`, { strategy: 'fast_forward' })
  t.equal(ff.status, 200)
  t.equal(ff.body.commit, rev.body.head, 'fast-forward moves main to the head')

  const c = await propose('alice', { 'c.txt': 'c\n' })
  const rc = await api('rita', 'POST', `/proposals/${c.id}/reviews`, { verdict: 'request_changes', body: 'no' })
  t.equal(rc.status, 201)
  const cv = (await api('alice', 'GET', `/proposals/${c.id}`)).body
  t.ok(cv.integration_blockers.some((x: { code: string }) => x.code === 'changes_requested'))
  const w = await api('alice', 'POST', `/proposals/${c.id}/withdraw`, { reason: 'superseded' })
  t.equal(w.status, 200)
  t.equal(w.body.state, 'withdrawn')
  t.equal((await api('alice', 'POST', `/proposals/${c.id}/withdraw`, {})).status, 409)
})

t.test('protected branches need a human', async (t) => {
  sh(bare, 'branch', 'release/1', 'main')
  const ws = (await api('maxi', 'POST', '/repos/demo/workspaces', { base: 'release/1' })).body.id
  await api('maxi', 'PUT', `/workspaces/${ws}/files`, { path: 'rel.txt', content: 'r\n' })
  const p = (await api('maxi', 'POST', `/workspaces/${ws}/proposals`, { title: 'rel' })).body
  t.equal(p.target, 'release/1')
  const q = await propose('alice', { 'rel2.txt': 'r\n' }, { target: 'release/1' })
  await api('rita', 'POST', `/proposals/${q.id}/reviews`, { verdict: 'approve' })
  await attach(q.id)
  const byAgent = await api('maxi', 'POST', `/proposals/${q.id}/integrate`, {})
  t.equal(byAgent.status, 403)
  t.match(byAgent.body.error.message, /protected/)
  t.equal((await api('mona', 'POST', `/proposals/${q.id}/integrate`, {})).status, 200)
})

t.test('listing with state filter and pagination', async (t) => {
  const all: string[] = []
  let cursor = ''
  for (;;) {
    const r = await api('reed', 'GET', `/repos/demo/proposals?limit=2${cursor ? `&cursor=${cursor}` : ''}`)
    t.equal(contractErrors('ProposalList', r.body), '')
    all.push(...r.body.proposals.map((p: { id: string }) => p.id))
    if (!r.body.next_cursor) break
    cursor = r.body.next_cursor
  }
  t.ok(all.length >= 8)
  t.equal(new Set(all).size, all.length)
  const open = await api('reed', 'GET', '/repos/demo/proposals?state=integrated')
  t.ok(open.body.proposals.every((p: { state: string }) => p.state === 'integrated'))
  t.equal(open.body.proposals.length, 4)
  t.equal((await api('reed', 'GET', '/repos/demo/proposals?state=weird')).status, 422)
  t.equal((await api('reed', 'GET', '/proposals/pr-999')).status, 404)
})
