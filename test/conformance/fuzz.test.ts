// 20,000 random and mutated JSON-RPC lines into one ag-mcp process. Deterministic: the seed
// is printed, and FUZZ_SEED=<n> replays a run. For each line the test predicts, from the
// JSON-RPC 2.0 rules alone, whether it deserves an answer and with which id; it then checks
// that exactly those answers came, each once, each valid for its revision, and nothing else.
import t from 'tap'
import { modernMeta, startMcp } from '../helpers/mcp-process.ts'

const SEED = Number(process.env['FUZZ_SEED'] ?? 0x5eed2026) >>> 0
const LINES = 20_000
/** Lines above this are over-limit (the process runs with --max-message-bytes). */
const LIMIT = 256 * 1024

/** mulberry32: small, fast, good enough to drive a fuzzer, and reproducible. */
function prng(seed: number): () => number {
  let a = seed
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let x = a
    x = Math.imul(x ^ (x >>> 15), x | 1)
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61)
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
}

const rnd = prng(SEED)
const int = (n: number): number => Math.floor(rnd() * n)
const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)] as T
const chance = (p: number): boolean => rnd() < p

const METHODS = [
  'ping',
  'server/discover',
  'initialize',
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'prompts/list',
  'prompts/get',
  'logging/setLevel',
  'resources/subscribe',
  'resources/unsubscribe',
  'subscriptions/listen',
  'completion/complete',
  'tasks/list',
  'tasks/get',
  'notifications/initialized',
  'notifications/cancelled',
  'sampling/createMessage',
  '',
  ' ',
  'TOOLS/LIST',
  'tools/list\u0000',
  'tools/\ud800',
  'rpc.discover',
  '__proto__',
  'constructor',
  'a'.repeat(300),
]
const TOOLS = ['server_info', 'no_such_tool', '', 'SERVER_INFO', 'server_info\u200b', '__proto__', '\udc00']
const VERSIONS = ['2026-07-28', '2025-11-25', '2025-06-18', '2024-11-05', '2099-01-01', '', 'latest']

let nextId = 0
/** Request ids live in a namespace ("fz:<n>" or 10^9+n) that junk values never produce. */
function freshId(): string | number {
  nextId++
  return chance(0.5) ? `fz:${nextId}` : 1_000_000_000 + nextId
}

function junkString(): string {
  const alphabet = 'abcXYZ019 _-/.é€𝄞\u2028\u0000\u001b"\\'
  let s = ''
  const n = int(12)
  for (let i = 0; i < n; i++) s += alphabet[int(alphabet.length)]
  if (chance(0.1)) s += '\ud800'
  if (chance(0.1)) s += '\udfff'
  return s
}

function junkValue(depth = 0): unknown {
  switch (int(depth > 3 ? 7 : 9)) {
    case 0:
      return null
    case 1:
      return chance(0.5)
    case 2:
      return int(2000) - 1000
    case 3:
      return pick([1.5, -0.25, 1e308, -1e308, Number.MAX_SAFE_INTEGER + 2, 2 ** 63, 1e-300])
    case 4:
      return junkString()
    case 5:
      return ''
    case 6:
      return pick([[], {}, [null], { '': '' }])
    case 7:
      return Array.from({ length: int(4) }, () => junkValue(depth + 1))
    default: {
      const o: Record<string, unknown> = {}
      for (let i = int(4); i > 0; i--) o[junkString()] = junkValue(depth + 1)
      return o
    }
  }
}

function paramsFor(method: string): Record<string, unknown> {
  const p: Record<string, unknown> = {}
  switch (method) {
    case 'tools/call':
      p['name'] = pick(TOOLS)
      if (chance(0.8)) p['arguments'] = chance(0.3) ? {} : junkValue()
      break
    case 'initialize':
      // 2025-03-26 is never requested: it is the one revision that accepts batches, and the
      // answer count of an array line must not depend on which initialize came first.
      p['protocolVersion'] = pick(['2025-11-25', '2025-06-18', '2024-11-05', junkString()])
      p['capabilities'] = chance(0.8) ? {} : junkValue()
      p['clientInfo'] = { name: 'fuzz', version: '0' }
      break
    case 'resources/read':
      p['uri'] = chance(0.7) ? `agentgit://${junkString()}` : junkValue()
      break
    case 'prompts/get':
      p['name'] = junkString()
      if (chance(0.5)) p['arguments'] = junkValue()
      break
    case 'notifications/cancelled':
      p['requestId'] = chance(0.5) ? junkString() : int(1000)
      break
    default:
      if (chance(0.3)) p['cursor'] = chance(0.5) ? junkString() : junkValue()
  }
  if (chance(0.6))
    p['_meta'] = chance(0.8)
      ? modernMeta()
      : {
          'io.modelcontextprotocol/protocolVersion': pick(VERSIONS),
          ...(chance(0.5) ? { 'io.modelcontextprotocol/clientCapabilities': junkValue() } : {}),
        }
  return p
}

