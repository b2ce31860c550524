// --repo end to end for tools that act on an id: the real bundled ag-mcp, the real ag-server,
// two repositories (demo, other) that one token covers. An agent limited to --repo demo that
// learns the id of a workspace in `other` cannot touch it: naming `other` (or nothing) is
// refused by ag-mcp before any request, naming `demo` is sent with AGWP-Repo: demo and refused
// by ag-server as not found. A recording proxy in front of the server counts what is sent.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { execFileSync } from 'node:child_process'
import t from 'tap'
import { startServer } from '../../server/src/http.ts'
import { client, mcp, writeTokenFile } from './agwp-fixture.ts'
import { forwardingProxy, notStartupCheck } from '../helpers/recording-server.ts'
import type { McpProcess } from '../helpers/mcp-process.ts'
import type { Json } from '../helpers/json.ts'
import { seedWorld } from '../helpers/agwp-world.ts'
import { GIT_IDENTITY } from '../helpers/git-identity.ts'

const GIT_ENV = { ...process.env, ...GIT_IDENTITY }
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ag-mcp-scope-'))
const src = path.join(dir, 'src')
fs.mkdirSync(src)
execFileSync('git', ['init', '-q', '-b', 'main'], { cwd: src, env: GIT_ENV })
fs.writeFileSync(path.join(src, 'README.md'), '# shared\n')
execFileSync('git', ['add', '.'], { cwd: src, env: GIT_ENV })
execFileSync('git', ['commit', '-q', '-m', 'initial'], { cwd: src, env: GIT_ENV })
const data = path.join(dir, 'data')
const TOKEN = (
  await seedWorld(data, {
    repos: { demo: src, other: src },
    people: {
      alice: { principal: 'agent:alice', scopes: ['read', 'workspace', 'propose', 'coordinate'], role: 'contributor' },
    },
  })
).tokens.alice
const server = await startServer({ dataDir: data, host: '127.0.0.1', port: 0, rate: 0, log: () => undefined })

// The proxy ag-mcp talks to: records each request, forwards it unchanged to the real server.
// Counts the requests of tool calls: ag-mcp's start-up check (GET /whoami) is not one.
const proxy = await forwardingProxy(server.url, {}, notStartupCheck)
const processes: McpProcess[] = []
t.teardown(async () => {
  await proxy.close()
  await server.close()
  fs.rmSync(dir, { recursive: true, force: true })
})

