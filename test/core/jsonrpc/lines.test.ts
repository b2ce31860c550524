import t from 'tap'
import { LineSplitter } from '../../../core/src/jsonrpc/lines.ts'
import type { LineEvent } from '../../../core/src/jsonrpc/lines.ts'

function run(max: number, chunks: (string | Buffer)[], end = true): LineEvent[] {
  const s = new LineSplitter(max)
  const out: LineEvent[] = []
  for (const c of chunks) s.push(typeof c === 'string' ? Buffer.from(c, 'utf8') : c, (e) => out.push(e))
  if (end) s.end((e) => out.push(e))
  return out
}

const lines = (evs: LineEvent[]): string[] => evs.map((e) => (e.kind === 'line' ? e.text : `<oversize ${e.bytes} ${JSON.stringify(e.id)}>`))

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
    t.same(evs, [{ kind: 'oversize', bytes: big.length, id: 42 }, { kind: 'line', text: '{"id":2}' }], `chunks of ${size}`)
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

t.test('the splitter never buffers an oversize line whole', async (t) => {
  const s = new LineSplitter(1000)
  const chunk = Buffer.alloc(64 * 1024, 0x61)
  for (let i = 0; i < 200; i++) s.push(chunk, () => t.fail('no event before the newline'))
  const internal = s as unknown as { parts: Buffer[]; size: number }
  t.equal(internal.parts.length, 0, 'no parts kept')
  t.equal(internal.size, 0, 'no size kept')
  const evs: LineEvent[] = []
  s.push(Buffer.from('\n'), (e) => evs.push(e))
  t.same(evs, [{ kind: 'oversize', bytes: 200 * 64 * 1024, id: null }])
})