function skeleton(notification = chance(0.15)): Record<string, unknown> {
  const method = pick(METHODS)
  const m: Record<string, unknown> = { jsonrpc: '2.0' }
  if (!notification) m['id'] = freshId()
  m['method'] = method
  if (chance(0.9)) m['params'] = paramsFor(method)
  return m
}

/** One field of a valid skeleton replaced by a value of a wrong (or right) type. */
function wrongTypes(): Record<string, unknown> {
  const m = skeleton()
  const field = pick([
    'jsonrpc',
    'id',
    'method',
    'params',
    'params.name',
    'params.arguments',
    'params._meta',
    'params.cursor',
    'extra',
  ])
  const v = junkValue()
  if (field.startsWith('params.')) {
    const params = (typeof m['params'] === 'object' && m['params'] !== null ? m['params'] : {}) as Record<
      string,
      unknown
    >
    params[field.slice(7)] = v
    m['params'] = params
  } else if (chance(0.2)) delete m[field]
  else m[field] = v
  return m
}

function deep(n: number): string {
  return '['.repeat(n) + ']'.repeat(n)
}

/** Byte-level mutations of a valid line: flips, deletions, insertions, truncation, splices. */
function mutate(line: Buffer): Buffer {
  let b = Buffer.from(line)
  for (let k = 1 + int(3); k > 0; k--) {
    const at = int(b.length + 1)
    switch (int(6)) {
      case 0:
        if (b.length > 0) b[Math.min(at, b.length - 1)] = int(256)
        break
      case 1:
        b = Buffer.concat([b.subarray(0, at), b.subarray(at + 1 + int(8))])
        break
      case 2:
        b = Buffer.concat([
          b.subarray(0, at),
          Buffer.from(pick(['"', '{', '}', '[', ']', ',', ':', '\\', '\\u', '\\ud800', '1e999', 'null', ' ', '\r'])),
          b.subarray(at),
        ])
        break
      case 3:
        b = b.subarray(0, at)
        break
      case 4:
        b = Buffer.concat([
          b.subarray(0, at),
          Buffer.from([0xc0 + int(0x40), 0x80 + int(0x40)].slice(0, 1 + int(2))),
          b.subarray(at),
        ])
        break
      default:
        b = Buffer.concat([b.subarray(0, at), b.subarray(int(b.length), int(b.length + 1)), b.subarray(at)])
    }
  }
  return b
}

function randomBytes(): Buffer {
  const b = Buffer.alloc(1 + int(200))
  for (let i = 0; i < b.length; i++) b[i] = int(256)
  return b
}

function withInvalidUtf8(): Buffer {
  const s = JSON.stringify({
    ...skeleton(false),
    method: 'tools/call',
    params: { name: 'server_info', arguments: { note: 'PLACEHOLDER' }, _meta: modernMeta() },
  })
  const [before, after] = s.split('PLACEHOLDER') as [string, string]
  const bad = pick([
    [0xff],
    [0xc3],
    [0xe2, 0x82],
    [0xed, 0xa0, 0x80],
    [0xf4, 0x90, 0x80, 0x80],
    [0x80],
    [0xc0, 0xaf],
    [0xfe, 0xfe],
  ])
  return Buffer.concat([Buffer.from(before), Buffer.from(bad), Buffer.from(after)])
}

