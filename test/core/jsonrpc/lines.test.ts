import fc from 'fast-check'
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

const lines = (evs: LineEvent[]): string[] =>
  evs.map((e) => (typeof e === 'string' ? e : `<oversize ${e.bytes} ${JSON.stringify(e.id)}>`))

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
  t.same(
    lines(
      run(
        1024,
        [...bytes].map((b) => Buffer.from([b])),
      ),
    ),
    want,
    'byte by byte',
  )
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
  t.same(
    run(2048, [late]),
    [{ kind: 'oversize', bytes: late.length - 1, id: null }],
    'id beyond the peeked prefix: null',
  )
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
  const internal = r as unknown as { buf: Buffer; start: number; filled: number }
  t.equal(internal.filled - internal.start, 0, 'none of it kept')
  t.ok(internal.buf.length <= 256 * 1024, 'the buffer did not grow with it')
  r.push(Buffer.from('\n{"id":1}\n'))
  t.same(drain(r, []), [{ kind: 'oversize', bytes: 200 * 64 * 1024, id: null }, '{"id":1}'])
})

t.test('the lines of a chunk are copied: the stream may reuse its chunk at once', async (t) => {
  const r = new LineReader(100)
  const chunk = Buffer.from('{"id":1}\n{"id":2}\n{"id":3')
  r.push(chunk)
  chunk.fill(0x78)
  t.equal(r.next(), '{"id":1}')
  t.equal(r.next(), '{"id":2}')
  t.equal(r.next(), undefined, 'the third is not complete')
  t.ok(r.buffered, 'its start is kept')
  r.push(Buffer.from('}\n'))
  t.equal(r.next(), '{"id":3}')
  t.notOk(r.buffered)
})

t.test('a long line under the limit, in many chunks, with lines waiting before it', async (t) => {
  const long = JSON.stringify({ id: 9, pad: 'é'.repeat(400_000) })
  const bytes = Buffer.from(`{"id":1}\n${long}\n{"id":2}\n`)
  const r = new LineReader(1_000_000)
  const out: LineEvent[] = []
  for (let i = 0; i < bytes.length; i += 65536) {
    r.push(bytes.subarray(i, i + 65536))
    if (i === 0) out.push(r.next() as LineEvent) // the first line taken; the rest waits
  }
  drain(r, out)
  t.same(out, ['{"id":1}', long, '{"id":2}'])
  t.ok((r as unknown as { buf: Buffer }).buf.length <= 256 * 1024, 'back to its usual size once the long line is taken')
})

t.test('takeAhead takes matching complete lines out of order and leaves the rest in order', async (t) => {
  const cancel = (id: number) => `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":${id}}}`
  const r = new LineReader(1000)
  r.push(Buffer.from(`{"id":1}\n${cancel(1)}\r\n{"id":2}\n${cancel(2)}\n{"id":3}\n${cancel(3).slice(0, 20)}`))
  t.equal(r.next(), '{"id":1}')
  const taken: string[] = []
  r.takeAhead('notifications/cancelled', (line) => (taken.push(line), () => {}))
  t.same(taken, [cancel(1), cancel(2)], 'the incomplete third is left for later')
  r.push(Buffer.from(`${cancel(3).slice(20)}\n{"id":4}\n`))
  r.takeAhead('notifications/cancelled', (line) => (taken.push(line), () => {}))
  t.same(taken, [cancel(1), cancel(2), cancel(3)], 'completed by a later chunk, it is taken too')
  t.same(drain(r, []), ['{"id":2}', '{"id":3}', '{"id":4}'], 'taken lines are not yielded again')
})

t.test('takeAhead leaves an oversize line to be reported in order', async (t) => {
  const big = `{"id":9,"method":"notifications/cancelled","pad":"${'x'.repeat(200)}"}`
  const r = new LineReader(100)
  r.push(Buffer.from(`${big}\n{"id":1}\n`))
  const taken: string[] = []
  r.takeAhead('notifications/cancelled', (line) => (taken.push(line), () => {}))
  t.same(taken, [])
  t.same(drain(r, []), [{ kind: 'oversize', bytes: big.length, id: 9 }, '{"id":1}'])
})

