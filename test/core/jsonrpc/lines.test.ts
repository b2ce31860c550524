import t from 'tap'
import { LineReader } from '../../../core/src/jsonrpc/lines.ts'
import type { LineEvent } from '../../../core/src/jsonrpc/lines.ts'

/** Everything the reader yields, taking lines after each chunk as the stdio loop does. */
function drain(r: LineReader, out: LineEvent[]): LineEvent[] {
  for (let e = r.next(); e !== undefined; e = r.next()) out.push(e)
  return out
}

function run(max: number, chunks: (string | Buffer)[], end = true): LineEvent[] {
  const r = new LineReader(max)
  const out: LineEvent[] = []
  for (const c of chunks) {
    r.push(typeof c === 'string' ? Buffer.from(c, 'utf8') : c)
    drain(r, out)
  }
  if (end) r.end()
  return drain(r, out)
}

const lines = (evs: LineEvent[]): string[] => evs.map((e) => (typeof e === 'string' ? e : `<oversize ${e.bytes} ${JSON.stringify(e.id)}>`))

t.test('a chunk boundary anywhere yields the same lines', async (t) => {
  const text = '{"a":1}\n{"b":"é€𝄞"}\r\n\n  \r\n{"c":[1,2]}\nlast'
  const bytes = Buffer.from(text, 'utf8')
  const want = ['{"a":1}', '{"b":"é€𝄞"}', '{"c":[1,2]}', 'last']
  t.same(lines(run(1024, [bytes])), want, 'one chunk')
  for (let i = 0; i <= bytes.length; i++) {
    const got = lines(run(1024, [bytes.subarray(0, i), bytes.subarray(i)]))
    if (JSON.stringify(got) !== JSON.stringify(want)) t.fail(`split at byte ${i}: ${JSON.stringify(got)}`)
  }
  // Three-way splits, including inside multi-byte characters and between \r and \n.
  for (let i = 0; i <= bytes.length; i += 3) {
    for (let j = i; j <= bytes.length; j += 2) {
      const got = lines(run(1024, [bytes.subarray(0, i), bytes.subarray(i, j), bytes.subarray(j)]))
      if (JSON.stringify(got) !== JSON.stringify(want)) t.fail(`split at ${i},${j}: ${JSON.stringify(got)}`)
    }
  }
  // One byte at a time.
  t.same(lines(run(1024, [...bytes].map((b) => Buffer.from([b])))), want, 'byte by byte')
})

t.test('CRLF is stripped, a lone CR inside a line is kept, blank and whitespace lines are ignored', async (t) => {
  t.same(lines(run(100, ['a\r\n', '\r\n', '\n', ' \t \r\n', 'b\rc\n'])), ['a', 'b\rc'])
})

t.test('the last line without a newline counts only at end()', async (t) => {
  t.same(lines(run(100, ['x\ny'], false)), ['x'], 'not yet')
  t.same(lines(run(100, ['x\ny'])), ['x', 'y'], 'at end')
  t.same(lines(run(100, ['x\n'])), ['x'], 'nothing extra after a final newline')
  t.same(lines(run(100, [])), [], 'empty input')
})

t.test('a line of exactly the limit passes; one byte more is oversize', async (t) => {
  t.same(lines(run(5, ['12345\n'])), ['12345'])
  const evs = run(5, ['123456\n', 'ok\n'])
  t.same(lines(evs), ['<oversize 6 null>', 'ok'])
})

t.test('an oversize line is reported once with its id, its bytes counted, and the next line served', async (t) => {
  const big = `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"pad":"${'x'.repeat(10_000)}"}}`
  const bytes = Buffer.from(`${big}\n{"id":2}\n`)
  for (const size of [1, 7, 100, 4096, bytes.length]) {
    const chunks: Buffer[] = []
    for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size))
    const evs = run(2048, chunks)
    t.same(evs, [{ kind: 'oversize', bytes: big.length, id: 42 }, '{"id":2}'], `chunks of ${size}`)
  }
})

