import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { fixture, contractErrors, sh } from './helpers.ts'

const fx = await fixture({ commits: 5 })
t.teardown(fx.close)
const { api } = fx

t.test('whoami and repos', async (t) => {
  const me = await api('alice', 'GET', '/whoami')
  t.equal(me.status, 200)
  t.equal(contractErrors('Whoami', me.body), '')
  t.equal(me.body.principal, 'agent:alice')
  t.same(me.body.roles, { demo: 'contributor' })
  const repos = await api('alice', 'GET', '/repos')
  t.equal(contractErrors('RepoList', repos.body), '')
  t.same(
    repos.body.repos.map((r: { name: string }) => r.name),
    ['demo'],
  )
  const repo = await api('alice', 'GET', '/repos/demo')
  t.equal(contractErrors('Repo', repo.body), '')
  t.equal(repo.body.default_branch, 'main')
  t.match(repo.body.head, /^[0-9a-f]{40}$/)
  t.equal((await api('alice', 'GET', '/repos/nope')).status, 403, 'token does not cover other repos')
})

t.test('authentication errors', async (t) => {
  for (const [who, why] of [
    ['', 'missing'],
    ['agwp_notarealtokenatall123', 'unknown'],
    ['Bearer', 'malformed'],
  ] as const) {
    const r = await api(who, 'GET', '/whoami')
    t.equal(r.status, 401, why)
    t.equal(r.body.error.code, 'unauthenticated')
    t.equal(contractErrors('ErrorResponse', r.body), '')
  }
  const unknown = await api('alice', 'GET', '/nothing/here')
  t.equal(unknown.status, 404)
  t.equal(unknown.body.error.code, 'not_found')
})

t.test('log with pagination and path filter', async (t) => {
  const p1 = await api('alice', 'GET', '/repos/demo/log?limit=2')
  t.equal(p1.status, 200)
  t.equal(contractErrors('LogResponse', p1.body), '')
  t.equal(p1.body.commits.length, 2)
  t.ok(p1.body.next_cursor)
  const seen: string[] = p1.body.commits.map((c: { id: string }) => c.id)
  let cursor = p1.body.next_cursor as string | undefined
  while (cursor) {
    const p = await api('alice', 'GET', `/repos/demo/log?limit=2&cursor=${encodeURIComponent(cursor)}`)
    seen.push(...p.body.commits.map((c: { id: string }) => c.id))
    cursor = p.body.next_cursor
  }
  t.equal(seen.length, 5)
  t.equal(new Set(seen).size, 5, 'no duplicates across pages')
  t.equal(seen.at(-1), sh(path.join(fx.root, 'src'), 'rev-list', '--max-parents=0', 'HEAD').trim())
  const readme = await api('alice', 'GET', '/repos/demo/log?path=README.md')
  t.equal(readme.body.commits.length, 1, 'path filter')
  t.equal(readme.body.commits[0].subject, 'initial')
  const bad = await api('alice', 'GET', '/repos/demo/log?cursor=%%%')
  t.equal(bad.status, 422)
  t.equal((await api('alice', 'GET', '/repos/demo/log?ref=nope')).status, 404)
  t.equal((await api('alice', 'GET', '/repos/demo/log?ref=main:README.md')).status, 422, 'revision syntax refused')
})

t.test('commit detail', async (t) => {
  const head = (await api('alice', 'GET', '/repos/demo')).body.head
  const c = await api('alice', 'GET', `/repos/demo/commits/${head}`)
  t.equal(c.status, 200)
  t.equal(contractErrors('CommitDetail', c.body), '')
  t.same(c.body.files, [{ path: 'lib/util.ts', status: 'modified', additions: 1, deletions: 0 }])
  const first = sh(path.join(fx.root, 'src'), 'rev-list', '--max-parents=0', 'HEAD').trim()
  const root = await api('alice', 'GET', `/repos/demo/commits/${first}`)
  t.equal(root.body.files.length, 4, 'root commit lists all added files')
  t.equal((await api('alice', 'GET', '/repos/demo/commits/0000000000000000000000000000000000000000')).status, 404)
})

