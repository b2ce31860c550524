// Calls past the concurrency bound wait their turn; cancellation reaches them there, and a
// cancellation read ahead of its request (cancelAhead) makes that request go unanswered.
import t from 'tap'
import { RpcError } from '../../../core/src/mcp/errors.ts'
import type { CallOptions, CallOutcome, CallPipeline } from '../../../core/src/mcp/pipeline-api.ts'
import { lineText } from '../../../core/src/jsonrpc/writer.ts'
import { McpServer } from '../../../core/src/mcp/server.ts'

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
}

function setup(maxConcurrentCalls: number) {
  const started: (string | number)[] = []
  const releases = new Map<string | number, () => void>()
  const pipeline: CallPipeline = {
    identity: { name: 'fake', title: 'Fake', version: '1.0.0' },
    instructions: 'test',
    tools: () => [],
    resources: () => [],
    resourceTemplates: () => [],
    prompts: () => [],
    async callTool(_name: string, _args: unknown, opts: CallOptions): Promise<CallOutcome> {
      started.push(opts.requestId)
      await new Promise<void>((resolve, reject) => {
        releases.set(opts.requestId, resolve)
        opts.signal.addEventListener('abort', () => reject(opts.signal.reason), { once: true })
      })
      return { text: 'done', isError: false }
    },
    async readResource() {
      throw new RpcError(-32602, 'none')
    },
    getPrompt() {
      throw new RpcError(-32602, 'none')
    },
  }
  const answered: (string | number)[] = []
  let settled = 0
  const server = new McpServer({
    pipeline,
    send: (parts) => answered.push((JSON.parse(lineText(parts)) as { id: string | number }).id),
    pageSize: 100,
    listTtlMs: 0,
    maxConcurrentCalls,
    onCallSettled: () => settled++,
  })
  const call = (id: number) =>
    server.handleLine(
      JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: 'slow', arguments: {}, _meta: META },
      }),
    )
  const cancel = (id: number) =>
    JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id } })
  const tick = () => new Promise((r) => setImmediate(r))
  return { server, started, releases, answered, call, cancel, tick, settledCount: () => settled }
}

t.test('past the bound, calls wait; a waiting call cancelled never starts and never answers', async (t) => {
  const h = setup(2)
  for (const id of [1, 2, 3, 4]) h.call(id)
  await h.tick()
  t.same(h.started, [1, 2], 'two run, two wait')
  t.equal(h.server.inFlightCount, 4, 'waiting calls are in flight too (cancellable)')
  h.server.handleLine(h.cancel(3))
  h.releases.get(1)?.()
  await h.tick()
  await h.tick()
  t.same(h.started, [1, 2, 4], 'the slot skipped the cancelled call')
  h.releases.get(2)?.()
  h.releases.get(4)?.()
  await h.server.drain()
  t.same(h.answered.sort(), [1, 2, 4], 'the cancelled call got no answer')
  t.equal(h.settledCount(), 4, 'onCallSettled told the reader about each call')
})

t.test('cancelAhead: a cancellation read before its request silences that request', async (t) => {
  const h = setup(1)
  h.call(1)
  await h.tick()
  h.server.cancelAhead(h.cancel(2)) // the reader saw it in its queue, ahead of request 2
  h.server.cancelAhead(h.cancel(1)) // and this one names a running call: it is aborted
  h.call(2)
  await h.server.drain()
  t.same(h.started, [1], 'request 2 never ran')
  t.same(h.answered, [], 'neither was answered')
  h.server.cancelAhead('{not json')
  h.server.cancelAhead(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: {} }))
  h.call(3)
  await h.tick()
  h.releases.get(3)?.()
  await h.server.drain()
  t.same(h.answered, [3], 'junk in cancelAhead changes nothing; an unrelated id still runs')
})
