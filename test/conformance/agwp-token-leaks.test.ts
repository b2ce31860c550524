// The four ways the token got out (issue 10), end to end: the real ag-server holds files with
// ag-mcp's own token split over lines (LF, CRLF plus indentation) and percent-encoded; the real
// bundled ag-mcp, running with that token, serves them through diff (proposal and workspace),
// search and file_read in two eras; and echoes of the token in JSON-RPC errors. No part of the
// token that identifies it may reach stdout or stderr.
import t from 'tap'
import { agwpFixture, client, mcp } from './agwp-fixture.ts'
import type { CallResult, Era } from './agwp-fixture.ts'
import { META_CAPABILITIES, META_VERSION } from '../helpers/mcp-process.ts'
import type { McpProcess } from '../helpers/mcp-process.ts'

const fx = await agwpFixture()
t.teardown(() => fx.close())
const TOKEN = fx.tokens['alice'] ?? ''
const tokenFile = fx.tokenFile('alice')
const percent = (s: string): string => Array.from(Buffer.from(s), (b) => `%${b.toString(16).padStart(2, '0')}`).join('')
const at = 24

const FILES: Record<string, string> = {
  'leak/lf.txt': `one\nkey = ${TOKEN.slice(0, at)}\n${TOKEN.slice(at)}\ntwo\n`,
  'leak/crlf.txt': `one\r\nkey = ${TOKEN.slice(0, 20)}\r\n        ${TOKEN.slice(20)}\r\ntwo\r\n`,
  'leak/percent.txt': `url = https://example.invalid/cb?t=${percent(TOKEN)}\n`,
  'leak/percent-upper.txt': `raw = ${percent(TOKEN).toUpperCase()}\n`,
}

// The token written into a workspace and proposed by the fixture's own API (as alice).
const ws = await fx.api('alice', 'POST', '/repos/demo/workspaces', { base: 'main' })
const WORKSPACE = String(ws.body['id'])
for (const [path, content] of Object.entries(FILES)) {
  const w = await fx.api('alice', 'PUT', `/workspaces/${WORKSPACE}/files`, { path, content })
  if (w.status >= 300) throw new Error(`write ${path}: ${JSON.stringify(w.body)}`)
}
const proposed = await fx.api('alice', 'POST', `/workspaces/${WORKSPACE}/proposals`, { title: 'config' })
if (proposed.status >= 300) throw new Error(`propose: ${JSON.stringify(proposed.body)}`)
const PROPOSAL = String(proposed.body['id'])
const PROPOSAL_REF = String(proposed.body['ref'] ?? `refs/proposals/${PROPOSAL}`)

