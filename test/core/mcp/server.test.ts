// The dispatcher on its own, with a fake call pipeline: what cannot be provoked through the binary
// yet (a slow tool to cancel, a slow call in flight at EOF, a shutdown deadline).
import t from 'tap'
import { RpcError } from '../../../core/src/mcp/errors.ts'
import type { CallOptions, CallOutcome, CallPipeline } from '../../../core/src/mcp/pipeline-api.ts'
import { lineText } from '../../../core/src/jsonrpc/writer.ts'
import { McpServer } from '../../../core/src/mcp/server.ts'
import { validateServerMessage } from '../../helpers/mcp-schema.ts'
import type { Revision } from '../../helpers/mcp-schema.ts'

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
}

interface Harness {
  server: McpServer
  out: Record<string, unknown>[]
  raw: string[]
  signals: Map<string | number, AbortSignal>
  /** Releases the slow call with this id (resolves its handler). */
  release(id: string | number): void
  send(msg: unknown): void
}

function harness(pageSize = 100): Harness {
  const signals = new Map<string | number, AbortSignal>()
  const releases = new Map<string | number, () => void>()
  const pipeline: CallPipeline = {
    identity: { name: 'fake', title: 'Fake', version: '1.0.0' },
    instructions: 'test',
    tools: () => [
      {
        name: 'slow',
        title: 'Slow',
        description: 'waits',
        inputSchema: { type: 'object' },
        outputSchema: { type: 'object' },
        annotations: { readOnlyHint: true },
      },
      {
        name: 'fast',
        title: 'Fast',
        description: 'answers',
        inputSchema: { type: 'object' },
        outputSchema: { type: 'object' },
        annotations: { readOnlyHint: true },
      },
    ],
    resources: () => [],
    resourceTemplates: () => [],
    prompts: () => [],
    async callTool(name: string, _args: unknown, opts: CallOptions): Promise<CallOutcome> {
      if (name === 'fast') return { text: 'fast done', structured: { ok: true }, isError: false }
      if (name !== 'slow') throw new RpcError(-32602, `unknown tool ${name}`)
      signals.set(opts.requestId, opts.signal)
      await new Promise<void>((resolve, reject) => {
        releases.set(opts.requestId, resolve)
        opts.signal.addEventListener('abort', () => reject(opts.signal.reason), { once: true })
      })
      return { text: 'slow done', structured: { ok: true }, isError: false }
    },
    async readResource() {
      throw new RpcError(-32602, 'no resources')
    },
    getPrompt() {
      throw new RpcError(-32602, 'no prompts')
    },
  }
  const out: Record<string, unknown>[] = []
  const raw: string[] = []
  const server = new McpServer({
    pipeline,
    send: (parts) => {
      const line = lineText(parts)
      raw.push(line)
      const v = JSON.parse(line) as Record<string, unknown> | Record<string, unknown>[]
      for (const m of Array.isArray(v) ? v : [v]) out.push(m)
    },
    pageSize,
    listTtlMs: 1000,
  })
  return {
    server,
    out,
    raw,
    signals,
    release: (id) => releases.get(id)?.(),
    send: (msg) => server.handleLine(JSON.stringify(msg)),
  }
}

const tick = (ms = 5): Promise<void> => new Promise((r) => setTimeout(r, ms))

function call(id: string | number, name: string, meta = true): Record<string, unknown> {
  return { jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {}, ...(meta ? { _meta: META } : {}) } }
}

function assertValid(t: Tap, rev: Revision, msgs: Record<string, unknown>[], method?: string): void {
  for (const m of msgs)
    t.same(
      validateServerMessage(rev, m, m['error'] ? undefined : method),
      [],
      `valid ${rev}: ${JSON.stringify(m).slice(0, 120)}`,
    )
}
interface Tap {
  same(a: unknown, b: unknown, m: string): unknown
}

