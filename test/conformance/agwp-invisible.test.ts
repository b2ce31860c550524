// Invisible characters (issue 10), end to end: a repository file holding every kind of
// default-ignorable and format character that used to survive reaches the model through the
// real bundled ag-mcp without any of them, and the summary counts them.
import t from 'tap'
import { agwpFixture, client, mcp } from './agwp-fixture.ts'

const fx = await agwpFixture()
t.teardown(() => fx.close())

const INVISIBLE: Record<string, string> = {
  'soft hyphen': '\u00ad',
  'combining grapheme joiner': '\u034f',
  'Mongolian vowel separator': '\u180e',
  'Hangul fillers': '\u115f\u1160\u3164\uffa0',
  'variation selectors': '\ufe00\ufe0f\u{e0100}\u{e01ef}',
  'line and paragraph separators': '\u2028\u2029',
  'interlinear annotation': '\ufff9\ufffa\ufffb',
  'Arabic number sign': '\u0600',
}
const count = Object.values(INVISIBLE).reduce((n, s) => n + [...s].length, 0)
const content = `${Object.entries(INVISIBLE)
  .map(([name, chars]) => `${name}: [${chars}]`)
  .join('\n')}\nsmuggled: A${'\u{e0100}\u{e0101}\u{e0102}'.repeat(8)}\n`
const smuggled = 24

const ws = await fx.api('alice', 'POST', '/repos/demo/workspaces', { base: 'main' })
const WORKSPACE = String(ws.body['id'])
const w = await fx.api('alice', 'PUT', `/workspaces/${WORKSPACE}/files`, { path: 'invisible.txt', content })
if (w.status >= 300) throw new Error(`write: ${JSON.stringify(w.body)}`)

const HIDDEN = /[\p{Default_Ignorable_Code_Point}\p{Cf}\u2028\u2029]/u

t.test('file_read: none of them reaches the model, each is counted', async (t) => {
  const p = mcp(t, fx.upstream, fx.tokenFile('alice'))
  const c = await client(p, '2026-07-28')
  const r = await c.call('file_read', { repo: 'demo', path: 'invisible.txt', workspace: WORKSPACE })
  t.notOk(r.isError, r.text.slice(0, 200))
  t.notMatch(r.text, HIDDEN, 'no default-ignorable or format character in the text')
  t.notMatch(JSON.stringify(r.structured), HIDDEN, 'nor in structuredContent')
  t.match(r.structured?.['content'], /soft hyphen: \[\]/, 'the visible text stays')
  t.match(r.structured?.['content'], /line and paragraph separators: \[\n\n\]/, 'separators become line breaks')
  t.equal(r.structured?.['sanitized']?.['removed'], count + smuggled, 'each one counted')
  t.match(r.text.split('\n')[0], new RegExp(`${count + smuggled} control or hidden character`), 'the summary says so')
  t.equal((await p.close()).code, 0)
  p.assertValid(t)
})
