import http from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { AgwpError, errorBody } from '../../server/src/errors.ts'
import { FORWARDED_BY, forwardIfElsewhere, requestRepo } from '../../server/src/forward.ts'
import type { Ownership, Placement } from '../../server/src/owners.ts'
import type { StateReader } from '../../server/src/state.ts'

// Forwarding a request to its repository's owner (forward.ts), between real HTTP servers on
// loopback: an "owner" that echoes what it got, and a front that forwards to it.

const listen = async (handler: http.RequestListener): Promise<{ url: string; close: () => Promise<void> }> => {
  const server = http.createServer(handler)
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections()
        server.close(() => r())
      }),
  }
}

/** what the stand-in ownership says of the owner's heartbeat */
const alive = { value: true }

const placing = (p: Placement): Ownership => ({
  instance: 'front',
  leaseMs: 2000,
  place: async () => p,
  fence: async () => undefined,
  serves: () => false,
  ownerAlive: async () => alive.value,
  close: async () => undefined,
})

/** The front: forwards every request for 'demo' as `owners` places it; a refusal is answered as http.ts would. */
const front = (owners: Ownership) =>
  listen((req, res) => {
    forwardIfElsewhere(owners, 'demo', req, res)
      .then((forwarded) => {
        if (!forwarded) res.writeHead(200, { 'content-type': 'text/plain' }).end('served here')
      })
      .catch((e: unknown) => {
        const err = e instanceof AgwpError ? e : new AgwpError('internal', String(e))
        res.writeHead(err.status, { 'content-type': 'application/json', ...err.headers })
        res.end(JSON.stringify(errorBody(err)))
      })
  })

t.test('a request is proxied whole and answered unchanged', async (t) => {
  const seen: {
    method: string | undefined
    url: string | undefined
    headers: http.IncomingHttpHeaders
    body: string
  }[] = []
  const owner = await listen((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      seen.push({ method: req.method, url: req.url, headers: req.headers, body: Buffer.concat(chunks).toString() })
      res.writeHead(201, { 'content-type': 'application/json', 'idempotent-replayed': 'true', 'x-from': 'owner' })
      // streamed in two parts
      res.write('{"ok":')
      setImmediate(() => res.end('true}'))
    })
  })
  t.teardown(owner.close)
  const f = await front(placing({ serve: false, owner: 'o', url: owner.url }))
  t.teardown(f.close)
  const body = JSON.stringify({ paths: ['a.ts'], big: 'x'.repeat(200_000) })
  const res = await fetch(`${f.url}/agwp/v1/repos/demo/leases?x=1`, {
    method: 'POST',
    headers: {
      authorization: 'Bearer tok',
      'content-type': 'application/json',
      'idempotency-key': 'k1',
      'agwp-run': 'run_1',
    },
    body,
  })
  t.equal(res.status, 201)
  t.equal(res.headers.get('x-from'), 'owner')
  t.equal(res.headers.get('idempotent-replayed'), 'true')
  t.equal(await res.text(), '{"ok":true}')
  const got = seen[0]
  t.equal(got?.method, 'POST')
  t.equal(got?.url, '/agwp/v1/repos/demo/leases?x=1')
  t.equal(got?.body, body, 'the body, whole')
  t.match(got?.headers, {
    authorization: 'Bearer tok',
    'idempotency-key': 'k1',
    'agwp-run': 'run_1',
    [FORWARDED_BY]: 'front',
    host: new URL(owner.url).host,
  })
})

t.test('served here when the placement says so', async (t) => {
  const f = await front(placing({ serve: true }))
  t.teardown(f.close)
  t.equal(await (await fetch(`${f.url}/x`)).text(), 'served here')
})

t.test('a request already forwarded is never forwarded again', async (t) => {
  let reached = 0
  const owner = await listen((_req, res) => {
    reached++
    res.end()
  })
  t.teardown(owner.close)
  const f = await front(placing({ serve: false, owner: 'o', url: owner.url }))
  t.teardown(f.close)
  const res = await fetch(`${f.url}/agwp/v1/repos/demo`, { headers: { [FORWARDED_BY]: 'other' } })
  t.equal(res.status, 503)
  t.equal(res.headers.get('retry-after'), '2')
  t.match(await res.json(), { error: { code: 'not_owner', message: /already forwarded by other/ } })
  t.equal(reached, 0)
})

t.test('an unreachable owner is 503 not_owner with Retry-After', async (t) => {
  const gone = await listen(() => undefined)
  await gone.close()
  const f = await front(placing({ serve: false, owner: 'o', url: gone.url }))
  t.teardown(f.close)
  const res = await fetch(`${f.url}/agwp/v1/repos/demo`, { method: 'POST', body: '{}' })
  t.equal(res.status, 503)
  t.equal(res.headers.get('retry-after'), '2')
  t.match(await res.json(), {
    error: {
      code: 'not_owner',
      message: /owns repository 'demo' \(o at http:\/\/127\.0\.0\.1:\d+\) cannot be reached/,
    },
  })
})

t.test('an owner that accepts but never answers is given up once its heartbeat is out', async (t) => {
  let got = 0
  const silent = await listen(() => {
    got++
    // never answers: a stopped process whose kernel still accepts connections
    alive.value = false
  })
  t.teardown(async () => {
    alive.value = true
    await silent.close()
  })
  const f = await front(placing({ serve: false, owner: 'o', url: silent.url }))
  t.teardown(f.close)
  const res = await fetch(`${f.url}/agwp/v1/repos/demo`)
  t.equal(got, 1)
  t.equal(res.status, 503)
  t.match(await res.json(), { error: { code: 'not_owner', message: /\(o at .*\) stopped answering and heartbeating/ } })
})

t.test('the repository a request names', async (t) => {
  const records: Record<string, { repo: string }> = { 'proposals/p1': { repo: 'fromid' } }
  const state = {
    get: async (c: string, k: string) => records[`${c}/${k}`],
  } as unknown as StateReader // only get is read
  t.equal(await requestRepo(state, '/repos/a/log', { repo: 'a' }, 'h'), 'a', 'the path first')
  t.equal(await requestRepo(state, '/proposals/p1', { id: 'p1' }, 'h'), 'h', 'then AGWP-Repo')
  t.equal(await requestRepo(state, '/proposals/p1/integrate', { id: 'p1' }, undefined), 'fromid', 'then the object')
  t.equal(await requestRepo(state, '/proposals/nope', { id: 'nope' }, undefined), undefined, 'an unknown object')
  t.equal(await requestRepo(state, '/admin/tokens/x', { id: 'x' }, undefined), undefined, 'no repository')
})