function generate(): Buffer {
  const r = rnd()
  if (r < 0.3) return Buffer.from(JSON.stringify(skeleton()))
  if (r < 0.45) return Buffer.from(JSON.stringify(wrongTypes()))
  if (r < 0.65) return mutate(Buffer.from(JSON.stringify(skeleton())))
  if (r < 0.7) return randomBytes()
  if (r < 0.75) return withInvalidUtf8()
  if (r < 0.78) {
    // Lone surrogates as escapes, in every string position.
    const s = pick(['\\ud800', '\\udfff', '\\ud83d', '\\udc00\\ud800'])
    return Buffer.from(
      pick([
        `{"jsonrpc":"2.0","id":"fz:s${nextId++}${s}","method":"ping","params":{"_meta":${JSON.stringify(modernMeta())}}}`,
        `{"jsonrpc":"2.0","id":${JSON.stringify(freshId())},"method":"tools/${s}list"}`,
        `{"jsonrpc":"2.0","id":${JSON.stringify(freshId())},"method":"tools/call","params":{"name":"server_info","arguments":{"${s}":"${s}"},"_meta":${JSON.stringify(modernMeta())}}}`,
        `{"jsonrpc":"2.0","method":"notifications/${s}"}`,
      ]),
    )
  }
  if (r < 0.8) {
    // Huge and odd numbers where ids and values go.
    const n = pick([
      '1e400',
      '-1e400',
      '123456789012345678901234567890',
      '9007199254740993',
      '-0',
      '1.0',
      '0.0000001',
      '1E2',
    ])
    return Buffer.from(
      pick([
        `{"jsonrpc":"2.0","id":${n},"method":"ping"}`,
        `{"jsonrpc":"2.0","id":${JSON.stringify(freshId())},"method":"tools/list","params":{"cursor":${n},"_meta":${JSON.stringify(modernMeta())}}}`,
        `{"jsonrpc":"2.0","id":${JSON.stringify(freshId())},"method":"tools/call","params":{"name":"server_info","arguments":{"n":${n}},"_meta":${JSON.stringify(modernMeta())}}}`,
      ]),
    )
  }
  if (r < 0.805) {
    const n = pick([10, 1000, 10_000])
    return Buffer.from(
      pick([
        deep(n),
        `{"jsonrpc":"2.0","id":${JSON.stringify(freshId())},"method":"tools/call","params":{"name":"server_info","arguments":{"a":${deep(n)}},"_meta":${JSON.stringify(modernMeta())}}}`,
        `{"jsonrpc":"2.0","id":${JSON.stringify(freshId())},"method":"ping","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":${deep(n)},"io.modelcontextprotocol/clientCapabilities":{}}}}`,
      ]),
    )
  }
  if (r < 0.81) {
    // Very long strings; some beyond the line limit (with the id first, or last).
    const len = pick([50_000, 200_000, LIMIT + 1000])
    const id = JSON.stringify(freshId())
    return Buffer.from(
      chance(0.7)
        ? `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"server_info","arguments":{"s":"${'x'.repeat(len)}"},"_meta":${JSON.stringify(modernMeta())}}}`
        : `{"jsonrpc":"2.0","method":"ping","params":{"s":"${'y'.repeat(len)}"},"id":${id}}`,
    )
  }
  if (r < 0.84) return Buffer.from(JSON.stringify(pick([[], [skeleton()], [skeleton(), skeleton(true)], [1, 2], [[]]])))
  if (r < 0.87)
    return Buffer.from(
      JSON.stringify({
        jsonrpc: '2.0',
        id: freshId(),
        ...(chance(0.5) ? { result: junkValue() } : { error: { code: int(100), message: junkString() } }),
      }),
    )
  return Buffer.from(JSON.stringify(junkValue()))
}

type Id = string | number
const isId = (x: unknown): x is Id => typeof x === 'string' || (typeof x === 'number' && Number.isSafeInteger(x))
const key = (id: unknown): string => JSON.stringify(id)

/** What JSON-RPC 2.0 says this line deserves: no answer, or one answer with this id (null if unknown). */
function predict(
  line: Buffer,
  text: string,
  value: unknown,
  parsed: boolean,
): { answer: false } | { answer: true; id: Id | null } {
  if (line.length > LIMIT) {
    const m = /^\{"jsonrpc":"2\.0","id":("fz:\d+"|\d+),/.exec(text)
    return { answer: true, id: m ? (JSON.parse(m[1] as string) as Id) : null }
  }
  if (!parsed) return { answer: true, id: null }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { answer: true, id: null }
  const m = value as Record<string, unknown>
  const hasId = 'id' in m
  const id = hasId && isId(m['id']) ? m['id'] : null
  if (m['jsonrpc'] !== '2.0') return { answer: true, id }
  if (!('method' in m)) return hasId && ('result' in m || 'error' in m) ? { answer: false } : { answer: true, id }
  if (typeof m['method'] !== 'string') return { answer: true, id }
  if (hasId && id === null) return { answer: true, id: null }
  return id === null ? { answer: false } : { answer: true, id }
}

/** Lines the model above cannot predict are skipped (and counted): see the comments. */
function unpredictable(value: unknown, text: string, used: Set<string>): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const m = value as Record<string, unknown>
  const params = (typeof m['params'] === 'object' && m['params'] !== null ? m['params'] : {}) as Record<string, unknown>
  // An id used twice could be in flight twice; one answer per line still holds, but which
  // answer is whose cannot be told.
  if ('id' in m && isId(m['id']) && used.has(key(m['id']))) return true
  // A cancellation naming one of our requests would legitimately suppress its answer.
  if (
    m['method'] === 'notifications/cancelled' &&
    isId(params['requestId']) &&
    /^(fz:|1\d{9})/.test(String(params['requestId']))
  )
    return true
  // initialize selecting 2025-03-26 would switch batches on for the rest of the process.
  if (m['method'] === 'initialize' && text.includes('2025-03-26')) return true
  return false
}