t.test('tree and file reads', async (t) => {
  const root = await api('alice', 'GET', '/repos/demo/tree')
  t.equal(contractErrors('TreeResponse', root.body), '')
  t.same(
    root.body.entries.map((e: { name: string }) => e.name),
    ['README.md', 'lib', 'logo.bin'],
  )
  const paged = await api('alice', 'GET', '/repos/demo/tree?limit=2')
  t.equal(paged.body.entries.length, 2)
  const rest = await api('alice', 'GET', `/repos/demo/tree?limit=2&cursor=${paged.body.next_cursor}`)
  t.same(
    rest.body.entries.map((e: { name: string }) => e.name),
    ['logo.bin'],
  )
  t.notOk(rest.body.next_cursor)
  const dir = await api('alice', 'GET', '/repos/demo/file?path=lib')
  t.equal(contractErrors('FileResponse', dir.body), '')
  t.equal(dir.body.kind, 'dir')
  t.same(
    dir.body.entries.map((e: { type: string; name: string }) => `${e.type}:${e.name}`),
    ['dir:deep', 'file:util.ts'],
  )
  const text = await api('alice', 'GET', '/repos/demo/file?path=README.md')
  t.equal(contractErrors('FileResponse', text.body), '')
  t.match(text.body, { kind: 'file', encoding: 'utf8', content: '# demo\nhello world\n', truncated: false, size: 19 })
  const bin = await api('alice', 'GET', '/repos/demo/file?path=logo.bin')
  t.equal(bin.body.encoding, 'base64')
  t.same([...Buffer.from(bin.body.content, 'base64')], [0, 1, 2, 255, 254, 0, 7])
  const first = sh(path.join(fx.root, 'src'), 'rev-list', '--max-parents=0', 'HEAD').trim()
  const old = await api('alice', 'GET', `/repos/demo/file?path=lib/util.ts&ref=${first}`)
  t.equal(old.body.content, 'export const x = 1;\n', 'read at a ref')
  t.equal((await api('alice', 'GET', '/repos/demo/file?path=missing.txt')).status, 404)
  t.equal((await api('alice', 'GET', '/repos/demo/tree?path=README.md')).status, 422)
})

t.test('hostile paths are refused with invalid', async (t) => {
  for (const p of [
    '../etc/passwd',
    'lib/../../x',
    '/etc/passwd',
    'a\u0000b',
    '.git/config',
    'lib/.git/HEAD',
    'lib//util.ts',
    './README.md',
    'C:/x',
  ]) {
    const r = await api('alice', 'GET', `/repos/demo/file?path=${encodeURIComponent(p)}`)
    t.equal(r.status, 422, JSON.stringify(p))
    t.equal(r.body.error.code, 'invalid')
  }
})

t.test('a read takes a name with a backslash or a control character literally; a write refuses it', async (t) => {
  // A tree can hold such a name and a listing shows it, so a read must reach it (issue 27);
  // it is never taken as a separator or an option: `lib\util.ts` is not lib/util.ts.
  const src = path.join(fx.root, 'src')
  fs.writeFileSync(path.join(src, 'back\\slash.txt'), 'back\n')
  fs.writeFileSync(path.join(src, 'esc\x1b[31m.txt'), 'esc\n')
  sh(src, 'add', '.')
  sh(src, 'commit', '-q', '-m', 'odd names')
  sh(src, 'push', '-q', path.join(fx.data, 'repos/demo.git'), 'main:oddnames')
  for (const [p, content] of [
    ['back\\slash.txt', 'back\n'],
    ['esc\x1b[31m.txt', 'esc\n'],
  ] as const) {
    const r = await api('alice', 'GET', `/repos/demo/file?ref=oddnames&path=${encodeURIComponent(p)}`)
    t.equal(r.status, 200, JSON.stringify(p))
    t.equal(r.body.content, content)
    const log = await api('alice', 'GET', `/repos/demo/log?ref=oddnames&path=${encodeURIComponent(p)}`)
    t.equal(log.body.commits?.length, 1, `the log of ${JSON.stringify(p)}`)
  }
  const literal = await api('alice', 'GET', `/repos/demo/file?path=${encodeURIComponent('lib\\util.ts')}`)
  t.equal(literal.status, 404, 'lib\\util.ts is a name of its own, not lib/util.ts')
  const ws = await api('alice', 'POST', '/repos/demo/workspaces', { base: 'main' })
  for (const p of ['lib\\util.ts', 'a\x1bb', 'tab\there']) {
    const w = await api('alice', 'PUT', `/workspaces/${ws.body.id}/files`, { path: p, content: 'x' })
    t.equal(w.status, 422, `writing ${JSON.stringify(p)} is refused`)
    t.equal(w.body.error.code, 'invalid')
  }
})

