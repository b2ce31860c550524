// JSON-RPC framing, invalid input and process lifecycle, against the bundled binary.
import t from 'tap'
import { modernMeta, startMcp } from '../helpers/mcp-process.ts'
import type { McpProcess } from '../helpers/mcp-process.ts'

const ping = (id: string | number): Record<string, unknown> => ({
  jsonrpc: '2.0',
  id,
  method: 'ping',
  params: { _meta: modernMeta() },
})
const info = (id: string | number): Record<string, unknown> => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'server_info', arguments: {}, _meta: modernMeta() },
})

/** Writes `raw` (one line, no newline) and returns the single line it produced, proven by a ping after it. */
async function answerTo(p: McpProcess, raw: string): Promise<unknown[]> {
  const before = p.lines.length
  try {
    p.expect(JSON.parse(raw))
  } catch {
    // not JSON: answered with id null, nothing to expect
  }
  p.writeRaw(`${raw}\n`)
  const probe = `probe-${before}`
  await p.request('ping', {}, { id: probe })
  return p.lines.slice(before, -1).map((l) => JSON.parse(l) as unknown)
}

t.test('invalid JSON: -32700 with id null', async (t) => {
  const p = startMcp(t)
  for (const raw of [
    '{',
    'nope',
    '{"jsonrpc":"2.0","id":1,"method":"ping"} x',
    '{"a":}',
    "{'id':1}",
    '{"id":1,}',
    '\u0000',
  ]) {
    const out = await answerTo(p, raw)
    t.equal(out.length, 1, `one answer to ${JSON.stringify(raw)}`)
    t.match(
      out[0],
      { jsonrpc: '2.0', id: null, error: { code: -32700, message: String } },
      `-32700 for ${JSON.stringify(raw)}`,
    )
  }
  t.equal((await p.close()).code, 0)
  p.assertValid(t)
})

t.test('not a request: -32600, with the id when it can be told', async (t) => {
  const p = startMcp(t)
  for (const raw of [
    '1',
    '"str"',
    'null',
    'true',
    '{}',
    '{"id":1.5,"jsonrpc":"2.0","method":"ping"}',
    '{"jsonrpc":"2.0","id":{},"method":"ping"}',
    '{"jsonrpc":"2.0","id":null,"method":"ping"}',
  ]) {
    const out = await answerTo(p, raw)
    t.match(out, [{ id: null, error: { code: -32600 } }], `-32600 with id null for ${raw}`)
  }
  const cases: [Record<string, unknown>, number][] = [
    [{ id: 5, method: 'ping' }, -32600],
    [{ jsonrpc: '1.0', id: 6, method: 'ping' }, -32600],
    [{ jsonrpc: '2.0', id: 7 }, -32600],
    [{ jsonrpc: '2.0', id: 8, method: 42 }, -32600],
    [{ jsonrpc: '2.0', id: 9, method: 'ping', params: [1, 2] }, -32602],
    [{ jsonrpc: '2.0', id: 'ten', method: 'tools/list', params: 'x' }, -32602],
  ]
  for (const [msg, code] of cases) {
    const out = await answerTo(p, JSON.stringify(msg))
    t.match(
      out,
      [{ id: msg['id'], error: { code } }],
      `${code} carrying id ${JSON.stringify(msg['id'])} for ${JSON.stringify(msg)}`,
    )
  }
  // Responses sent by the client answer nothing and are not answered.
  t.same(await answerTo(p, '{"jsonrpc":"2.0","id":99,"result":{}}'), [], 'a client response is ignored')
  t.same(
    await answerTo(p, '{"jsonrpc":"2.0","id":98,"error":{"code":1,"message":"x"}}'),
    [],
    'a client error response is ignored',
  )
  t.equal((await p.close()).code, 0)
  p.assertValid(t)
})