t.test('a cancelled call aborts its signal and is never answered', async (t) => {
  const h = harness()
  h.send(call(1, 'slow'))
  h.send(call(2, 'slow'))
  await tick()
  t.equal(h.server.inFlightCount, 2)
  const s1 = h.signals.get(1)
  t.ok(s1, 'the handler got a signal')
  t.notOk(s1?.aborted)
  h.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, reason: 'user', _meta: META } })
  t.ok(s1?.aborted, 'the signal is aborted synchronously')
  t.notOk(h.signals.get(2)?.aborted, 'the other call is untouched')
  await tick()
  t.same(h.out, [], 'no response for the cancelled call')
  h.release(2)
  await h.server.drain()
  t.equal(h.out.length, 1)
  t.equal(h.out[0]?.['id'], 2, 'the other call still answers')
  t.equal(h.server.inFlightCount, 0)
  assertValid(t, '2026-07-28', h.out, 'tools/call')
})

t.test('cancellation in a legacy session, with a string id', async (t) => {
  const h = harness()
  h.send({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
  })
  await tick()
  h.send({ jsonrpc: '2.0', method: 'notifications/initialized' })
  h.send(call('slow-1', 'slow', false))
  await tick()
  h.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'slow-1' } })
  await h.server.drain()
  t.equal(h.out.length, 1, 'only the initialize response')
  t.equal(h.out[0]?.['id'], 0)
  t.ok(h.signals.get('slow-1')?.aborted)
})

t.test('cancelling an unknown or finished request does nothing', async (t) => {
  const h = harness()
  h.send(call(1, 'fast'))
  await tick()
  h.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } })
  h.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 99 } })
  h.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: {} })
  await tick()
  t.equal(h.out.length, 1, 'the finished call was answered once; the notifications were not answered')
})

t.test('requests run concurrently and may answer out of order', async (t) => {
  const h = harness()
  h.send(call('a', 'slow'))
  h.send(call('b', 'fast'))
  await tick()
  t.same(
    h.out.map((m) => m['id']),
    ['b'],
    'the fast call answered while the slow one runs',
  )
  h.release('a')
  await h.server.drain()
  t.same(
    h.out.map((m) => m['id']),
    ['b', 'a'],
  )
})

t.test('EOF with calls in flight: drain() resolves only after every response was delivered', async (t) => {
  const h = harness()
  for (let i = 0; i < 5; i++) h.send(call(i, 'slow'))
  h.send(call('f', 'fast'))
  await tick()
  let drained = false
  const d = h.server.drain().then(() => (drained = true))
  await tick()
  t.notOk(drained, 'not drained while calls run')
  for (let i = 0; i < 5; i++) {
    h.release(i)
    await tick(2)
  }
  await d
  t.ok(drained)
  t.same(h.out.map((m) => m['id']).sort(), [0, 1, 2, 3, 4, 'f'].sort(), 'all six answered')
  for (const m of h.out) t.match(m, { result: { content: [{ type: 'text' }], resultType: 'complete' } })
  assertValid(t, '2026-07-28', h.out, 'tools/call')
})

t.test('abortAll (shutdown deadline) aborts calls but still answers them', async (t) => {
  const h = harness()
  h.send(call(1, 'slow'))
  await tick()
  h.server.abortAll('shutting down')
  await h.server.drain()
  t.ok(h.signals.get(1)?.aborted)
  t.equal(h.out.length, 1, 'an aborted (not cancelled) call gets an answer')
  t.match(h.out[0], { id: 1, error: { code: -32603 } })
  assertValid(t, '2026-07-28', h.out)
})

t.test('an id already in flight is refused with that id; the first call is unaffected', async (t) => {
  const h = harness()
  h.send(call(7, 'slow'))
  await tick()
  h.send(call(7, 'fast'))
  await tick()
  t.match(h.out, [{ id: 7, error: { code: -32600 } }])
  h.release(7)
  await h.server.drain()
  t.match(h.out[1], { id: 7, result: { content: [{ text: 'slow done' }] } })
})