async function api(method: string, p: string, body?: unknown): Promise<{ status: number; body: Record<string, Json> }> {
  const res = await fetch(server.url + p, {
    method,
    headers: {
      authorization: `Bearer ${TOKEN}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  })
  return { status: res.status, body: (await res.json()) as Record<string, Json> }
}

// A workspace in `other`, made by another process (here: straight over HTTP, same token).
const wsOther = String((await api('POST', '/repos/other/workspaces', {})).body['id'])
if ((await api('PUT', `/workspaces/${wsOther}/files`, { path: 'README.md', content: 'theirs\n' })).status !== 200)
  throw new Error('setup: write in other failed')
const untouched = (await api('GET', `/workspaces/${wsOther}`)).body

t.test('--repo demo: a workspace of `other` cannot be written, by any choice of repo', async (t) => {
  const p = mcp(t, proxy.url, writeTokenFile(dir, 'alice', TOKEN), ['--repo', 'demo'])
  processes.push(p)
  const c = await client(p, '2026-07-28')
  const write = { workspace: wsOther, path: 'README.md', content: 'pwned\n' }

  proxy.requests.length = 0
  const asDemo = await c.call('file_write', { repo: 'demo', ...write })
  t.equal(asDemo.isError, true, 'repo demo with the foreign id: refused')
  t.match(asDemo.text, /failed: the upstream answered 404 not_found/, 'by ag-server, as not found')
  t.ok(asDemo.text.includes(`no workspace '${wsOther}' in repository 'demo'`), 'which names only demo')
  t.notMatch(asDemo.text, /other/, 'and reveals nothing about the other repository')
  t.equal(proxy.requests.length, 1, 'one request')
  t.match(proxy.requests[0], { method: 'PUT', url: `/agwp/v1/workspaces/${wsOther}/files` })
  t.equal(proxy.requests[0]?.headers['agwp-repo'], 'demo', 'carrying AGWP-Repo: demo')

  proxy.requests.length = 0
  const asOther = await c.call('file_write', { repo: 'other', ...write })
  t.equal(asOther.isError, true, 'repo other: refused')
  t.match(asOther.text, /refused by --repo: repository "other" matches no --repo glob/, 'by the core')
  const bare = await c.call('file_write', write)
  t.equal(bare.isError, true, 'no repo: refused')
  t.match(
    bare.text,
    /refused by --repo: this server may only touch repositories matching demo; pass repo/,
    'by the core, saying what to pass',
  )
  for (const [name, args] of [
    ['propose', { workspace: wsOther, title: 'steal' }],
    ['workspace_discard', { workspace: wsOther }],
    ['workspace_status', { workspace: wsOther }],
  ] as const) {
    t.match((await c.call(name, args)).text, /refused by --repo: .*pass repo/, `${name} without repo`)
    t.match((await c.call(name, { ...args, repo: 'other' })).text, /refused by --repo/, `${name} with repo other`)
  }
  t.equal(proxy.requests.length, 0, 'none of the core refusals sent a request')

  for (const name of ['propose', 'workspace_discard', 'workspace_status'] as const) {
    const r = await c.call(name, {
      workspace: wsOther,
      repo: 'demo',
      ...(name === 'propose' ? { title: 'steal' } : {}),
    })
    t.match(r.text, /404 not_found/, `${name} with repo demo: not found upstream`)
  }
  t.ok(
    proxy.requests.every((r) => r.headers['agwp-repo'] === 'demo'),
    'every request sent carried AGWP-Repo: demo',
  )

  const after = await api('GET', `/workspaces/${wsOther}`)
  t.same(after.body, untouched, 'the workspace in other is unchanged')
  t.equal((await api('GET', `/workspaces/${wsOther}/file?path=README.md`)).body['content'], 'theirs\n')
  t.same((await api('GET', '/repos/other/proposals')).body['proposals'], [], 'nothing was proposed from it')

  // Its own repository works as before, by id too.
  const created = await c.call('workspace_create', { repo: 'demo' })
  t.equal(created.isError, false, created.text)
  const wsDemo = String(created.structured?.['id'])
  const own = await c.call('file_write', { repo: 'demo', workspace: wsDemo, path: 'a.txt', content: 'mine\n' })
  t.equal(own.isError, false, own.text)
  t.equal((await api('GET', `/workspaces/${wsDemo}/file?path=a.txt`)).body['content'], 'mine\n')
  t.equal((await p.close()).code, 0)
  p.assertValid(t)
})

t.test('without --repo, repo stays optional and no AGWP-Repo is sent', async (t) => {
  const p = mcp(t, proxy.url, writeTokenFile(dir, 'alice', TOKEN))
  processes.push(p)
  const c = await client(p, '2026-07-28')
  proxy.requests.length = 0
  const r = await c.call('file_write', { workspace: wsOther, path: 'b.txt', content: 'by id\n' })
  t.equal(r.isError, false, r.text)
  t.equal(proxy.requests.length, 1)
  t.equal(proxy.requests[0]?.headers['agwp-repo'], undefined, 'no header')
  t.equal(
    (await api('GET', `/workspaces/${wsOther}/file?path=b.txt`)).body['content'],
    'by id\n',
    'written: the token covers other',
  )
  const named = await c.call('workspace_status', { workspace: wsOther, repo: 'demo' })
  t.match(named.text, /404 not_found/, 'a repo given without --repo is still sent, and still binds')
  t.equal(proxy.requests[1]?.headers['agwp-repo'], 'demo')
  t.equal((await p.close()).code, 0)
  p.assertValid(t)
})

t.test('whoami under --repo demo: only demo, not the other repositories and roles', async (t) => {
  const p = mcp(t, proxy.url, writeTokenFile(dir, 'alice-whoami', TOKEN), ['--repo', 'demo'])
  processes.push(p)
  const c = await client(p, '2026-07-28')
  const r = await c.call('whoami')
  t.notOk(r.isError, r.text.slice(0, 200))
  t.same(r.structured?.['roles'], { demo: 'contributor' }, 'roles of demo only')
  t.same(r.structured?.['repos'], ['demo'], 'repositories: demo only')
  t.notOk(/\bother\b/.test(r.text), 'the text does not name the other repository')
  t.equal((await p.close()).code, 0)
  const q = mcp(t, proxy.url, writeTokenFile(dir, 'alice-all', TOKEN))
  processes.push(q)
  const all = await (await client(q, '2026-07-28')).call('whoami')
  t.same(all.structured?.['roles'], { demo: 'contributor', other: 'contributor' }, 'without --repo, both')
  t.equal((await q.close()).code, 0)
})

t.test('no process printed the token', async (t) => {
  for (const p of processes) {
    await p.exited
    t.notOk((p.lines.join('\n') + p.stderr).includes(TOKEN))
  }
})
