// The AGWP client's transport rules against real local listeners: redirects, byte caps,
// garbage, error bodies, retries, token refresh, cancellation and deadlines.
import t from 'tap'
import { isPluginFailure } from '../../../core/src/plugin-api.ts'
import type { PluginFailure } from '../../../core/src/plugin-api.ts'
import type { Operation } from '../../../plugins/agwp/operation.ts'
import { createClient } from '../../../plugins/agwp/client.ts'
import { execute } from '../../../plugins/agwp/executor.ts'
import { ctxFor, envFor, json, listen } from './_listener.ts'

const GET: Operation = { method: 'GET', path: '/repos/{repo}/log' }
const POST: Operation = { method: 'POST', path: '/repos/{repo}/workspaces', body: ['base'] }

async function failure(p: Promise<unknown>): Promise<PluginFailure> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  )
  if (!isPluginFailure(e)) throw new Error(`expected a plugin failure, got ${String(e)}`)
  return e
}

t.test('no upstream: not_configured, naming the flag', async (t) => {
  const env = { ...envFor('http://127.0.0.1:1'), upstream: undefined }
  const e = (() => {
    try {
      createClient(env)
    } catch (x) {
      return x
    }
  })()
  t.ok(isPluginFailure(e) && e.code === 'not_configured' && e.message.includes('--upstream'))
})

t.test('a redirect is not followed; the failure names only the origin; the target sees nothing', async (t) => {
  const target = await listen()
  const l = await listen((_r, res) => {
    res.writeHead(307, { location: `${target.url}/steal?token=here#frag` })
    res.end()
  })
  t.teardown(() => Promise.all([l.close(), target.close()]))
  const e = await failure(execute(ctxFor(envFor(l.url), GET), { repo: 'r' }))
  t.equal(e.code, 'redirect')
  t.equal(e.status, 307)
  t.ok(e.message.includes(target.url), 'names the origin')
  t.notOk(e.message.includes('steal'), 'and not its path or query')
  t.equal(l.seen.length, 1, 'no retry')
  t.equal(target.seen.length, 0, 'the redirect target was never contacted')
})

t.test('bodies past the byte cap are refused, declared or streamed', async (t) => {
  const big = 'x'.repeat(5000)
  const l = await listen((req, res) => {
    if (req.url.includes('declared')) {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(big.length + 10) })
      res.end(JSON.stringify({ big }))
      return
    }
    res.writeHead(200, { 'content-type': 'application/json' })
    // Chunked, never-ending unless the client hangs up.
    const timer = setInterval(() => res.write(big), 1)
    res.on('close', () => clearInterval(timer))
  })
  t.teardown(() => l.close())
  for (const repo of ['declared', 'streamed']) {
    const e = await failure(execute(ctxFor(envFor(l.url, { maxResponseBytes: 4096 }), GET), { repo }))
    t.equal(e.code, 'bad_response', repo)
    t.match(e.message, /exceeds 4096 bytes/)
  }
})

t.test('garbage and non-object bodies are bad_response', async (t) => {
  const bodies: Record<string, [number, string]> = {
    html: [200, '<html>hi</html>'],
    array: [200, '[1,2]'],
    err: [500, 'Internal oops'],
    shapeless: [404, '{"nope":1}'],
  }
  const l = await listen((req, res) => {
    const [status, body] = bodies[req.url.split('/')[4] ?? ''] ?? [200, '{}']
    res.writeHead(status, { 'content-type': 'text/html' })
    res.end(body)
  })
  t.teardown(() => l.close())
  for (const repo of Object.keys(bodies)) {
    const e = await failure(execute(ctxFor(envFor(l.url), GET), { repo }))
    t.equal(e.code, 'bad_response', repo)
  }
})

t.test('AGWP error bodies become failures with code, message, status, details, retry-after', async (t) => {
  const l = await listen(
    json(409, { error: { code: 'conflict', message: 'lease held elsewhere', details: { lease: 'lease-1' } } }),
  )
  t.teardown(() => l.close())
  const e = await failure(execute(ctxFor(envFor(l.url), POST), { repo: 'r' }))
  t.match(e, { code: 'conflict', message: 'lease held elsewhere', status: 409, details: { lease: 'lease-1' } })
  l.respond = json(
    429,
    { error: { code: 'rate_limited', message: 'slow down', details: { retry_after_s: 1 } } },
    { 'retry-after': '1' },
  )
  const r = await failure(execute(ctxFor(envFor(l.url), POST), { repo: 'r' }))
  t.match(r, { code: 'rate_limited', status: 429, retryAfterS: 1 })
})

