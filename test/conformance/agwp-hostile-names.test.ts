// A file whose name holds a bidi or zero-width character (issue 10), end to end: the real
// bundled ag-mcp lists it under an escaped name (`\u{202e}`) that is visible, and that the
// tools accept back, instead of a cleaned name that does not exist.
import t from 'tap'
import { agwpFixture, client, mcp } from './agwp-fixture.ts'

const fx = await agwpFixture()
t.teardown(() => fx.close())

const ws = await fx.api('alice', 'POST', '/repos/demo/workspaces', { base: 'main' })
const WORKSPACE = String(ws.body['id'])
const NAMES: Record<string, string> = {
  'names/evil\u202egnp.txt': 'names/evil\\u{202e}gnp.txt',
  'names/zero\u200bwidth.txt': 'names/zero\\u{200b}width.txt',
}
for (const real of Object.keys(NAMES)) {
  const w = await fx.api('alice', 'PUT', `/workspaces/${WORKSPACE}/files`, { path: real, content: `inside ${real}\n` })
  if (w.status >= 300) throw new Error(`write ${JSON.stringify(real)}: ${JSON.stringify(w.body)}`)
}

t.test('listed under an escaped name that file_read accepts back', async (t) => {
  const p = mcp(t, fx.upstream, fx.tokenFile('alice'))
  const c = await client(p, '2026-07-28')
  const dir = await c.call('file_read', { repo: 'demo', workspace: WORKSPACE, path: 'names' })
  t.notOk(dir.isError, dir.text.slice(0, 300))
  const listed = JSON.stringify(dir.structured?.['entries'])
  for (const [real, shown] of Object.entries(NAMES)) {
    t.ok(listed.includes(JSON.stringify(shown).slice(1, -1)), `${JSON.stringify(real)} is listed as ${shown}`)
    t.notOk(listed.includes(real), 'never with the hidden character itself')
    const r = await c.call('file_read', { repo: 'demo', workspace: WORKSPACE, path: shown })
    t.notOk(r.isError, `${shown} can be read back${r.isError ? `: ${r.text.slice(0, 300)}` : ''}`)
    t.equal(r.structured?.['path'], shown, 'under the same escaped name')
    t.match(String(r.structured?.['content']), /^inside names\//, 'with its content')
  }
  t.match(
    dir.text.split('\n')[0],
    /\d+ control or hidden character sequence\(s\) removed or escaped/,
    'the summary counts what was escaped',
  )
  t.equal((await p.close()).code, 0)
  p.assertValid(t)
})
