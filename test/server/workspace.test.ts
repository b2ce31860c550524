import t from 'tap'
import { fixture, contractErrors } from './helpers.ts'

const fx = await fixture({ server: { limits: { maxBodyBytes: 2 * 1024 * 1024 } } })
t.teardown(fx.close)
const { api } = fx

t.test('workspace lifecycle through the overlay', async (t) => {
  const c = await api('alice', 'POST', '/repos/demo/workspaces', {})
  t.equal(c.status, 201)
  t.equal(contractErrors('Workspace', c.body), '')
  const id = c.body.id as string
  const head = (await api('alice', 'GET', '/repos/demo')).body.head
  t.equal(c.body.base, head)
  t.equal(c.body.base_ref, 'main')

  const readme = await api('alice', 'GET', `/workspaces/${id}/file?path=README.md`)
  t.equal(readme.body.content, '# demo\nhello world\n', 'base visible through overlay')

  const w = await api('alice', 'PUT', `/workspaces/${id}/files`, {
    path: 'README.md',
    content: '# changed\n',
    if_match: readme.body.blob,
  })
  t.equal(w.status, 200)
  t.equal(contractErrors('WorkspaceFileWriteResponse', w.body), '')
  t.equal(w.body.created, false)
  const stale = await api('alice', 'PUT', `/workspaces/${id}/files`, {
    path: 'README.md',
    content: 'again',
    if_match: readme.body.blob,
  })
  t.equal(stale.status, 409, 'if_match against the old blob conflicts')
  const absent = await api('alice', 'PUT', `/workspaces/${id}/files`, {
    path: 'README.md',
    content: 'x',
    if_match: 'absent',
  })
  t.equal(absent.status, 409)

  const nw = await api('alice', 'PUT', `/workspaces/${id}/files`, {
    path: 'src/new/mod.ts',
    content: 'export {};\n',
    if_match: 'absent',
  })
  t.equal(nw.body.created, true)
  const bin = await api('alice', 'PUT', `/workspaces/${id}/files`, {
    path: 'img.bin',
    content: Buffer.from([0, 9, 0, 255]).toString('base64'),
    encoding: 'base64',
  })
  t.equal(bin.body.size, 4)
  const binRead = await api('alice', 'GET', `/workspaces/${id}/file?path=img.bin`)
  t.equal(binRead.body.encoding, 'base64')
  t.same([...Buffer.from(binRead.body.content, 'base64')], [0, 9, 0, 255])

  t.equal(
    (await api('alice', 'PUT', `/workspaces/${id}/files`, { path: 'README.md/x', content: 'x' })).status,
    409,
    'file under a file',
  )
  t.equal(
    (await api('alice', 'PUT', `/workspaces/${id}/files`, { path: 'lib', content: 'x' })).status,
    409,
    'file over a directory',
  )

  const del = await api('alice', 'DELETE', `/workspaces/${id}/files?path=lib/deep/leaf.txt`)
  t.equal(del.status, 200)
  t.equal(contractErrors('WorkspaceFileDeleteResponse', del.body), '')
  t.equal((await api('alice', 'GET', `/workspaces/${id}/file?path=lib/deep/leaf.txt`)).status, 404)
  t.equal((await api('alice', 'DELETE', `/workspaces/${id}/files?path=lib/deep/leaf.txt`)).status, 404)

  const mv = await api('alice', 'POST', `/workspaces/${id}/moves`, { from: 'lib/util.ts', to: 'lib/utils.ts' })
  t.equal(mv.status, 200)
  t.equal(contractErrors('WorkspaceMoveResponse', mv.body), '')
  t.equal(
    (await api('alice', 'POST', `/workspaces/${id}/moves`, { from: 'README.md', to: 'logo.bin' })).status,
    409,
    'move onto existing',
  )

  const root = await api('alice', 'GET', `/workspaces/${id}/file`)
  t.equal(contractErrors('FileResponse', root.body), '')
  t.same(
    root.body.entries.map((e: { name: string }) => e.name),
    ['README.md', 'img.bin', 'lib', 'logo.bin', 'src'],
  )
  const lib = await api('alice', 'GET', `/workspaces/${id}/file?path=lib`)
  t.same(
    lib.body.entries.map((e: { name: string }) => e.name),
    ['utils.ts'],
    'deleted dir gone, moved file renamed',
  )

  const d = await api('alice', 'GET', `/workspaces/${id}/diff`)
  t.equal(d.status, 200)
  t.equal(contractErrors('DiffResponse', d.body), '')
  const byPath = Object.fromEntries(d.body.files.map((f: { path: string; status: string }) => [f.path, f.status]))
  t.same(byPath, {
    'README.md': 'modified',
    'img.bin': 'added',
    'lib/deep/leaf.txt': 'deleted',
    'lib/utils.ts': 'renamed',
    'src/new/mod.ts': 'added',
  })

  const view = await api('alice', 'GET', `/workspaces/${id}`)
  t.equal(contractErrors('Workspace', view.body), '')
  t.equal(view.body.changes.length, 6)

  const other = await api('bob', 'GET', `/workspaces/${id}`)
  t.equal(other.status, 403, 'another principal cannot see the workspace')
  const disc = await api('alice', 'DELETE', `/workspaces/${id}`)
  t.equal(disc.body.state, 'discarded')
  t.equal((await api('alice', 'PUT', `/workspaces/${id}/files`, { path: 'x', content: 'y' })).status, 409)
})