t.test('GETs are retried on 429/502/503/504 (bounded); a write is not retried on 429', async (t) => {
  let n = 0
  const l = await listen((req, res) => {
    n++
    if (req.url.includes('flaky') && n % 3 !== 0)
      return json(503, { error: { code: 'internal', message: 'busy', details: {} } }, { 'retry-after': '0' })(req, res)
    if (req.url.includes('flaky')) return json(200, { commits: [] })(req, res)
    json(429, { error: { code: 'rate_limited', message: 'slow', details: {} } }, { 'retry-after': '0' })(req, res)
  })
  t.teardown(() => l.close())
  t.same(await execute(ctxFor(envFor(l.url), GET), { repo: 'flaky' }), { commits: [] }, 'succeeds on the third attempt')
  t.equal(l.seen.length, 3)
  l.seen.length = 0
  const e = await failure(execute(ctxFor(envFor(l.url), GET), { repo: 'limited' }))
  t.equal(e.code, 'rate_limited')
  t.equal(l.seen.length, 3, 'one try and two retries, then the failure')
  l.seen.length = 0
  await failure(execute(ctxFor(envFor(l.url), POST), { repo: 'limited' }))
  t.equal(l.seen.length, 1, 'a POST is not retried on 429')
})

t.test('every write carries an Idempotency-Key, fresh per request; GETs carry none', async (t) => {
  const l = await listen(json(201, { id: 'ws-1' }))
  t.teardown(() => l.close())
  await execute(ctxFor(envFor(l.url), POST), { repo: 'r' })
  await execute(ctxFor(envFor(l.url), POST), { repo: 'r' })
  await execute(ctxFor(envFor(l.url), GET), { repo: 'r' })
  const keys = l.seen.map((s) => s.headers['idempotency-key'])
  t.match(keys[0], /^[0-9a-f-]{36}$/)
  t.match(keys[1], /^[0-9a-f-]{36}$/)
  t.not(keys[0], keys[1], 'a new request, a new key')
  t.equal(keys[2], undefined, 'a GET needs none')
})

t.test('a write is retried with the same key after a reset and on 502/503, never on other statuses', async (t) => {
  const script: string[] = []
  const l = await listen((req, res) => {
    const step = script.shift() ?? 'ok'
    if (step === 'reset') return res.socket?.destroy()
    if (step === 'ok') return json(201, { id: 'ws-1' })(req, res)
    json(Number(step), { error: { code: 'internal', message: step, details: {} } }, { 'retry-after': '0' })(req, res)
  })
  t.teardown(() => l.close())
  const run = (...steps: string[]) => {
    script.splice(0, script.length, ...steps)
    l.seen.length = 0
    return execute(ctxFor(envFor(l.url), POST), { repo: 'r' })
  }
  t.same(await run('reset', '503', 'ok'), { id: 'ws-1' }, 'a reset, a 503, then the answer')
  t.equal(l.seen.length, 3)
  t.equal(new Set(l.seen.map((s) => s.headers['idempotency-key'])).size, 1, 'one key on every attempt')
  t.same(
    l.seen.map((s) => s.body),
    ['{}', '{}', '{}'],
    'the same body each time',
  )
  t.same(await run('502', 'ok'), { id: 'ws-1' })
  t.equal(l.seen.length, 2)
  const e = await failure(run('reset', 'reset', 'reset', 'ok'))
  t.equal(e.code, 'unreachable', 'bounded: three attempts, then the connection failure')
  t.equal(l.seen.length, 3)
  for (const status of ['500', '504', '429', '409']) {
    await failure(run(status, 'ok'))
    t.equal(
      l.seen.length,
      1,
      `${status}: not retried (the server answered; a write is only repeated when it may not have been)`,
    )
  }
})

