// 2026-07-28 (per-request `_meta`, no handshake) against the bundled binary.
import t from 'tap'
import { META_CAPABILITIES, META_SERVER_INFO, META_VERSION, modernMeta, startMcp } from '../helpers/mcp-process.ts'
import type { McpProcess } from '../helpers/mcp-process.ts'

const ALL = ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26']

t.test('server/discover', async (t) => {
  const p = startMcp(t)
  const r = await p.request('server/discover')
  const res = r.result ?? {}
  t.same([...(res['supportedVersions'] as string[])].sort(), [...ALL].sort(), 'supportedVersions: the four revisions')
  t.same(
    res['capabilities'],
    { tools: {}, resources: {}, prompts: {} },
    'tools, resources, prompts; no listChanged, no subscribe, nothing else',
  )
  t.type(res['instructions'], 'string')
  t.ok((res['instructions'] as string).length > 20, 'instructions say something')
  t.equal(res['resultType'], 'complete')
  const info = (res['_meta'] as Record<string, Record<string, unknown>>)[META_SERVER_INFO]
  t.match(info, { name: 'ag-mcp', version: String, title: String }, 'serverInfo in _meta')
  t.ok(Number.isInteger(res['ttlMs']) && (res['ttlMs'] as number) >= 0, 'ttlMs')
  t.ok(res['cacheScope'] === 'private' || res['cacheScope'] === 'public', 'cacheScope')
  const withInfo = await p.request(
    'server/discover',
    {},
    { meta: modernMeta({ 'io.modelcontextprotocol/clientInfo': { name: 'c', version: '1' } }) },
  )
  t.ok(withInfo.result, 'clientInfo in _meta is accepted')
  t.equal((await p.close()).code, 0)
  p.assertValid(t)
})

t.test('the _meta rules', async (t) => {
  const p = startMcp(t)
  const missing = await p.request('tools/list', {}, { meta: null })
  t.equal(missing.error?.code, -32602, 'no _meta at all: -32602')
  t.match(missing.error?.message, /_meta/, 'the message names _meta')
  const noParams = p.waitFor('no-params')
  p.send({ jsonrpc: '2.0', id: 'no-params', method: 'tools/list' })
  t.equal((await noParams).error?.code, -32602, 'no params at all: -32602')
  const noCaps = await p.request('tools/list', {}, { meta: { [META_VERSION]: '2026-07-28' } })
  t.equal(noCaps.error?.code, -32602, 'no clientCapabilities: -32602')
  t.match(noCaps.error?.message, /clientCapabilities/)
  const badCaps = await p.request(
    'tools/list',
    {},
    { meta: { [META_VERSION]: '2026-07-28', [META_CAPABILITIES]: 'all' } },
  )
  t.equal(badCaps.error?.code, -32602, 'clientCapabilities not an object: -32602')
  const noVersion = await p.request('tools/list', {}, { meta: { [META_CAPABILITIES]: {} } })
  t.equal(noVersion.error?.code, -32602, 'no protocolVersion: -32602')
  const metaNotObject = await p.request('tools/list', { _meta: 'x' }, { meta: null })
  t.equal(metaNotObject.error?.code, -32602, '_meta not an object: -32602')

  for (const requested of ['2099-01-01', '2024-11-05', 'latest', '']) {
    const r = await p.request('tools/list', {}, { meta: { [META_VERSION]: requested, [META_CAPABILITIES]: {} } })
    t.equal(r.error?.code, -32022, `unknown version ${JSON.stringify(requested)}: -32022`)
    t.same(r.error?.data, { supported: ['2026-07-28'], requested }, 'data.supported and data.requested')
  }
  const numeric = await p.request('tools/list', {}, { meta: { [META_VERSION]: 20260728, [META_CAPABILITIES]: {} } })
  t.equal(numeric.error?.code, -32022, 'a non-string version: -32022')
  t.match(numeric.error?.data, { supported: ['2026-07-28'], requested: String })

  for (const legacy of ['2025-11-25', '2025-06-18', '2025-03-26']) {
    const r = await p.request('tools/list', {}, { meta: { [META_VERSION]: legacy, [META_CAPABILITIES]: {} } })
    t.equal(r.error?.code, -32022, `${legacy} in _meta: -32022`)
    t.match(r.error?.message, /initialize/, 'the message says to send initialize')
    t.same(
      r.error?.data,
      { supported: ['2026-07-28'], requested: legacy },
      'supported lists only per-request revisions, so a client cannot loop',
    )
  }
  const ok = await p.request('tools/list')
  t.ok(ok.result, 'a well-formed request after all that is served')
  t.equal((await p.close()).code, 0)
  p.assertValid(t)
})