t.test(
  'property: any input, any chunking, any interleaving of reads and takes, gives the reference lines',
  async (t) => {
    // The reference: split the whole input at newlines; over-limit lines are reported by size.
    const reference = (bytes: Buffer, max: number): unknown[] => {
      const out: unknown[] = []
      let from = 0
      while (from < bytes.length) {
        let nl = bytes.indexOf(0x0a, from)
        if (nl === -1) nl = bytes.length
        const line = bytes.subarray(from, nl)
        from = nl + 1
        if (line.length > max) out.push({ kind: 'oversize', bytes: line.length })
        else {
          const s = line.toString('utf8').replace(/\r$/, '')
          if (!/^[ \t\r]*$/.test(s)) out.push(s)
        }
      }
      return out
    }
    const piece = fc.oneof(
      fc.constantFrom('\n', '\r\n', ' ', '\t', '{"id":1}', 'é', '𝄞', '\r'),
      fc.string({ maxLength: 40 }),
      fc.nat({ max: 300 }).map((n) => 'x'.repeat(n)),
    )
    const property = fc.property(
      fc.array(piece, { maxLength: 60 }),
      fc.array(fc.nat({ max: 200 }), { maxLength: 40 }),
      fc.integer({ min: 1, max: 400 }),
      fc.array(fc.boolean(), { maxLength: 40 }),
      (pieces, cuts, max, reads) => {
        const bytes = Buffer.from(pieces.join(''), 'utf8')
        const r = new LineReader(max)
        const got: LineEvent[] = []
        let at = 0
        for (let i = 0; at < bytes.length; i++) {
          const size = (cuts[i % Math.max(1, cuts.length)] ?? 0) + 1
          r.push(bytes.subarray(at, at + size))
          at += size
          if (reads[i % Math.max(1, reads.length)]) {
            const e = r.next()
            if (e !== undefined) got.push(e)
          }
        }
        r.end()
        drain(r, got)
        const simplified = got.map((e) => (typeof e === 'string' ? e : { kind: e.kind, bytes: e.bytes }))
        return JSON.stringify(simplified) === JSON.stringify(reference(bytes, max))
      },
    )
    t.doesNotThrow(() => fc.assert(property, { numRuns: 3000 }), '3,000 random inputs agree with the reference')
  },
)

t.test(
  'takeAhead: a line the taker declines stays in its place; a taken one reports when reading passes it',
  async (t) => {
    const r = new LineReader(1000)
    const cancel = '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}'
    const mentions = '{"jsonrpc":"2.0","id":7,"method":"ping","params":{"note":"notifications/cancelled"}}'
    r.push(Buffer.from(`{"id":1}\n${mentions}\n{"id":2}\n${cancel}\n{"id":5}\n`))
    const order: string[] = []
    r.takeAhead('notifications/cancelled', (line) =>
      line.includes('"method":"ping"') ? undefined : () => order.push('cancel passed'),
    )
    for (let e = r.next(); e !== undefined; e = r.next()) order.push(typeof e === 'string' ? e : 'oversize')
    t.same(
      order,
      ['{"id":1}', mentions, '{"id":2}', 'cancel passed', '{"id":5}'],
      'declined line in order; the taken one passes before the line after it',
    )
  },
)

t.test('a buffer grown for a long line shrinks back once the line is taken', async (t) => {
  const r = new LineReader(4 * 1024 * 1024)
  const long = `{"id":1,"pad":"${'a'.repeat(3_000_000)}"}`
  const bytes = Buffer.from(`${long}\n`)
  for (let i = 0; i < bytes.length; i += 65536) r.push(bytes.subarray(i, i + 65536))
  t.equal(r.next(), long)
  // Then ordinary traffic, never letting the reader run dry (a partial line always waits).
  for (let i = 0; i < 200; i++) {
    r.push(Buffer.from(`{"id":${i}}\n{"id":`))
    r.next()
    r.push(Buffer.from(`${i}}\n`))
    r.next()
  }
  t.ok(
    (r as unknown as { buf: Buffer }).buf.length <= 256 * 1024,
    `buffer ${(r as unknown as { buf: Buffer }).buf.length} bytes`,
  )
})

t.test('an oversize report never reads stale bytes past what was received', async (t) => {
  // An earlier line leaves `"id":99` in the reused buffer; the oversized line that follows is
  // shorter than the 4 KiB peek, so a peek past the received bytes would find that stale id.
  const r = new LineReader(1024)
  r.push(Buffer.from(`{"pad":"${'p'.repeat(1090)}","id":99}\n`))
  t.match(r.next(), { kind: 'oversize', id: 99 })
  r.push(Buffer.from(`\n{"x":"${'A'.repeat(1094)}`))
  t.equal(r.next(), undefined)
  r.push(Buffer.from('"}\n'))
  t.same(r.next(), { kind: 'oversize', bytes: 1102, id: null })
  const atEof = new LineReader(1024)
  atEof.push(Buffer.from(`{"pad":"${'p'.repeat(1090)}","id":99}\n`))
  atEof.next()
  atEof.push(Buffer.from(`{"x":"${'B'.repeat(1020)}`))
  atEof.end()
  t.same(atEof.next(), { kind: 'oversize', bytes: 1026, id: null }, 'the same for a last line without newline')
})

t.test('a line of only whitespace of any kind is ignored, as before', async (t) => {
  t.same(lines(run(100, ['\ufeff\n', '\u00a0 \f\v\n', '{"id":1}\n'])), ['{"id":1}'])
})