t.test('an oversize line whose id comes late, or is a string, or is absent', async (t) => {
  const late = `{"params":{"pad":"${'y'.repeat(5000)}"},"id":7}\n`
  t.same(run(2048, [late]), [{ kind: 'oversize', bytes: late.length - 1, id: null }], 'id beyond the peeked prefix: null')
  const str = `{"jsonrpc":"2.0","id":"abc-é","pad":"${'z'.repeat(3000)}"}\n`
  t.same(run(2048, [str]), [{ kind: 'oversize', bytes: Buffer.byteLength(str) - 1, id: 'abc-é' }])
  const none = `[${'1,'.repeat(2000)}1]\n`
  t.same(run(2048, [none]), [{ kind: 'oversize', bytes: none.length - 1, id: null }])
})

t.test('an oversize final line without newline is still reported at end()', async (t) => {
  t.same(run(10, ['{"id":3,"x":"0123456789"}']), [{ kind: 'oversize', bytes: 25, id: 3 }])
})

t.test('the reader never buffers an oversize line whole', async (t) => {
  const r = new LineReader(1000)
  const chunk = Buffer.alloc(64 * 1024, 0x61)
  for (let i = 0; i < 200; i++) {
    r.push(chunk)
    if (r.next() !== undefined) t.fail('no event before the newline')
  }
  const internal = r as unknown as { parts: Buffer[]; size: number; chunks: Buffer[] }
  t.equal(internal.parts.length, 0, 'no parts kept')
  t.equal(internal.size, 0, 'no size kept')
  t.equal(internal.chunks.length, 0, 'no chunk kept')
  r.push(Buffer.from('\n'))
  t.same(drain(r, []), [{ kind: 'oversize', bytes: 200 * 64 * 1024, id: null }])
})

t.test('lines wait in the chunk they came in until taken, one at a time', async (t) => {
  const r = new LineReader(100)
  r.push(Buffer.from('{"id":1}\n{"id":2}\n{"id":3'))
  t.ok(r.buffered)
  t.equal(r.next(), '{"id":1}')
  t.equal(r.next(), '{"id":2}')
  t.equal(r.next(), undefined, 'the third is not complete')
  t.notOk(r.buffered, 'its start moved out of the chunk')
  r.push(Buffer.from('}\n'))
  t.equal(r.next(), '{"id":3}')
})

t.test('takeAhead takes matching complete lines out of order and leaves the rest in order', async (t) => {
  const cancel = (id: number) => `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":${id}}}`
  const r = new LineReader(1000)
  r.push(Buffer.from(`{"id":1}\n${cancel(1)}\r\n{"id":2}\n${cancel(2)}\n{"id":3}\n${cancel(3).slice(0, 20)}`))
  t.equal(r.next(), '{"id":1}')
  const taken: string[] = []
  r.takeAhead('notifications/cancelled', (line) => taken.push(line))
  t.same(taken, [cancel(1), cancel(2)], 'the incomplete third is left for later')
  r.push(Buffer.from(`${cancel(3).slice(20)}\n`))
  r.takeAhead('notifications/cancelled', (line) => taken.push(line))
  t.equal(taken.length, 2, 'a line begun in an earlier chunk is not taken ahead')
  t.same(drain(r, []), ['{"id":2}', '{"id":3}', cancel(3)], 'taken lines are not yielded again')
})

t.test('takeAhead leaves an oversize line to be reported in order', async (t) => {
  const big = `{"id":9,"method":"notifications/cancelled","pad":"${'x'.repeat(200)}"}`
  const r = new LineReader(100)
  r.push(Buffer.from(`${big}\n{"id":1}\n`))
  const taken: string[] = []
  r.takeAhead('notifications/cancelled', (line) => taken.push(line))
  t.same(taken, [])
  t.same(drain(r, []), [{ kind: 'oversize', bytes: big.length, id: 9 }, '{"id":1}'])
})
