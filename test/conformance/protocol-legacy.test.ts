// The handshake revisions (2025-11-25, 2025-06-18, 2025-03-26) against the bundled binary.
import t from 'tap'
import { modernMeta, startMcp } from '../helpers/mcp-process.ts'

t.test('initialize echoes each supported revision', async (t) => {
  for (const rev of ['2025-11-25', '2025-06-18', '2025-03-26']) {
    const p = startMcp(t)
    const r = await p.initialize(rev)
    t.equal(r.result?.['protocolVersion'], rev, `${rev} echoed`)
    t.same(
      r.result?.['capabilities'],
      { tools: {}, resources: {}, prompts: {} },
      `${rev}: no listChanged/subscribe/logging`,
    )
    t.equal((await p.close()).code, 0)
    p.assertValid(t, `${rev}: every line valid`)
  }
})

t.test('an unsupported requested revision gets 2025-11-25', async (t) => {
  for (const asked of ['2024-11-05', '2099-01-01', '2026-07-28', 42]) {
    const p = startMcp(t)
    const r = await p.request(
      'initialize',
      { protocolVersion: asked, capabilities: {}, clientInfo: { name: 'c', version: '1' } },
      { era: 'legacy' },
    )
    t.equal(r.result?.['protocolVersion'], '2025-11-25', `asked ${JSON.stringify(asked)}, got 2025-11-25`)
    p.notify('notifications/initialized', {}, 'legacy')
    const tools = await p.request('tools/list', {}, { era: 'legacy' })
    t.ok(tools.result, 'then served in 2025-11-25 without _meta')
    t.equal((await p.close()).code, 0)
    p.assertValid(t, `asked ${JSON.stringify(asked)}: every line valid`)
  }
})

t.test('requests before initialize without modern _meta are refused', async (t) => {
  const p = startMcp(t)
  for (const method of [
    'tools/list',
    'tools/call',
    'prompts/list',
    'resources/list',
    'resources/read',
    'prompts/get',
  ]) {
    const r = await p.request(method, method === 'tools/call' ? { name: 'server_info', arguments: {} } : {}, {
      era: 'legacy',
    })
    t.equal(r.error?.code, -32602, `${method} before initialize: -32602`)
    t.match(r.error?.message, /initialize/, 'the message points to initialize')
  }
  // The refusal did not select an era: a handshake still works afterwards.
  const init = await p.initialize('2025-06-18')
  t.equal(init.result?.['protocolVersion'], '2025-06-18')
  t.ok((await p.request('tools/list', {}, { era: 'legacy' })).result)
  t.equal((await p.close()).code, 0)
  p.assertValid(t)
})

t.test('once legacy, the process stays legacy; modern _meta requests are still served statelessly', async (t) => {
  const p = startMcp(t)
  await p.initialize('2025-03-26')
  const again = await p.request(
    'initialize',
    { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
    { era: 'legacy' },
  )
  t.equal(again.result?.['protocolVersion'], '2025-03-26', 'a second initialize does not switch revisions')
  const legacy = await p.request('tools/list', {}, { era: 'legacy' })
  const tool = (legacy.result!['tools'] as Record<string, unknown>[])[0] ?? {}
  t.notOk('title' in tool, 'legacy tools/list is still 2025-03-26-shaped')
  t.notOk('resultType' in (legacy.result ?? {}))
  const modern = await p.request('tools/list')
  t.equal(modern.result?.['resultType'], 'complete', 'a modern request in a legacy process gets a modern result')
  const mtool = (modern.result!['tools'] as Record<string, unknown>[])[0] ?? {}
  t.type(mtool['title'], 'string', 'with modern tool shapes')
  const discover = await p.request('server/discover')
  t.ok(discover.result, 'server/discover with modern _meta is served')
  const call = await p.request('tools/call', { name: 'server_info', arguments: {} }, { era: 'legacy' })
  t.notOk(call.result && 'structuredContent' in call.result, 'no structuredContent in 2025-03-26')
  t.equal((await p.close()).code, 0)
  p.assertValid(t)
})

t.test('batches: accepted in 2025-03-26', async (t) => {
  const p = startMcp(t)
  await p.initialize('2025-03-26')
  const before = p.lines.length
  p.send([
    { jsonrpc: '2.0', id: 'b1', method: 'ping' },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { jsonrpc: '2.0', id: 'b2', method: 'tools/list' },
    { jsonrpc: '2.0', id: 'b3', method: 'tools/call', params: { name: 'server_info', arguments: {} } },
    { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'nothing' } },
    { jsonrpc: '2.0', id: 'b4', method: 'logging/setLevel', params: { level: 'debug' } },
  ])
  const [b1, b2, b3, b4] = await Promise.all(['b1', 'b2', 'b3', 'b4'].map((id) => p.waitFor(id)))
  t.ok(b1?.result && b2?.result && b3?.result, 'each request in the batch is answered')
  t.equal(b4?.error?.code, -32601)
  t.equal(p.lines.length, before + 1, 'in one line')
  const line = JSON.parse(p.lines[before] ?? 'null') as unknown[]
  t.ok(Array.isArray(line), 'an array response')
  t.equal(line.length, 4, 'the notifications inside produced nothing')
  p.send([{ jsonrpc: '2.0', method: 'notifications/initialized' }])
  const after = await p.request('ping', {}, { era: 'legacy', id: 'after' })
  t.ok(after.result)
  t.equal(p.lines.length, before + 2, 'a batch of only notifications is not answered')
  t.equal((await p.close()).code, 0)
  p.assertValid(t)
})

for (const rev of ['2025-11-25', '2025-06-18']) {
  t.test(`batches: refused in ${rev}`, async (t) => {
    const p = startMcp(t)
    await p.initialize(rev)
    const before = p.lines.length
    p.send([
      { jsonrpc: '2.0', id: 'x1', method: 'ping' },
      { jsonrpc: '2.0', id: 'x2', method: 'tools/list' },
    ])
    await p.request('ping', {}, { era: 'legacy', id: 'probe' })
    t.equal(p.lines.length, before + 2, 'one error line, then the probe')
    const err = JSON.parse(p.lines[before] ?? 'null') as { id: unknown; error?: { code: number } }
    t.equal(err.id, null)
    t.equal(err.error?.code, -32600, 'the batch is refused with -32600')
    t.equal((await p.close()).code, 0)
    p.assertValid(t)
  })
}

t.test('batches: refused in the modern era', async (t) => {
  const p = startMcp(t)
  p.send([{ jsonrpc: '2.0', id: 'm1', method: 'ping', params: { _meta: modernMeta() } }])
  await p.request('ping', {}, { id: 'probe' })
  t.match(JSON.parse(p.lines[0] ?? 'null'), { id: null, error: { code: -32600 } })
  t.equal(p.lines.length, 2)
  t.equal((await p.close()).code, 0)
  p.assertValid(t)
})
