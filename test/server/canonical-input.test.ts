import t from 'tap'
import { fixture } from './helpers.ts'

// Input that reaches git must be in one canonical form: paths (writes, moves, deletes,
// review comments), pathspecs (literal, never magic), cursors (whole, in range, naming a
// commit of this repository), percent-escapes in the request path (400 before auth).
// The fixture runs `git fsck` on close: nothing here may leave a corrupt tree behind.

const logs: string[] = []
const fx = await fixture({ policy: { required_approvals: 0 }, server: { log: (m) => logs.push(m) } })
t.teardown(fx.close)
const { api } = fx
const cursor = (v: unknown): string => Buffer.from(JSON.stringify(v)).toString('base64url')

t.test('workspace paths: one canonical form, no directory/file clash', async (t) => {
  const ws = (await api('alice', 'POST', '/repos/demo/workspaces', {})).body.id
  const put = (p: string) => api('alice', 'PUT', `/workspaces/${ws}/files`, { path: p, content: 'x\n' })
  for (const p of [
    'newdir/',
    'lib/',
    'a//b',
    './x',
    'x/.',
    'x/..',
    '.GIT/config',
    'sub/.Git',
    'git~1/x',
    '.git./x',
    '/abs',
  ])
    t.equal((await put(p)).status, 422, `write refused: ${JSON.stringify(p)}`)
  t.equal((await put('lib')).status, 409, 'an existing directory is not a file')
  t.equal((await put('lib/deep')).status, 409, 'a nested existing directory is not a file')
  t.equal((await put('README.md/x')).status, 409, 'a file is not a directory')
  t.equal((await put('fresh/a.txt')).status, 200)
  t.equal((await put('fresh')).status, 409, 'a directory made in the workspace is not a file')
  t.equal((await api('alice', 'POST', `/workspaces/${ws}/moves`, { from: 'fresh/a.txt', to: 'moved/' })).status, 422)
  t.equal((await api('alice', 'POST', `/workspaces/${ws}/moves`, { from: 'fresh/a.txt', to: 'lib' })).status, 409)
  t.equal((await api('alice', 'DELETE', `/workspaces/${ws}/files?path=fresh%2Fa.txt%2F`)).status, 422)
  const view = (await api('alice', 'GET', `/workspaces/${ws}`)).body
  t.same(
    view.changes.map((c: { path: string }) => c.path),
    ['fresh/a.txt'],
    'only the canonical write was recorded',
  )
  t.equal((await api('alice', 'GET', `/workspaces/${ws}/diff`)).status, 200)
  const p = await api('alice', 'POST', `/workspaces/${ws}/proposals`, { title: 'canonical' })
  t.equal(p.status, 201)
  t.equal((await api('mona', 'POST', `/proposals/${p.body.id}/integrate`, {})).status, 200)
  // reads still accept a directory written with one trailing slash
  t.equal((await api('alice', 'GET', '/repos/demo/tree?path=lib/')).status, 200)
})

t.test('review comment paths are validated (422)', async (t) => {
  const ws = (await api('alice', 'POST', '/repos/demo/workspaces', {})).body.id
  await api('alice', 'PUT', `/workspaces/${ws}/files`, { path: 'r.txt', content: 'r\n' })
  const id = (await api('alice', 'POST', `/workspaces/${ws}/proposals`, { title: 'r' })).body.id
  for (const path of ['../x', '.git/config', 'a\0b', 'a\x1b[31mred', '/etc/passwd', 'dir/']) {
    const r = await api('rita', 'POST', `/proposals/${id}/reviews`, {
      verdict: 'comment',
      comments: [{ path, line: 1, body: 'c' }],
    })
    t.equal(r.status, 422, `comment path refused: ${JSON.stringify(path)}`)
  }
  const ok = await api('rita', 'POST', `/proposals/${id}/reviews`, {
    verdict: 'comment',
    comments: [{ path: 'r.txt', line: 1, body: 'fine' }],
  })
  t.equal(ok.status, 201)
  t.equal((await api('alice', 'GET', `/proposals/${id}`)).body.reviews.length, 1, 'no refused review was recorded')
})

t.test('pathspecs are literal', async (t) => {
  const log = await api('alice', 'GET', `/repos/demo/log?path=${encodeURIComponent(':(nonsense)x')}`)
  t.equal(log.status, 200, 'unknown magic is a path that does not exist, not a 500')
  t.same(log.body.commits, [])
  t.same((await api('alice', 'GET', '/repos/demo/log?path=*.md')).body.commits, [], 'no glob: *.md names no file')
  t.equal((await api('alice', 'GET', '/repos/demo/log?path=README.md')).body.commits.length > 0, true)
  const head = (await api('alice', 'GET', '/repos/demo')).body.head
  const diff = await api(
    'alice',
    'GET',
    `/repos/demo/diff?base=${head}~1&head=${head}&path=${encodeURIComponent(':(nonsense)x')}`,
  )
  t.not(diff.status, 500)
  const s = await api('alice', 'GET', `/repos/demo/search?q=hello&path=${encodeURIComponent(':(exclude)lib')}`)
  t.equal(s.status, 200)
  t.same(s.body.matches, [], 'exclude magic is not interpreted')
  t.equal((await api('alice', 'GET', '/repos/demo/search?q=hello&path=README.md')).body.matches.length, 1)
})

t.test('cursors are validated', async (t) => {
  const head = (await api('alice', 'GET', '/repos/demo')).body.head
  for (const c of [
    { c: head, s: -5 },
    { c: head, s: 1.5 },
    { c: head, s: 1e21 },
    { c: head, s: '1' },
    { c: 'f'.repeat(40), s: 1 },
  ]) {
    const r = await api('alice', 'GET', `/repos/demo/log?limit=1&cursor=${cursor(c)}`)
    t.equal(r.status, 422, `log cursor refused: ${JSON.stringify(c)}`)
    t.equal(r.body.error?.code, 'invalid')
  }
  for (const c of [{ o: 1e21 }, { o: -1 }, { o: 0.5 }])
    t.equal(
      (await api('alice', 'GET', `/repos/demo/tasks?cursor=${cursor(c)}`)).status,
      422,
      `page cursor ${JSON.stringify(c)}`,
    )
  const first = await api('alice', 'GET', '/repos/demo/log?limit=1')
  t.equal((await api('alice', 'GET', `/repos/demo/log?limit=1&cursor=${first.body.next_cursor}`)).status, 200)
})

t.test('malformed percent-escapes: 400 before authentication, no stack trace', async (t) => {
  logs.length = 0
  for (const bad of ['%E0%A4%A', '%', '%zz', '%C0%AF', 'a%ff']) {
    for (const p of [`/workspaces/${bad}`, `/proposals/${bad}/diff`, `/repos/${bad}/log`]) {
      const r = await api('', 'GET', p)
      t.equal(r.status, 400, `${p}: 400`)
      t.equal(r.body.error?.code, 'bad_request')
    }
  }
  t.same(logs, [], 'nothing logged (no stack trace)')
})