t.test('an over-limit line is answered (with its id when it comes first) and the next line served', async (t) => {
  const p = startMcp(t, { args: ['--max-message-bytes', '2048'] })
  const pad = 'x'.repeat(10 * 1024)
  for (const id of [17, 'big-one', 0]) {
    const msg = {
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'server_info', arguments: { pad }, _meta: modernMeta() },
    }
    p.expect(msg)
    const r = p.waitFor(id)
    const line = JSON.stringify(msg)
    t.ok(
      line.startsWith(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},`) && line.length > 10_000,
      'the id comes first in a 10 KB line',
    )
    p.writeRaw(`${line}\n`)
    const next = p.request('ping', {}, { id: `after-${id}` })
    const err = await r
    t.equal(err.error?.code, -32600, `over-limit id ${JSON.stringify(id)}: -32600`)
    t.match(err.error?.message, /2048/, 'the message names the limit')
    t.ok((await next).result, 'the next line is still served')
  }
  // The id comes last: nothing names the request, so the answer has id null.
  const before = p.lines.length
  p.writeRaw(`{"jsonrpc":"2.0","method":"ping","params":{"pad":"${pad}"},"id":55}\n`)
  await p.request('ping', {}, { id: 'after-late' })
  t.match(
    JSON.parse(p.lines[before] ?? 'null'),
    { id: null, error: { code: -32600 } },
    'id after the limit: -32600 with id null',
  )
  // A line written in many small chunks is counted as a whole.
  const big = JSON.stringify(info('chunked')).replace('"arguments":{}', `"arguments":{"pad":"${pad}"}`)
  p.expect(info('chunked'))
  const chunked = p.waitFor('chunked')
  for (let i = 0; i < big.length; i += 700) p.writeRaw(big.slice(i, i + 700))
  p.writeRaw('\n')
  t.equal((await chunked).error?.code, -32600, 'a chunked over-limit line is refused too')
  // Just under the limit is fine.
  const fits = { ...info('fits') }
  const room = 2048 - JSON.stringify(fits).length - 20
  ;(fits['params'] as Record<string, unknown>)['_meta'] = modernMeta({ pad: 'y'.repeat(room) })
  t.ok(JSON.stringify(fits).length <= 2048)
  p.send(fits)
  t.ok((await p.waitFor('fits')).result, 'a line under the limit is served')
  t.equal((await p.close()).code, 0)
  p.assertValid(t)
})

t.test('CRLF, blank lines, whitespace lines and split writes are tolerated', async (t) => {
  const p = startMcp(t)
  p.writeRaw('\n\r\n   \n\t\r\n')
  p.send(ping('crlf'), '\r\n')
  p.writeRaw('\r\n\n')
  const split = JSON.stringify(ping('split'))
  p.expect(ping('split'))
  const bytes = Buffer.from(`${split}\r\n`)
  for (const b of bytes) p.writeRaw(Buffer.from([b]))
  const unicode = { ...ping('ünï 🙂'), params: { _meta: modernMeta({ note: '€𝄞' }) } }
  p.expect(unicode)
  const ub = Buffer.from(`${JSON.stringify(unicode)}\n`)
  p.writeRaw(ub.subarray(0, ub.indexOf(0xf0) + 2)) // split inside a 4-byte character
  await new Promise((r) => setTimeout(r, 30))
  p.writeRaw(ub.subarray(ub.indexOf(0xf0) + 2))
  t.ok((await p.waitFor('crlf')).result, 'CRLF line served')
  t.ok((await p.waitFor('split')).result, 'a line written byte by byte is served')
  t.ok((await p.waitFor('ünï 🙂')).result, 'a line split inside a UTF-8 character is served')
  t.equal(p.lines.length, 3, 'blank lines produced nothing')
  t.equal((await p.close()).code, 0)
  p.assertValid(t)
})

t.test('the last line without a newline is served at EOF', async (t) => {
  const p = startMcp(t)
  p.expect(ping('last'))
  p.writeRaw(JSON.stringify(ping('last')))
  const r = p.waitFor('last')
  t.equal((await p.close()).code, 0)
  t.ok((await r).result)
  p.assertValid(t)
})

t.test('EOF with calls in flight: every response delivered, then exit 0', async (t) => {
  const p = startMcp(t)
  const ids: (string | number)[] = []
  for (let i = 0; i < 12; i++) {
    const id = i % 2 === 0 ? i : `s${i}`
    ids.push(id)
    p.send(i % 3 === 0 ? { jsonrpc: '2.0', id, method: 'tools/list', params: { _meta: modernMeta() } } : info(id))
  }
  const answers = Promise.all(ids.map((id) => p.waitFor(id)))
  const exit = await p.close() // stdin ends right behind the requests
  t.equal(exit.code, 0, 'exit 0')
  const rs = await answers
  t.equal(rs.length, 12, 'all twelve answered')
  for (const r of rs) t.ok(r.result, `result for ${JSON.stringify(r.id)}`)
  t.equal(p.lines.length, 12, 'and nothing else')
  p.assertValid(t)
})

t.test('EOF right after initialize and a legacy call', async (t) => {
  const p = startMcp(t)
  p.send({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
  })
  p.send({ jsonrpc: '2.0', method: 'notifications/initialized' })
  p.send({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'server_info', arguments: {} } })
  const two = p.waitFor(2)
  t.equal((await p.close()).code, 0)
  t.match(await two, { result: { structuredContent: { name: 'ag-mcp' } } })
  p.assertValid(t)
})

t.test('SIGTERM: exit 0, and requests read before it are all answered', async (t) => {
  const p = startMcp(t)
  await p.request('ping', {}, { id: 'ready' })
  const count = Math.floor(4000 / (JSON.stringify(info('t00')).length + 1))
  t.ok(count >= 15, `${count} requests in one write`)
  const ids = Array.from({ length: count }, (_, i) => `t${String(i).padStart(2, '0')}`)
  const lines = ids.map((id) => JSON.stringify(info(id))).join('\n') + '\n'
  t.ok(Buffer.byteLength(lines) < 4096, 'one atomic pipe write, so the process reads all of it or none')
  for (const id of ids) p.expect(info(id))
  p.writeRaw(lines)
  await new Promise((r) => setTimeout(r, 5))
  p.child.kill('SIGTERM')
  const exit = await p.exited
  t.same(exit, { code: 0, signal: null }, 'exit 0 on SIGTERM')
  const answered = p.responses.filter((r) => typeof r.id === 'string' && r.id.startsWith('t'))
  t.ok(
    answered.length === 0 || answered.length === count,
    `all or nothing of one read (got ${answered.length} of ${count})`,
  )
  for (const r of answered) t.ok(r.result, `result for ${JSON.stringify(r.id)}`)
  p.assertValid(t)
})

t.test('SIGTERM while stdout is full: the backlog is still delivered before exit', async (t) => {
  const p = startMcp(t)
  await p.request('ping', {}, { id: 'ready' })
  p.child.stdout.pause()
  const n = 3000
  let text = ''
  // The first is a tool call, which logs a line: the sign that requests have been read.
  for (let i = 1; i <= n; i++) {
    const m =
      i === 1
        ? { jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'server_info', _meta: modernMeta() } }
        : { jsonrpc: '2.0', id: i, method: 'tools/list', params: { _meta: modernMeta() } }
    p.expect(m)
    text += `${JSON.stringify(m)}\n`
  }
  p.writeRaw(text)
  await p.waitForStderr(/ info tool call /)
  p.child.kill('SIGTERM')
  await p.waitForStderr(/ info SIGTERM: finishing in-flight calls/)
  t.equal(p.child.exitCode, null, 'still alive, after taking the signal, while its answers are unread')
  p.child.stdout.resume()
  const exit = await p.exited
  t.same(exit, { code: 0, signal: null }, 'exit 0 once the backlog is delivered')
  t.ok(
    p.responses.some((r) => r.id === 1),
    'the tool call read before SIGTERM is answered',
  )
  // tools/list answers in order; the tool call (id 1) may be answered among them.
  const got = p.responses.filter((r) => typeof r.id === 'number' && r.id > 1).map((r) => r.id as number)
  t.same(
    got,
    Array.from({ length: got.length }, (_, i) => i + 2),
    `the answers are a gap-free prefix: none lost on the way out (${got.length} lists)`,
  )
  p.assertValid(t)
})

t.test('stdout carries JSON-RPC only; stderr carries no stack trace', async (t) => {
  const p = startMcp(t)
  await answerTo(p, '{')
  await answerTo(p, JSON.stringify(info('x')))
  await p.request('tools/call', { name: 'server_info', arguments: { junk: [1, { a: null }] } })
  await p.request('tools/call', { name: 'nope' })
  await p.close()
  for (const l of p.lines) t.doesNotThrow(() => JSON.parse(l), 'a JSON line')
  t.notMatch(p.stderr, /\n\s+at .+:\d+:\d+/, 'no stack trace on stderr')
  p.assertValid(t)
})