t.test('resultType and serverInfo on every modern result; cache hints on lists', async (t) => {
  const p = startMcp(t)
  const results = await Promise.all([
    p.request('ping'),
    p.request('server/discover'),
    p.request('tools/list'),
    p.request('prompts/list'),
    p.request('resources/list'),
    p.request('resources/templates/list'),
    p.request('tools/call', { name: 'server_info', arguments: {} }),
    p.request('tools/call', { name: 'server_info', arguments: { x: 1 } }),
  ])
  for (const r of results) {
    t.equal(r.result?.['resultType'], 'complete', `resultType on ${JSON.stringify(r.id)}`)
    t.match(
      (r.result?.['_meta'] as Record<string, unknown>)?.[META_SERVER_INFO],
      { name: 'ag-mcp' },
      `serverInfo on ${JSON.stringify(r.id)}`,
    )
  }
  for (const r of results.slice(2, 6)) {
    t.ok(Number.isInteger(r.result?.['ttlMs']), `ttlMs on list ${JSON.stringify(r.id)}`)
    t.equal(r.result?.['cacheScope'], 'private', `cacheScope on list ${JSON.stringify(r.id)}`)
  }
  t.equal((await p.close()).code, 0)
  p.assertValid(t)
})

t.test("ping without _meta before any initialize is still answered (the seed's choice)", async (t) => {
  const p = startMcp(t)
  const r = await p.request('ping', {}, { meta: null })
  t.ok(r.result, 'answered')
  t.equal((await p.close()).code, 0)
  p.assertValid(t)
})

t.test('initialize with modern _meta: -32601, and the process does not turn legacy', async (t) => {
  const p = startMcp(t)
  const r = await p.request('initialize', {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'c', version: '1' },
  })
  t.equal(r.error?.code, -32601, '2026-07-28 has no initialize')
  const legacy = await p.request('tools/list', {}, { era: 'legacy' })
  t.equal(legacy.error?.code, -32602, 'a request without _meta is still refused: no legacy era was selected')
  const init = await p.initialize('2025-06-18')
  t.equal(init.result?.['protocolVersion'], '2025-06-18', 'a real handshake still selects its revision')
  t.equal((await p.close()).code, 0)
  p.assertValid(t)
})

/** Walks a list with cursors; returns the names seen and the number of pages. */
async function walk(p: McpProcess, method: string, key: string): Promise<{ names: string[]; pages: number }> {
  const names: string[] = []
  let cursor: string | undefined
  let pages = 0
  do {
    const r = await p.request(method, cursor === undefined ? {} : { cursor })
    const items = r.result?.[key] as { name: string }[] | undefined
    if (!items) throw new Error(`${method} failed: ${JSON.stringify(r.error)}`)
    if (items.length > 1) throw new Error(`${method}: a page of ${items.length} with --page-size 1`)
    names.push(...items.map((x) => x.name))
    cursor = r.result?.['nextCursor'] as string | undefined
    pages++
  } while (cursor !== undefined && pages < 1000)
  return { names, pages }
}

t.test('pagination with --page-size 1', async (t) => {
  const full = startMcp(t)
  const paged = startMcp(t, { args: ['--page-size', '1'] })
  for (const [method, key] of [
    ['tools/list', 'tools'],
    ['prompts/list', 'prompts'],
    ['resources/list', 'resources'],
    ['resources/templates/list', 'resourceTemplates'],
  ] as const) {
    const all = ((await full.request(method)).result![key] as { name: string }[]).map((x) => x.name)
    const w = await walk(paged, method, key)
    t.same(w.names, all, `${method}: walking page by page yields the whole list, in order, once`)
    t.equal(w.pages, Math.max(1, all.length), `${method}: one page per item`)
  }
  // Cursors this process never issued, or issued for another list, are refused.
  const forged = [
    '',
    'not-a-cursor',
    Buffer.from('tools:999').toString('base64url'),
    Buffer.from('prompts:0').toString('base64url'),
    Buffer.from('tools:-1').toString('base64url'),
    'x'.repeat(1000),
  ]
  for (const cursor of forged) {
    const r = await paged.request('tools/list', { cursor })
    t.equal(r.error?.code, -32602, `forged cursor ${JSON.stringify(cursor.slice(0, 20))}: -32602`)
  }
  const wrongType = await paged.request('tools/list', { cursor: 5 })
  t.equal(wrongType.error?.code, -32602, 'a non-string cursor: -32602')
  const tools = await paged.request('tools/list')
  const next = tools.result?.['nextCursor']
  if (typeof next === 'string') {
    const cross = await paged.request('prompts/list', { cursor: next })
    t.equal(cross.error?.code, -32602, 'a tools cursor on prompts/list: -32602')
  }
  t.equal((await full.close()).code, 0)
  t.equal((await paged.close()).code, 0)
  full.assertValid(t, 'every line of the unpaged process is valid')
  paged.assertValid(t, 'every line of the paged process is valid')
})
