// Every AGWP error code from the real ag-server becomes an isError tool result whose upstream
// message is quoted inside a fence; a hostile upstream message is sanitized, scrubbed and bounded.
import t from 'tap'
import { FAKE_TOKEN, HOSTILE, agwpFixture, client, mcp, recorder, writeTokenFile } from './agwp-fixture.ts'
import type { CallResult } from './agwp-fixture.ts'

const fx = await agwpFixture()
t.teardown(() => fx.close())

function failed(
  t: { ok(v: unknown, m: string): unknown; match(a: unknown, b: unknown, m: string): unknown },
  r: CallResult,
  tool: string,
  status: number,
  code: string,
  quoted: RegExp,
): void {
  t.ok(r.isError, `${tool}: isError`)
  const [summary = '', open = '', ...rest] = r.text.split('\n')
  t.match(
    summary,
    new RegExp(`^${tool}: failed: the upstream answered ${status} ${code}\\.`),
    `${tool}: a trusted summary naming ${status} ${code}`,
  )
  const id = /^<<<AGENTGIT-DATA ([0-9a-f]+) kind=error\.message>>>$/.exec(open)?.[1]
  t.ok(id, `${tool}: the upstream message follows in an error.message fence`)
  t.match(rest.join('\n'), quoted, `${tool}: the message is quoted`)
  t.match(rest.at(-1), `<<<END-AGENTGIT-DATA ${id}>>>`, `${tool}: and the fence is closed`)
}

t.test('401, 403, 404, 409, 422 from the real server (modern and a legacy era)', async (t) => {
  for (const era of ['2026-07-28', '2025-06-18'] as const) {
    const task = await fx.task(`errors ${era}`)
    const alice = mcp(t, fx.upstream, fx.tokenFile('alice'))
    const a = await client(alice, era)
    const bogus = mcp(t, fx.upstream, writeTokenFile(fx.dir, 'bogus', 'agwp_' + 'b'.repeat(43)))
    const b = await client(bogus, era)
    const reed = mcp(t, fx.upstream, fx.tokenFile('reed'))
    const r = await client(reed, era)
    failed(t, await b.call('whoami'), 'whoami', 401, 'unauthenticated', /unknown token/)
    failed(
      t,
      await r.call('workspace_create', { repo: 'demo' }),
      'workspace_create',
      403,
      'forbidden',
      /role 'reader' on 'demo' is below 'contributor'/,
    )
    failed(
      t,
      await a.call('file_read', { repo: 'demo', path: 'missing.txt' }),
      'file_read',
      404,
      'not_found',
      /'missing.txt' does not exist/,
    )
    t.notOk((await a.call('task_claim', { task })).isError, 'the first claim succeeds')
    failed(t, await a.call('task_claim', { task }), 'task_claim', 409, 'conflict', /task is claimed/)
    failed(
      t,
      await a.call('search', { repo: 'demo', q: 'two\nlines' }),
      'search',
      422,
      'invalid',
      /q is required \(one line/,
    )
    for (const p of [alice, bogus, reed]) {
      t.equal((await p.close()).code, 0)
      p.assertValid(t)
      for (const tok of Object.values(fx.tokens))
        t.notOk(p.lines.join('\n').includes(tok) || p.stderr.includes(tok), 'no token in stdout or stderr')
    }
  }
})

t.test('429 from the real server, with Retry-After', async (t) => {
  const limited = await agwpFixture({ rate: 1, burst: 1 })
  t.teardown(() => limited.close())
  const p = mcp(t, limited.upstream, limited.tokenFile('alice'))
  const c = await client(p, '2026-07-28')
  t.notOk((await c.call('workspace_create', { repo: 'demo' })).isError, 'the burst allows one call')
  const r = await c.call('workspace_create', { repo: 'demo' })
  failed(t, r, 'workspace_create', 429, 'rate_limited', /too many requests/)
  t.match(r.text.split('\n')[0], /Retry after 1 s\./, 'the wait is in the summary')
  t.equal((await p.close()).code, 0)
  p.assertValid(t)
})

t.test('a hostile upstream error message reaches the model sanitized, scrubbed and bounded', async (t) => {
  const huge = HOSTILE + 'x'.repeat(200_000)
  const evil = await recorder((_req, res) => {
    res.writeHead(409, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ error: { code: 'conflict', message: huge, details: {} } }))
  })
  t.teardown(() => evil.close())
  const p = mcp(t, evil.url, fx.tokenFile('alice'))
  const c = await client(p, '2026-07-28')
  const r = await c.call('workspace_create', { repo: 'demo' })
  t.ok(r.isError)
  t.ok(
    Buffer.byteLength(r.text) < 4096,
    `bounded: ${Buffer.byteLength(r.text)} bytes for a ${huge.length}-byte message`,
  )
  t.notMatch(r.text, /[\x00-\x08\x0b-\x1f\x7f\u202a-\u202e\u2066-\u2069]/, 'no escapes, controls or bidi overrides')
  t.notOk(r.text.includes(FAKE_TOKEN), 'the token-shaped string is scrubbed')
  const id = /^<<<AGENTGIT-DATA ([0-9a-f]+) kind=error\.message>>>$/m.exec(r.text)?.[1]
  t.ok(id && id !== '0123456789abcdef', 'the real fence id is not the fake one')
  t.ok(r.text.trimEnd().endsWith(`<<<END-AGENTGIT-DATA ${id}>>>`), 'the real fence closes the result')
  t.equal((await p.close()).code, 0)
  p.assertValid(t)
})