t.test('a GET cut off by a reset is retried', async (t) => {
  let n = 0
  const l = await listen((req, res) => (n++ === 0 ? res.socket?.destroy() : json(200, { commits: [] })(req, res)))
  t.teardown(() => l.close())
  t.same(await execute(ctxFor(envFor(l.url), GET), { repo: 'r' }), { commits: [] })
  t.equal(l.seen.length, 2)
})

t.test('a retry never outlives the call deadline', async (t) => {
  const l = await listen((req, res) =>
    json(503, { error: { code: 'internal', message: 'busy', details: {} } }, { 'retry-after': '2' })(req, res),
  )
  t.teardown(() => l.close())
  const e = await failure(execute(ctxFor(envFor(l.url, { timeoutMs: 500 }), POST), { repo: 'r' }))
  t.equal(e.code, 'timeout', 'a wait past the deadline ends the call as a timeout')
  t.equal(l.seen.length, 1)
})

t.test('Retry-After is honoured but capped', async (t) => {
  let n = 0
  const l = await listen((req, res) =>
    (n++ === 0
      ? json(503, { error: { code: 'internal', message: 'x', details: {} } }, { 'retry-after': '3600' })
      : json(200, { commits: [] }))(req, res),
  )
  t.teardown(() => l.close())
  // The client's clock is injected: the test sees the wait it asks for and does not wait it.
  const waits: number[] = []
  const sleep = async (ms: number): Promise<void> => void waits.push(ms)
  const r = await execute(ctxFor(envFor(l.url, { timeoutMs: 10_000, sleep }), GET), { repo: 'r' })
  t.same(r, { commits: [] }, 'the retry got the answer')
  t.same(waits, [3000], 'one wait, of the 3 s cap, not the hour asked for')
  t.equal(l.seen.length, 2)
})

t.test('a 401 re-reads the token and retries once with the new one', async (t) => {
  const l = await listen((req, res) =>
    (req.headers['authorization'] === 'Bearer agwp_new-token-00000000'
      ? json(200, { principal: 'agent:a' })
      : json(401, { error: { code: 'unauthenticated', message: 'token revoked', details: {} } }))(req, res),
  )
  t.teardown(() => l.close())
  const env = envFor(l.url, { token: 'agwp_old-token-00000000', refreshTo: 'agwp_new-token-00000000' })
  t.same(await execute(ctxFor(env, POST), { repo: 'r' }), { principal: 'agent:a' })
  t.equal(env.refreshes, 1)
  t.same(
    l.seen.map((s) => s.headers['authorization']),
    ['Bearer agwp_old-token-00000000', 'Bearer agwp_new-token-00000000'],
  )
  l.seen.length = 0
  const stuck = envFor(l.url, { token: 'agwp_old-token-00000000' })
  const e = await failure(execute(ctxFor(stuck, GET), { repo: 'r' }))
  t.match(e, { code: 'unauthenticated', status: 401 })
  t.equal(stuck.refreshes, 1, 'refreshed once')
  t.equal(l.seen.length, 1, 'an unchanged token is not sent again')
})

t.test('cancellation aborts the request and closes its socket', async (t) => {
  const l = await listen(() => {
    /* never answers */
  })
  t.teardown(() => l.close())
  const ac = new AbortController()
  const p = execute(ctxFor(envFor(l.url, { timeoutMs: 30_000 }), GET, ac.signal), { repo: 'r' }).catch(
    (e: unknown) => e,
  )
  await l.until(() => l.seen.length === 1)
  ac.abort()
  const e = await p
  t.notOk(isPluginFailure(e), 'a cancelled call is not reported as an upstream failure')
  await l.until(() => l.closed > 0)
  t.equal(l.closed, 1, 'the listener saw the socket close, and only that one')
})

t.test('the overall deadline ends a slow call with a timeout failure', async (t) => {
  const l = await listen((_r, res) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.write('{"commits":[')
    // …and never finishes.
  })
  t.teardown(() => l.close())
  const e = await failure(execute(ctxFor(envFor(l.url, { timeoutMs: 300 }), GET), { repo: 'r' }))
  t.equal(e.code, 'timeout')
})

t.test('an unreachable upstream is a failure naming its origin', async (t) => {
  const l = await listen()
  const url = l.url
  await l.close()
  const e = await failure(execute(ctxFor(envFor(url), GET), { repo: 'r' }))
  t.equal(e.code, 'unreachable')
  t.ok(e.message.includes(url))
})
