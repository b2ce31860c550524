import t, { type Test } from 'tap'
import path from 'node:path'
import { execFileSync } from 'node:child_process'
import { fixture, fsckProblems, sh } from './helpers.ts'
import { startServer, type RunningServer } from '../../server/src/http.ts'

// Workspace contents survive git gc: every object a workspace needs is reachable from
// refs/agwp/workspaces/<id>, so `git gc --prune=now` on the repository loses nothing, and
// data directories from before the refs get them at start-up.

const fx = await fixture()
t.teardown(fx.close)
const bare = path.join(fx.data, 'repos/demo.git')
const gc = (): void => {
  execFileSync(
    'git',
    [
      '--git-dir',
      bare,
      '-c',
      'gc.reflogExpire=now',
      '-c',
      'gc.reflogExpireUnreachable=now',
      'gc',
      '--prune=now',
      '--quiet',
    ],
    { stdio: 'ignore' },
  )
}
const refOf = (id: string): string | null => {
  try {
    return sh(bare, 'rev-parse', '--verify', '--quiet', `refs/agwp/workspaces/${id}`).trim()
  } catch {
    return null
  }
}
const mainHead = (): string => sh(bare, 'rev-parse', 'refs/heads/main').trim()
const looseCount = (): number => Number(/^(\d+) objects/.exec(sh(bare, 'count-objects'))?.[1])

const files: Record<string, string> = {
  'README.md': '# rewritten\n',
  'new/deep/file.txt': 'a file only this workspace has\n',
  'lib/util.ts': 'export const x = 42;\n',
}
const binary = Buffer.from([0, 1, 2, 3, 250, 251, 0, 9])

async function filled(api: typeof fx.api): Promise<string> {
  const ws = (await api('alice', 'POST', '/repos/demo/workspaces', {})).body.id
  for (const [p, c] of Object.entries(files))
    await api('alice', 'PUT', `/workspaces/${ws}/files`, { path: p, content: c })
  await api('alice', 'PUT', `/workspaces/${ws}/files`, {
    path: 'bin/data.bin',
    content: binary.toString('base64'),
    encoding: 'base64',
  })
  await api('alice', 'DELETE', `/workspaces/${ws}/files?path=lib/deep/leaf.txt`)
  await api('alice', 'POST', `/workspaces/${ws}/moves`, { from: 'new/deep/file.txt', to: 'new/moved.txt' })
  return ws
}

async function intact(t: Test, api: typeof fx.api, ws: string): Promise<void> {
  const want: Record<string, string> = { ...files, 'new/moved.txt': files['new/deep/file.txt'] as string }
  delete want['new/deep/file.txt']
  for (const [p, c] of Object.entries(want)) {
    const r = await api('alice', 'GET', `/workspaces/${ws}/file?path=${p}`)
    t.equal(r.status, 200, `read ${p}`)
    t.equal(r.body.content, c, `${p} intact`)
  }
  const b = await api('alice', 'GET', `/workspaces/${ws}/file?path=bin/data.bin`)
  t.same([...Buffer.from(b.body.content, 'base64')], [...binary], 'binary intact')
  const d = await api('alice', 'GET', `/workspaces/${ws}/diff`)
  t.equal(d.status, 200)
  t.same(d.body.files.map((f: { path: string }) => f.path).sort(), [
    'README.md',
    'bin/data.bin',
    'lib/deep/leaf.txt',
    'lib/util.ts',
    'new/moved.txt',
  ])
  t.ok(
    d.body.files.every((f: { binary: boolean; patch: string }) => f.binary || f.patch.length > 0),
    'every patch readable',
  )
}

t.test('a workspace survives git gc --prune=now: read, diff, propose', async (t) => {
  const ws = await filled(fx.api)
  t.ok(refOf(ws), 'refs/agwp/workspaces/<id> exists')
  t.equal(sh(bare, 'rev-parse', `refs/agwp/workspaces/${ws}^`).trim(), mainHead(), 'its parent is the base')
  gc()
  t.equal(looseCount(), 0, 'gc packed or pruned every loose object')
  await intact(t, fx.api, ws)
  const p = await fx.api('alice', 'POST', `/workspaces/${ws}/proposals`, { title: 'after gc' })
  t.equal(p.status, 201)
  t.equal(sh(bare, 'show', `${p.body.head}:new/moved.txt`), files['new/deep/file.txt'])
  t.equal(refOf(ws), null, 'proposed as is: the proposal ref keeps it, the workspace ref is gone')
  t.equal(fsckProblems(fx.data), '')
})

t.test('writes after a proposal, discard, and the ref follows', async (t) => {
  const ws = await filled(fx.api)
  await fx.api('alice', 'POST', `/workspaces/${ws}/proposals`, { title: 'first' })
  t.equal(refOf(ws), null)
  await fx.api('alice', 'PUT', `/workspaces/${ws}/files`, { path: 'later.txt', content: 'written after proposing\n' })
  t.ok(refOf(ws), 'a write after the proposal needs the ref again')
  gc()
  t.equal(
    (await fx.api('alice', 'GET', `/workspaces/${ws}/file?path=later.txt`)).body.content,
    'written after proposing\n',
  )
  const blob = (await fx.api('alice', 'GET', `/workspaces/${ws}/file?path=later.txt`)).body.blob as string
  t.equal((await fx.api('alice', 'DELETE', `/workspaces/${ws}`)).status, 200)
  t.equal(refOf(ws), null, 'discarded: no ref')
  gc()
  const gone = (() => {
    try {
      execFileSync('git', ['--git-dir', bare, 'cat-file', '-e', blob], { stdio: 'ignore' })
      return false
    } catch {
      return true
    }
  })()
  t.ok(gone, 'this gc does prune what no ref reaches (the discarded file is gone)')
  t.equal(fsckProblems(fx.data), '')
})

t.test('after a restart, and a data directory from before the refs', async (t) => {
  const ws = await filled(fx.api)
  const old = await filled(fx.api)
  await fx.server.close()
  // A data directory written by a server without workspace refs: no ref for `old`.
  sh(bare, 'update-ref', '-d', `refs/agwp/workspaces/${old}`)
  const logs: string[] = []
  let server: RunningServer = await startServer({
    dataDir: fx.data,
    host: '127.0.0.1',
    port: 0,
    rate: 0,
    log: (m) => logs.push(m),
  })
  t.ok(refOf(old), 'start-up created the missing ref')
  t.match(logs.join('\n'), /1 workspace ref\(s\) created/)
  gc()
  await server.close()
  server = await startServer({ dataDir: fx.data, host: '127.0.0.1', port: 0, rate: 0, log: () => undefined })
  t.teardown(() => server.close())
  const api: typeof fx.api = async (who, method, p, body) => {
    const r = await fetch(server.url + p, {
      method,
      headers: { authorization: `Bearer ${fx.tokens[who]}`, 'content-type': 'application/json' },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    })
    return { status: r.status, body: await r.json(), headers: r.headers }
  }
  for (const id of [ws, old]) {
    await intact(t, api, id)
    const p = await api('alice', 'POST', `/workspaces/${id}/proposals`, { title: `after restart ${id}` })
    t.equal(p.status, 201)
    const blob = execFileSync('git', ['--git-dir', bare, 'cat-file', 'blob', `${p.body.head}:bin/data.bin`])
    t.same([...blob], [...binary], 'the proposal holds the binary file whole')
  }
  t.equal(fsckProblems(fx.data), '')
})