t.test(`fuzz: ${LINES} lines, seed ${SEED}`, async (t) => {
  t.comment(`fuzz seed ${SEED} (replay with FUZZ_SEED=${SEED})`)
  const started = Date.now()
  const p = startMcp(t, { args: ['--max-message-bytes', String(LIMIT), '--log-level', 'warn'] })
  const expected = new Map<string, number>()
  let expectedNull = 0
  let expectedTotal = 0
  let skipped = 0
  const used = new Set<string>()
  const chunks: Buffer[] = []
  const kinds = { answered: 0, silent: 0, parseErrors: 0, overLimit: 0 }
  let written = 0
  while (written < LINES) {
    let line = generate()
    // A raw newline would split the line in two; the fuzzer means one line per entry.
    if (line.includes(0x0a)) line = Buffer.from(line.toString('latin1').replace(/\n/g, ' '), 'latin1')
    const text = line.toString('utf8')
    let value: unknown
    let parsed = true
    try {
      value = JSON.parse(text.endsWith('\r') ? text.slice(0, -1) : text)
    } catch {
      parsed = false
    }
    if (text.trim() === '' || text === '\r') continue // blank lines are ignored by design
    if (parsed && line.length <= LIMIT && unpredictable(value, text, used)) {
      skipped++
      continue
    }
    const pr = predict(line, text, value, parsed)
    if (line.length > LIMIT) kinds.overLimit++
    else if (!parsed) kinds.parseErrors++
    if (pr.answer) {
      kinds.answered++
      expectedTotal++
      if (pr.id === null) expectedNull++
      else {
        expected.set(key(pr.id), (expected.get(key(pr.id)) ?? 0) + 1)
        used.add(key(pr.id))
      }
    } else kinds.silent++
    if (parsed && line.length <= LIMIT) p.expect(value)
    else if (line.length > LIMIT && pr.answer && pr.id !== null)
      p.expect({ jsonrpc: '2.0', id: pr.id, method: 'tools/call' })
    chunks.push(line, Buffer.from(chance(0.1) ? '\r\n' : '\n'))
    written++
  }
  t.equal(written, LINES, `${LINES} lines written`)
  t.comment(
    `lines: ${written}, expected answers: ${expectedTotal} (${expectedNull} with id null), silent: ${kinds.silent}, parse errors: ${kinds.parseErrors}, over-limit: ${kinds.overLimit}, regenerated: ${skipped}`,
  )
  const input = Buffer.concat(chunks)
  // Written in uneven slices, so line boundaries fall anywhere in the reads.
  for (let i = 0; i < input.length; ) {
    const n = 1 + int(256 * 1024)
    p.writeRaw(input.subarray(i, i + n))
    i += n
  }
  const end = p.request('ping', {}, { id: 'fuzz:end' })
  await p.waitForLines(expectedTotal + 1, 60_000)
  t.ok((await end).result, 'a ping after the fuzz is answered')
  t.equal(p.child.exitCode, null, 'the process is still running before EOF')
  t.equal(p.child.signalCode, null, 'and was not killed')
  const exit = await p.close()
  t.same(exit, { code: 0, signal: null }, 'exit 0 at EOF')

  t.equal(p.lines.length, expectedTotal + 1, 'exactly one line per line that deserves an answer, and nothing else')
  const got = new Map<string, number>()
  let gotNull = 0
  for (const r of p.responses) {
    if (r.id === null) gotNull++
    else got.set(key(r.id), (got.get(key(r.id)) ?? 0) + 1)
  }
  got.delete(key('fuzz:end'))
  t.equal(gotNull, expectedNull, 'answers with id null: one per unparseable or unidentifiable line')
  const missing = [...expected].filter(([k, n]) => got.get(k) !== n).slice(0, 10)
  const extra = [...got].filter(([k]) => !expected.has(k)).slice(0, 10)
  t.same(missing, [], 'every request with a valid id got exactly one answer')
  t.same(extra, [], 'no answer to an id that deserved none')
  t.equal(p.values.filter(Array.isArray).length, 0, 'no batch answers (batches are refused outside 2025-03-26)')
  p.assertValid(t, 'every stdout line is one JSON-RPC message valid for its revision')
  t.notMatch(p.stderr, /\n\s+at .+:\d+:\d+/, 'no stack trace on stderr')
  t.notMatch(p.stderr, /Error:|TypeError|RangeError/, 'no error dumps on stderr')
  t.comment(`fuzz took ${Date.now() - started} ms`)
})