t.test('refusals: scope, role, validation, size, paths', async (t) => {
  const ro = await api('reed', 'POST', '/repos/demo/workspaces', {})
  t.equal(ro.status, 403, 'read-only token cannot create a workspace')
  t.match(ro.body.error.message, /workspace/)
  const rev = await api('rita', 'POST', '/repos/demo/workspaces', {})
  t.equal(rev.status, 403)
  const id = (await api('alice', 'POST', '/repos/demo/workspaces', { base: 'main' })).body.id
  t.equal((await api('alice', 'POST', '/repos/demo/workspaces', { base: 'no-such-branch' })).status, 404)
  t.equal((await api('alice', 'POST', '/repos/demo/workspaces', { bogus: true })).status, 422, 'unknown field')
  t.equal((await api('alice', 'PUT', `/workspaces/${id}/files`, { path: 'a.txt' })).status, 422, 'missing content')
  t.equal((await api('alice', 'PUT', `/workspaces/${id}/files`, '{not json')).status, 422)
  for (const p of ['../x', '/abs', 'a/../../b', '.git/hooks/pre-commit', 'x\u0000y', 'a\\b', 'a//b']) {
    const r = await api('alice', 'PUT', `/workspaces/${id}/files`, { path: p, content: 'x' })
    t.equal(r.status, 422, JSON.stringify(p))
    t.equal(r.body.error.code, 'invalid')
  }
  const big = await api('alice', 'PUT', `/workspaces/${id}/files`, {
    path: 'big.txt',
    content: 'x'.repeat(3 * 1024 * 1024),
  })
  t.equal(big.status, 413)
  t.equal(big.body.error.code, 'too_large')
  t.equal((await api('alice', 'GET', `/workspaces/${id}/file?path=big.txt`)).status, 404, 'nothing written')
  t.equal((await api('alice', 'GET', '/workspaces/ws-999')).status, 404)
  const badB64 = await api('alice', 'PUT', `/workspaces/${id}/files`, {
    path: 'b.bin',
    content: '!!!',
    encoding: 'base64',
  })
  t.equal(badB64.status, 422)
})

t.test('an empty repository: the first proposal creates the branch', async (t) => {
  const { repoAdd, adminSetRole } = await import('../../server/src/admin.ts')
  repoAdd(fx.data, 'blank', undefined, 'main')
  for (const [p, r] of [
    ['agent:alice', 'contributor'],
    ['human:rita', 'reviewer'],
    ['human:mona', 'maintainer'],
  ] as const)
    await adminSetRole(fx.server.ctx.state, 'blank', p, r)
  // tokens of the fixture only cover 'demo'; mint wider ones
  const { adminMint } = await import('../../server/src/admin.ts')
  const tok = async (
    principal: string,
    scopes: ('read' | 'workspace' | 'propose' | 'review' | 'integrate')[],
  ): Promise<string> =>
    (await adminMint(fx.server.ctx.state, { principal, scopes, repos: ['blank'], ttl_s: 600 })).token
  const alice = await tok('agent:alice', ['read', 'workspace', 'propose'])
  const rita = await tok('human:rita', ['read', 'review'])
  const mona = await tok('human:mona', ['read', 'integrate'])
  const repo = await api(alice, 'GET', '/repos/blank')
  t.equal(repo.body.head, null)
  const ws = await api(alice, 'POST', '/repos/blank/workspaces', {})
  t.equal(ws.status, 201)
  t.equal(ws.body.base, null)
  t.same((await api(alice, 'GET', `/workspaces/${ws.body.id}/file`)).body.entries, [])
  await api(alice, 'PUT', `/workspaces/${ws.body.id}/files`, { path: 'README.md', content: 'first\n' })
  const p = await api(alice, 'POST', `/workspaces/${ws.body.id}/proposals`, { title: 'root' })
  t.equal(p.status, 201)
  t.equal(p.body.target, 'main')
  t.equal(p.body.target_head, null)
  await api(rita, 'POST', `/proposals/${p.body.id}/reviews`, { verdict: 'approve' })
  const i = await api(mona, 'POST', `/proposals/${p.body.id}/integrate`, {})
  t.equal(i.status, 200)
  t.equal(i.body.commit, p.body.head)
  t.equal((await api(alice, 'GET', '/repos/blank/file?path=README.md')).body.content, 'first\n')
})