t.test('2025-03-26 batches: one array answer, notifications inside produce nothing', async (t) => {
  const h = harness()
  h.send({
    jsonrpc: '2.0',
    id: 'i',
    method: 'initialize',
    params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
  })
  await tick()
  h.raw.length = 0
  h.out.length = 0
  h.send([
    { jsonrpc: '2.0', id: 1, method: 'ping' },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    call(2, 'fast', false),
    {
      jsonrpc: '2.0',
      id: 3,
      method: 'initialize',
      params: { protocolVersion: '2025-03-26', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
    },
    { jsonrpc: '2.0', id: 4, method: 'no/such' },
    7,
  ])
  await h.server.drain()
  await tick()
  t.equal(h.raw.length, 1, 'one line')
  const batch = JSON.parse(h.raw[0] ?? 'null') as Record<string, unknown>[]
  t.ok(Array.isArray(batch), 'an array')
  t.same(
    batch.map((m) => m['id']).sort((a, b) => String(a).localeCompare(String(b))),
    [1, 2, 3, 4, null].sort((a, b) => String(a).localeCompare(String(b))),
  )
  t.match(
    batch.find((m) => m['id'] === 3),
    { error: { code: -32600 } },
    'initialize is not allowed in a batch',
  )
  t.match(
    batch.find((m) => m['id'] === 4),
    { error: { code: -32601 } },
  )
  t.match(
    batch.find((m) => m['id'] === null),
    { error: { code: -32600 } },
    'a non-object element',
  )
  const c = batch.find((m) => m['id'] === 2) as { result: Record<string, unknown> }
  t.notOk('structuredContent' in c.result, 'no structuredContent in 2025-03-26')
  h.raw.length = 0
  h.send([
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 9 } },
  ])
  await tick()
  t.same(h.raw, [], 'a batch of notifications is not answered at all')
  h.send([])
  t.match(JSON.parse(h.raw[0] ?? 'null'), { id: null, error: { code: -32600 } }, 'an empty batch is invalid')
})

t.test('batches are refused before initialize and in later revisions', async (t) => {
  const h = harness()
  h.send([{ jsonrpc: '2.0', id: 1, method: 'ping' }])
  t.match(JSON.parse(h.raw[0] ?? 'null'), { id: null, error: { code: -32600 } })
  h.send({
    jsonrpc: '2.0',
    id: 'i',
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
  })
  await tick()
  h.send([{ jsonrpc: '2.0', id: 2, method: 'ping' }])
  t.match(JSON.parse(h.raw[2] ?? 'null'), { id: null, error: { code: -32600, message: /2025-11-25/ } })
  t.equal(h.raw.length, 3)
})

t.test('a tools/list page size applies and walks with cursors', async (t) => {
  const h = harness(1)
  const names: string[] = []
  let cursor: string | undefined
  for (let i = 0; i < 5; i++) {
    h.send({ jsonrpc: '2.0', id: i, method: 'tools/list', params: { _meta: META, ...(cursor ? { cursor } : {}) } })
    await tick()
    const r = h.out[h.out.length - 1] as { result: { tools: { name: string }[]; nextCursor?: string } }
    t.equal(r.result.tools.length, 1)
    names.push(...r.result.tools.map((x) => x.name))
    cursor = r.result.nextCursor
    if (!cursor) break
  }
  t.same(names, ['slow', 'fast'])
  assertValid(t, '2026-07-28', h.out, 'tools/list')
})

t.test('-32022 for any non-modern version value, with a bounded string data.requested', async (t) => {
  const h = harness()
  const deep = '['.repeat(50_000) + ']'.repeat(50_000) // JSON text: too deep for JSON.stringify to serialize back
  const versions: string[] = [deep, '{"a":1}', '7', 'true', 'null', JSON.stringify('v'.repeat(10_000)), '"2024-11-05"']
  for (const [i, v] of versions.entries()) {
    h.server.handleLine(
      `{"jsonrpc":"2.0","id":${i},"method":"ping","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/protocolVersion":${v}}}}`,
    )
  }
  await h.server.drain()
  t.equal(h.out.length, versions.length)
  for (const m of h.out) {
    t.match(
      m,
      { error: { code: -32022, data: { supported: ['2026-07-28'], requested: String } } },
      `id ${String(m['id'])}`,
    )
    t.ok(JSON.stringify(m).length < 1000, `id ${String(m['id'])}: the answer stays small`)
  }
  t.equal(
    (h.out.find((m) => m['id'] === 6)!['error'] as { data: { requested: string } }).data.requested,
    '2024-11-05',
    'a short version is echoed exactly',
  )
  assertValid(t, '2026-07-28', h.out)
})