t.test('a 10 MB file is read bounded', async (t) => {
  const src = path.join(fx.root, 'src')
  const big = Buffer.alloc(10 * 1024 * 1024, 'abcdefghij\n')
  fs.writeFileSync(path.join(src, 'big.txt'), big)
  sh(src, 'add', 'big.txt')
  sh(src, 'commit', '-q', '-m', 'big')
  sh(src, 'push', '-q', path.join(fx.data, 'repos/demo.git'), 'main:bigbranch')
  const r = await api('alice', 'GET', '/repos/demo/file?path=big.txt&ref=bigbranch')
  t.equal(r.status, 200)
  t.equal(r.body.truncated, true)
  t.equal(r.body.size, big.length)
  t.equal(Buffer.byteLength(r.body.content), 1024 * 1024)
  t.ok(big.subarray(0, 1024 * 1024).equals(Buffer.from(r.body.content)), 'prefix is exact')
})

t.test('diff and search', async (t) => {
  const first = sh(path.join(fx.root, 'src'), 'rev-list', '--max-parents=0', 'main').trim()
  const d = await api('alice', 'GET', `/repos/demo/diff?base=${first}&head=main`)
  t.equal(d.status, 200)
  t.equal(contractErrors('DiffResponse', d.body), '')
  t.equal(d.body.files.length, 1)
  t.match(d.body.files[0], { path: 'lib/util.ts', status: 'modified', additions: 4, deletions: 0, binary: false })
  t.match(d.body.files[0].patch, /^diff --git a\/lib\/util.ts/)
  t.match(d.body.files[0].patch, /\+export const v4 = 4;/)
  const none = await api('alice', 'GET', `/repos/demo/diff?base=${first}&head=main&path=README.md`)
  t.equal(none.body.files.length, 0, 'path-limited diff')
  t.equal((await api('alice', 'GET', '/repos/demo/diff?base=main')).status, 422)
  const s = await api('alice', 'GET', '/repos/demo/search?q=export%20const')
  t.equal(contractErrors('SearchResponse', s.body), '')
  t.equal(s.body.matches.length, 5)
  t.same(s.body.matches[0], { path: 'lib/util.ts', line: 1, text: 'export const x = 1;' })
  const lim = await api('alice', 'GET', '/repos/demo/search?q=export&limit=2')
  t.equal(lim.body.matches.length, 2)
  t.equal(lim.body.truncated, true)
  const nomatch = await api('alice', 'GET', '/repos/demo/search?q=zzzz-nothing')
  t.same(nomatch.body.matches, [])
  t.equal((await api('alice', 'GET', '/repos/demo/search')).status, 422)
})

t.test('scope and role refusals on reads', async (t) => {
  // rita has read scope; remove her role and reading must stop
  const noRole = await api('admin', 'PUT', '/admin/repos/demo/roles', { principal: 'human:rita', role: 'none' })
  t.equal(noRole.status, 200)
  const r = await api('rita', 'GET', '/repos/demo/log')
  t.equal(r.status, 403)
  t.match(r.body.error.message, /role 'none'/)
  await api('admin', 'PUT', '/admin/repos/demo/roles', { principal: 'human:rita', role: 'reviewer' })
  t.equal((await api('rita', 'GET', '/repos/demo/log')).status, 200)
})

t.test('admin endpoints need the admin scope', async (t) => {
  const r = await api('alice', 'GET', '/admin/tokens')
  t.equal(r.status, 403)
  t.match(r.body.error.message, /admin/)
  const list = await api('admin', 'GET', '/admin/tokens')
  t.equal(list.status, 200)
  t.equal(contractErrors('AdminTokenList', list.body), '')
  t.notOk(JSON.stringify(list.body).includes(fx.tokens['alice'] as string), 'no secrets listed')
  t.notOk(JSON.stringify(list.body).includes('hash'), 'no hashes listed')
  const minted = await api('admin', 'POST', '/admin/tokens', {
    principal: 'agent:zed',
    scopes: ['read'],
    repos: ['demo'],
    ttl_s: 60,
  })
  t.equal(minted.status, 201)
  t.equal(contractErrors('AdminTokenMintResponse', minted.body), '')
  t.match(minted.body.token, /^agwp_[A-Za-z0-9_-]{43}$/, '256-bit token')
  await api('admin', 'PUT', '/admin/repos/demo/roles', { principal: 'agent:zed', role: 'reader' })
  t.equal((await api(minted.body.token, 'GET', '/whoami')).status, 200)
  const rev = await api('admin', 'DELETE', `/admin/tokens/${minted.body.info.id}`)
  t.equal(rev.status, 200)
  const after = await api(minted.body.token, 'GET', '/whoami')
  t.equal(after.status, 401)
  t.match(after.body.error.message, /revoked/)
  const bad = await api('admin', 'POST', '/admin/tokens', {
    principal: 'agent:zed',
    scopes: ['read'],
    repos: ['demo'],
    extra: 1,
  })
  t.equal(bad.status, 422)
})
