// The review page's server side over real HTTP: off unless asked for; its headers (CSP and the
// rest); sign-in with a pasted token or a one-time link, never with an agent's token; the session
// cookie's attributes; Host, Origin, Sec-Fetch-Site and CSRF checks on every action; a revoked
// token ends its session; the list pages through 1,000 proposals with its filters; what it shows
// is scrubbed; no token reaches the log.
import t from 'tap'
import http from 'node:http'
import { adminRevoke } from '../../server/src/admin.ts'
import { CSP } from '../../server/src/ui/guard.ts'
import type { ProposalRec } from '../../server/src/types.ts'
import { fixture, registerKey, signedRecord, journalStore } from './helpers.ts'

const logged: string[] = []
const fx = await fixture({ server: { ui: {}, log: (m) => logged.push(m) } })
t.teardown(fx.close)
const base = fx.server.url.replace(/\/agwp\/v1$/, '')
const host = new URL(base).host

interface Got {
  status: number
  body: Record<string, unknown> & { error?: { code: string; message: string } }
  headers: Headers
  text: string
}

async function ui(
  method: string,
  path: string,
  o: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<Got> {
  const res = await fetch(base + path, {
    method,
    headers: {
      ...(o.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(method === 'POST' ? { origin: base, 'sec-fetch-site': 'same-origin' } : {}),
      ...o.headers,
    },
    ...(o.body !== undefined ? { body: JSON.stringify(o.body) } : {}),
    redirect: 'manual',
  })
  const text = await res.text()
  let body: Got['body'] = {}
  try {
    body = JSON.parse(text) as Got['body']
  } catch {
    // a page or a script
  }
  return { status: res.status, body, headers: res.headers, text }
}

/** Signs in with a token; the session cookie and its CSRF token. */
async function signIn(token: string): Promise<{ cookie: string; csrf: string; setCookie: string }> {
  const r = await ui('POST', '/ui/api/sign-in', { body: { token } })
  if (r.status !== 200) throw new Error(`sign-in: ${r.status} ${r.text}`)
  const setCookie = r.headers.get('set-cookie') ?? ''
  const cookie = setCookie.split(';')[0] as string
  const s = await ui('GET', '/ui/api/session', { headers: { cookie } })
  return { cookie, csrf: String(s.body['csrf']), setCookie }
}

async function propose(title: string, reasoning = ''): Promise<string> {
  const ws = (await fx.api('alice', 'POST', '/repos/demo/workspaces', {})).body.id
  await fx.api('alice', 'PUT', `/workspaces/${ws}/files`, {
    path: `docs/${title.replace(/\W/g, '')}.md`,
    content: `${title}\n`,
  })
  const p = await fx.api('alice', 'POST', `/workspaces/${ws}/proposals`, { title, reasoning })
  return p.body.id as string
}

t.test('off by default: a server without --ui answers 404 under /ui and says how to turn it on', async (t) => {
  const plain = await fixture()
  t.teardown(plain.close)
  const r = await fetch(`${plain.server.url.replace(/\/agwp\/v1$/, '')}/ui/`)
  t.equal(r.status, 404)
  t.match(((await r.json()) as { error: { message: string } }).error.message, /ag-server serve --ui/)
})

t.test('the page and its files carry the security headers; nothing else is served', async (t) => {
  const page = await ui('GET', '/ui/')
  t.equal(page.status, 200)
  t.match(page.headers.get('content-type'), /^text\/html/)
  t.equal(page.headers.get('content-security-policy'), CSP)
  for (const d of [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "frame-ancestors 'none'",
    "require-trusted-types-for 'script'",
    'report-uri /ui/csp-report',
  ])
    t.ok(CSP.includes(d), `CSP has ${d}`)
  t.notMatch(CSP, /unsafe-inline|unsafe-eval|https?:/, 'no inline code, no eval, no remote origin')
  t.equal(page.headers.get('x-frame-options'), 'DENY')
  t.equal(page.headers.get('x-content-type-options'), 'nosniff')
  t.equal(page.headers.get('referrer-policy'), 'no-referrer')
  t.notMatch(page.text, /<script>|<style>|\sstyle=|\son[a-z]+=/, 'the page has no inline script, style or handler')
  t.match(page.text, /<script type="module" src="\/ui\/app.js"><\/script>/)
  const js = await ui('GET', '/ui/app.js')
  t.equal(js.status, 200)
  t.match(js.headers.get('content-type'), /^text\/javascript/)
  t.equal(js.headers.get('content-security-policy'), CSP)
  t.notMatch(js.text, /innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(/, 'the bundle never parses markup')
  const again = await ui('GET', '/ui/app.js', { headers: { 'if-none-match': js.headers.get('etag') ?? '' } })
  t.equal(again.status, 304, 'revalidated by ETag')
  t.equal((await ui('GET', '/ui/app.css')).status, 200)
  t.equal((await ui('GET', '/ui/p/pr-1')).status, 200, 'a proposal page is the same page')
  t.equal((await ui('GET', '/ui/../agwp/v1/whoami')).status, 401, 'a dotted path is normalized, not served as a file')
  t.equal((await ui('GET', '/ui/nothing.js')).status, 404)
  t.equal((await ui('GET', '/ui')).headers.get('location'), '/ui/')
})

t.test('a page answers only to this server’s loopback names (a rebound DNS name is refused)', async (t) => {
  const port = new URL(base).port
  // fetch sets Host itself: node:http sends the one a rebound page's browser would.
  const get = (h: string) =>
    new Promise<number>((resolve, reject) => {
      http
        .get({ host: '127.0.0.1', port, path: '/ui/', headers: { host: h } }, (res) => {
          res.resume()
          resolve(res.statusCode ?? 0)
        })
        .on('error', reject)
    })
  for (const h of [`evil.example:${port}`, `127.0.0.1:${Number(port) + 1}`]) t.equal(await get(h), 403, h)
  t.equal(await get(`localhost:${port}`), 200)
  t.equal(await get(host), 200)
})

t.test('sign-in: a person’s token becomes a session cookie; an agent’s token is refused', async (t) => {
  const agent = await ui('POST', '/ui/api/sign-in', { body: { token: fx.tokens['alice'] } })
  t.equal(agent.status, 403)
  t.match(agent.body.error?.message, /agent:alice is an agent: agents' tokens cannot sign in/)
  t.notOk(agent.headers.get('set-cookie'))
  const bad = await ui('POST', '/ui/api/sign-in', { body: { token: 'agwp_notatokenatall_notatokenatall_0000' } })
  t.equal(bad.status, 401)
  const { cookie, csrf, setCookie } = await signIn(fx.tokens['rita'] as string)
  t.match(setCookie, /^agwp_ui_session=[A-Za-z0-9_-]{43}; Path=\/ui; HttpOnly; SameSite=Strict; Max-Age=\d+$/)
  t.ok(Number(/Max-Age=(\d+)/.exec(setCookie)?.[1]) <= 8 * 3600, 'the session ends within 8 hours')
  t.notOk(setCookie.includes(fx.tokens['rita'] as string), 'the cookie is not the token')
  t.match(csrf, /^[0-9a-f]{64}$/)
  const s = await ui('GET', '/ui/api/session', { headers: { cookie } })
  t.match(s.body, { principal: 'human:rita', scopes: ['read', 'review'], repos: [{ name: 'demo', role: 'reviewer' }] })
  t.equal((await ui('GET', '/ui/api/session')).status, 401, 'no cookie, no session')
  t.equal((await ui('GET', '/ui/api/session', { headers: { cookie: 'agwp_ui_session=forged' } })).status, 401)
})

t.test('every POST is same-origin by the browser’s account and carries the session’s CSRF token', async (t) => {
  const id = await propose('Checks on actions')
  const { cookie, csrf } = await signIn(fx.tokens['rita'] as string)
  const approve = { verdict: 'approve' }
  const send = (headers: Record<string, string>) =>
    ui('POST', `/ui/api/proposals/${id}/review`, { body: approve, headers: { cookie, ...headers } })
  t.match((await send({})).body.error?.message, /CSRF/, 'no CSRF header')
  t.match((await send({ 'x-agwp-csrf': '0'.repeat(64) })).body.error?.message, /CSRF/, 'a wrong one')
  t.match((await send({ 'x-agwp-csrf': csrf, origin: 'http://evil.example' })).body.error?.message, /another origin/)
  t.match((await send({ 'x-agwp-csrf': csrf, 'sec-fetch-site': 'cross-site' })).body.error?.message, /cross-site/)
  const noOrigin = await fetch(`${base}/ui/api/proposals/${id}/review`, {
    method: 'POST',
    headers: { cookie, 'x-agwp-csrf': csrf, 'content-type': 'application/json' },
    body: JSON.stringify(approve),
  })
  t.equal(noOrigin.status, 403, 'no Origin header')
  const signInFromElsewhere = await ui('POST', '/ui/api/sign-in', {
    body: { token: fx.tokens['rita'] },
    headers: { origin: 'http://evil.example', 'sec-fetch-site': 'cross-site' },
  })
  t.equal(signInFromElsewhere.status, 403, 'a sign-in from another origin')
  t.equal((await fx.api('rita', 'GET', `/proposals/${id}`)).body.reviews.length, 0, 'none of them acted')
  const ok = await send({ 'x-agwp-csrf': csrf })
  t.equal(ok.status, 200, ok.text)
  t.match(ok.body, { verdict: 'approve', reviewer: 'human:rita' })
})

t.test('a refusal carries the server’s reason; the page says beforehand which actions are not for you', async (t) => {
  const id = await propose('Refusals')
  const { cookie, csrf } = await signIn(fx.tokens['rita'] as string)
  const view = await ui('GET', `/ui/api/proposals/${id}`, { headers: { cookie } })
  t.match(view.body['actions'], {
    review: { allowed: true },
    integrate: { allowed: false, reason: "token lacks the 'integrate' scope" },
    reject: { allowed: false, reason: "token lacks the 'propose' scope" },
  })
  const r = await ui('POST', `/ui/api/proposals/${id}/integrate`, {
    body: {},
    headers: { cookie, 'x-agwp-csrf': csrf },
  })
  t.equal(r.status, 403)
  t.equal(r.body.error?.message, "token lacks the 'integrate' scope")
  const mona = await signIn(fx.tokens['mona'] as string)
  const early = await ui('POST', `/ui/api/proposals/${id}/integrate`, {
    body: { strategy: 'merge' },
    headers: { cookie: mona.cookie, 'x-agwp-csrf': mona.csrf },
  })
  t.equal(early.status, 403)
  t.match(early.body.error?.message, /integration refused by policy: 0 of 1 required approval/)
  const changes = await ui('POST', `/ui/api/proposals/${id}/review`, {
    body: { verdict: 'request_changes' },
    headers: { cookie, 'x-agwp-csrf': csrf },
  })
  t.equal(changes.status, 422, 'requesting changes needs a comment')
})

t.test('provenance shows its status and signer; a maintainer rejects with a reason', async (t) => {
  const id = await propose('Signed')
  const { cookie } = await signIn(fx.tokens['rita'] as string)
  const view = async () => (await ui('GET', `/ui/api/proposals/${id}`, { headers: { cookie } })).body
  t.match((await view())['proposal'], { provenance: { status: 'not_required' } })
  t.notOk((await view())['signer'])
  const key = await registerKey(fx, 'agent:alice')
  const attached = await fx.api('admin', 'POST', `/proposals/${id}/provenance`, await signedRecord(fx, id, key))
  t.equal(attached.status, 200, JSON.stringify(attached.body))
  const signed = await view()
  t.match(signed['proposal'], { provenance: { status: 'verified', key_id: key.id } })
  t.match(signed['signer'], { key_id: key.id, principal: 'agent:alice' })
  const mona = await signIn(fx.tokens['mona'] as string)
  const r = await ui('POST', `/ui/api/proposals/${id}/reject`, {
    body: { reason: 'not this way' },
    headers: { cookie: mona.cookie, 'x-agwp-csrf': mona.csrf },
  })
  t.equal(r.status, 200, r.text)
  t.match(r.body, { id, state: 'withdrawn' })
  t.match((await view())['proposal'], { state: 'withdrawn', withdrawn_reason: 'not this way' })
  t.match((await view())['actions'], { review: { allowed: false, reason: 'proposal is withdrawn' } })
})

t.test('revoking the token ends its session at once', async (t) => {
  const { cookie } = await signIn(fx.tokens['mona'] as string)
  t.equal((await ui('GET', '/ui/api/session', { headers: { cookie } })).status, 200)
  const tokens = journalStore(fx.server.ctx)
    .all('tokens')
    .filter((x) => x.principal === 'human:mona')
  for (const tok of tokens) await adminRevoke(fx.server.ctx.state, tok.id)
  const after = await ui('GET', '/ui/api/session', { headers: { cookie } })
  t.equal(after.status, 401)
  t.match(after.body.error?.message, /revoked or expired/)
})

t.test('a one-time link: minted with a person’s bearer token, good for one sign-in', async (t) => {
  const agent = await ui('POST', '/ui/api/links', { headers: { authorization: `Bearer ${fx.tokens['alice']}` } })
  t.equal(agent.status, 403, 'not for agents')
  const l = await ui('POST', '/ui/api/links', { headers: { authorization: `Bearer ${fx.tokens['rita']}` } })
  t.equal(l.status, 201)
  const path = String(l.body['path'])
  t.match(path, /^\/ui\/#sign-in=[A-Za-z0-9_-]{43}$/, 'the secret is in the fragment, which no request carries')
  const secret = path.slice(path.indexOf('=') + 1)
  const first = await ui('POST', '/ui/api/sign-in', { body: { link: secret } })
  t.equal(first.status, 200)
  t.match(first.headers.get('set-cookie'), /^agwp_ui_session=/)
  const second = await ui('POST', '/ui/api/sign-in', { body: { link: secret } })
  t.equal(second.status, 401, 'used once, then dead')
  t.match(second.body.error?.message, /used already or has expired/)
})

t.test('the list pages through 1,000 proposals, newest first, with its filters', async (t) => {
  const store = journalStore(fx.server.ctx)
  const now = new Date().toISOString()
  const template = store.get('proposals', await propose('Template')) as ProposalRec
  const ops = []
  for (let i = 0; i < 1000; i++) {
    const id = `pr-${10_000 + i}`
    const p: ProposalRec = {
      ...template,
      id,
      title: `Generated ${i}`,
      author: i % 4 === 0 ? 'agent:bob' : 'agent:alice',
      author_principal: i % 4 === 0 ? 'agent:bob' : 'agent:alice',
      task: `task-${i % 10}`,
      state: i % 5 === 0 ? 'withdrawn' : 'open',
      created_at: now,
      updated_at: now,
    }
    ops.push({ c: 'proposals' as const, k: id, v: p })
  }
  store.commit(ops)
  const { cookie } = await signIn(fx.tokens['rita'] as string)
  const seen: string[] = []
  let offset = 0
  let total = -1
  for (let pages = 0; pages < 100; pages++) {
    const r = await ui('GET', `/ui/api/proposals?state=all&offset=${offset}&limit=50`, { headers: { cookie } })
    t.equal(r.status, 200)
    total = Number(r.body['total'])
    const list = r.body['proposals'] as { id: string }[]
    seen.push(...list.map((p) => p.id))
    offset += 50
    if (offset >= total) break
  }
  t.ok(total >= 1000)
  t.equal(seen.length, total, 'every proposal once')
  t.equal(new Set(seen).size, total)
  const nums = seen.map((id) => Number(id.slice(3)))
  t.same(
    nums,
    [...nums].sort((a, b) => b - a),
    'newest first',
  )
  const bob = await ui('GET', '/ui/api/proposals?author=agent:bob&task=task-0&state=open', { headers: { cookie } })
  const ids = (bob.body['proposals'] as { id: string; author_principal: string; task: string }[]).map((p) => {
    t.equal(p.author_principal, 'agent:bob')
    t.equal(p.task, 'task-0')
    return p.id
  })
  // i % 4 === 0, i % 10 === 0, i % 5 !== 0: none (every multiple of 10 is one of 5) — so ask withdrawn.
  t.equal(ids.length, 0)
  const withdrawn = await ui('GET', '/ui/api/proposals?author=agent:bob&task=task-0&state=withdrawn', {
    headers: { cookie },
  })
  t.equal(withdrawn.body['total'], 50, 'i in 0..999 with i % 20 === 0')
  t.match(withdrawn.body['facets'], { repos: [{ value: 'demo' }] })
  t.equal((await ui('GET', '/ui/api/proposals?state=nope', { headers: { cookie } })).status, 422)
  t.equal((await ui('GET', '/ui/api/proposals?repo=other', { headers: { cookie } })).status, 403)
})

t.test('what the page shows is scrubbed of credential shapes, and no token reaches the log', async (t) => {
  const planted = `agwp_${'Q'.repeat(43)}`
  const id = await propose('Scrubbed', `the key is ${planted} here`)
  const { cookie } = await signIn(fx.tokens['rita'] as string)
  const view = await ui('GET', `/ui/api/proposals/${id}`, { headers: { cookie } })
  t.notOk(view.text.includes(planted))
  t.match(view.text, /the key is \[REDACTED\] here/)
  const report = await fetch(`${base}/ui/csp-report`, {
    method: 'POST',
    headers: { 'content-type': 'application/csp-report' },
    body: JSON.stringify({ 'csp-report': { 'violated-directive': 'script-src', 'blocked-uri': planted } }),
  })
  t.equal(report.status, 204)
  t.equal(fx.server.ui?.cspReports, 1)
  t.match(logged.join('\n'), /content security policy violation reported/)
  for (const tok of Object.values(fx.tokens)) t.notOk(logged.join('\n').includes(tok), 'no token in the log')
  t.notOk(logged.join('\n').includes(planted), 'the report is scrubbed too')
})