/** Characters that may separate the pieces of a split token once shown. */
const squeeze = (s: string): string => s.replace(/[\s+\-"'>|\\]/g, '')
const WINDOW = 12
const windows = (s: string): string[] =>
  Array.from({ length: Math.max(0, s.length - WINDOW + 1) }, (_, i) => s.slice(i, i + WINDOW))
const TOKEN_WINDOWS = windows(squeeze(TOKEN.slice(5))) // the random part; "agwp_" is public

/** Does `s` let a reader put back 12 consecutive characters of the token, in any form? */
function exposes(s: string): string | undefined {
  const decoded = s.replace(/%([0-9a-fA-F]{2})/g, (_, h: string) => String.fromCharCode(Number.parseInt(h, 16)))
  for (const view of [squeeze(s), squeeze(decoded), squeeze(s.replace(/\\r|\\n/g, ''))]) {
    const hit = TOKEN_WINDOWS.find((w) => view.includes(w))
    if (hit !== undefined) return hit
  }
  return undefined
}

interface Asserts {
  ok(v: unknown, m: string): unknown
  notOk(v: unknown, m: string): unknown
  equal(a: unknown, b: unknown, m: string): unknown
}

function assertClean(t: Asserts, what: string, r: CallResult): void {
  t.notOk(r.isError, `${what}: succeeds${r.isError ? ` (${r.text.slice(0, 300)})` : ''}`)
  t.equal(exposes(r.text), undefined, `${what}: no part of the token in content`)
  t.equal(exposes(JSON.stringify(r.structured ?? {})), undefined, `${what}: nor in structuredContent`)
  for (const s of strings(r.structured)) t.equal(exposes(s), undefined, `${what}: nor in any structured string`)
}

function strings(v: unknown): string[] {
  if (typeof v === 'string') return [v]
  if (Array.isArray(v)) return v.flatMap(strings)
  if (v !== null && typeof v === 'object') return Object.entries(v).flatMap(([k, x]) => [k, ...strings(x)])
  return []
}

function assertNothingOut(t: Asserts, p: McpProcess): void {
  t.equal(exposes(p.lines.join('\n')), undefined, 'stdout never holds a part of the token')
  t.equal(exposes(p.stderr), undefined, 'stderr never holds a part of the token')
}

t.test('the fixture really holds the token in each form', async (t) => {
  for (const [path, content] of Object.entries(FILES)) {
    const r = await fx.api('alice', 'GET', `/workspaces/${WORKSPACE}/file?path=${encodeURIComponent(path)}`)
    t.equal(r.body['content'], content, path)
    t.ok(exposes(content), `${path} exposes the token before scrubbing`)
  }
})

for (const era of ['2026-07-28', '2025-11-25'] as Era[]) {
  t.test(`diff, search and file_read never show the token (${era})`, async (t) => {
    const p = mcp(t, fx.upstream, tokenFile)
    const c = await client(p, era)
    assertClean(t, 'proposal diff', await c.call('diff', { repo: 'demo', proposal: PROPOSAL }))
    assertClean(
      t,
      'workspace diff',
      await c.call('workspace_status', { repo: 'demo', workspace: WORKSPACE, diff: true }),
    )
    assertClean(t, 'ref diff', await c.call('diff', { repo: 'demo', base: 'main', head: PROPOSAL_REF }))
    for (const q of ['key = ', 'url = ', 'raw = ', TOKEN.slice(at, at + 6)]) {
      const r = await c.call('search', { repo: 'demo', q, ref: PROPOSAL_REF })
      assertClean(t, `search ${JSON.stringify(q)}`, r)
      const n = era === '2025-11-25' ? (r.structured?.['matches']?.length ?? 0) : 1
      t.ok(n >= 1, `search ${JSON.stringify(q)} found the line`)
    }
    for (const path of Object.keys(FILES)) {
      assertClean(t, `file_read ${path}`, await c.call('file_read', { repo: 'demo', path, workspace: WORKSPACE }))
    }
    t.equal((await p.close()).code, 0)
    assertNothingOut(t, p)
    p.assertValid(t)
  })
}

t.test('JSON-RPC errors never echo the token (method, tool, prompt, resource, parse error)', async (t) => {
  const p = mcp(t, fx.upstream, tokenFile)
  const c = await client(p, '2026-07-28')
  const errors = [
    await c.request(`tools/${TOKEN}`),
    await c.request(`x${' '.repeat(40)}${TOKEN}`),
    await c.request('tools/call', { name: TOKEN, arguments: {} }),
    await c.request('tools/call', { name: `${'n'.repeat(70)}${TOKEN}`, arguments: {} }),
    await c.request('prompts/get', { name: percent(TOKEN) }),
    await c.request('resources/read', { uri: `agwp://demo/file/${TOKEN}` }),
    await p.request('tools/list', {}, { meta: { [META_VERSION]: `v-${TOKEN}`, [META_CAPABILITIES]: {} } }),
  ]
  for (const e of errors) t.ok(e.error, `an error: ${e.error?.message.slice(0, 80)}`)
  p.writeRaw(`{"jsonrpc":"2.0","id":99,"method":${TOKEN}}\n`)
  p.writeRaw(`${TOKEN.slice(0, 30)}\n`)
  await p.waitForLines(p.lines.length + 2)
  t.equal((await p.close()).code, 0)
  assertNothingOut(t, p)
  t.notOk(p.lines.join('\n').includes(TOKEN.slice(5, 15)), 'not even ten characters of it')
})
