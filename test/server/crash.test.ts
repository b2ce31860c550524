import t from 'tap'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { spawn, execFileSync, type ChildProcess } from 'node:child_process'
import { buildSync } from 'esbuild'
import { fileURLToPath } from 'node:url'
import { makeSourceRepo, tmpdir, sh } from './helpers.ts'
import type { Json } from '../helpers/json.ts'

// Crash safety of the real binary: SIGKILL in the middle of a burst of writes, restart on
// the same data directory, and check every acknowledged write is there and whole.

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
let bin = path.join(repoRoot, 'dist/ag-server.mjs')

// The real binary, bundled from the current sources into the test's own directory (so a
// stale or differently-bannered dist/ never decides the outcome).
function bundle(dir: string): void {
  bin = path.join(dir, 'ag-server.mjs')
  buildSync({
    entryPoints: [path.join(repoRoot, 'bin/ag-server.ts')],
    outfile: bin,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    banner: { js: "import{createRequire as __cr}from'module';const require=__cr(import.meta.url);" },
    logLevel: 'warning',
  })
}

const cli = (...args: string[]): string => execFileSync(process.execPath, [bin, ...args], { encoding: 'utf8' })

/** Servers started so far; each leads its own process group (it and the git it starts). */
const started: ChildProcess[] = []

/**
 * Kill every server's group and wait for the servers, then remove `root`. A server killed
 * alone leaves its git children (a repack, say) writing into the repository for a while, so
 * a removal that went first would meet a directory filling up again (ENOTEMPTY).
 */
async function cleanUp(root: string): Promise<void> {
  for (const child of started.splice(0)) {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL')
    } catch {
      // ESRCH: the group is gone already
    }
    if (child.exitCode === null && child.signalCode === null) await new Promise((r) => child.once('exit', r))
  }
  // A process the kill reached in the middle of a rename still finishes it: retry briefly.
  fs.rmSync(root, { recursive: true, force: true, maxRetries: 10 })
}

/** Start the server, the leader of its own process group, so cleanUp can end the git it started. */
function serve(data: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [bin, 'serve', '--data', data, '--listen', '127.0.0.1:0', '--rate', '0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  })
  started.push(child)
  return new Promise((resolve, reject) => {
    let out = ''
    let err = ''
    child.stderr?.on('data', (d: Buffer) => (err += d.toString()))
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString()
      const m = /listening on (http:\/\/\S+)/.exec(out)
      if (m?.[1]) resolve({ child, url: m[1] })
    })
    child.on('exit', (code) => reject(new Error(`server exited ${code}: ${err}`)))
  })
}

t.test('kill -9 mid-burst, restart, state is consistent', async (t) => {
  const root = tmpdir('crash')
  t.teardown(() => cleanUp(root))
  bundle(root)
  const src = makeSourceRepo(root, 2)
  const data = path.join(root, 'data')
  cli('init', data)
  t.equal(fs.statSync(path.join(data, 'admin.token')).mode & 0o777, 0o600)
  cli('repo', 'add', 'demo', '--from', src, '--data', data)
  const tokFile = path.join(root, 'alice.tok')
  const printed = cli(
    'token',
    'mint',
    '--principal',
    'agent:alice',
    '--scopes',
    'read,workspace,propose,coordinate',
    '--repos',
    'demo',
    '--ttl',
    '1h',
    '--out',
    tokFile,
    '--data',
    data,
  )
  const token = fs.readFileSync(tokFile, 'utf8').trim()
  t.equal(fs.statSync(tokFile).mode & 0o777, 0o600, 'token file is 0600')
  t.notOk(printed.includes(token), 'mint prints nothing secret')
  t.match(token, /^agwp_/)
  cli('role', 'set', '--repo', 'demo', '--principal', 'agent:alice', '--role', 'contributor', '--data', data)
  // A human maintainer integrates alice's proposals during the burst (no review needed).
  const monaFile = path.join(root, 'mona.tok')
  cli(
    'token',
    'mint',
    '--principal',
    'human:mona',
    '--scopes',
    'read,integrate',
    '--repos',
    'demo',
    '--ttl',
    '1h',
    '--out',
    monaFile,
    '--data',
    data,
  )
  const mona = fs.readFileSync(monaFile, 'utf8').trim()
  cli('role', 'set', '--repo', 'demo', '--principal', 'human:mona', '--role', 'maintainer', '--data', data)
  cli('policy', 'set', '--repo', 'demo', '--required-approvals', '0', '--data', data)
  const taskIds: string[] = [cli('task', 'add', '--repo', 'demo', '--title', 't-cli', '--data', data).trim()]
  t.match(taskIds[0], /^task-[0-9]+$/)

  const first = await serve(data)
  // More tasks through the admin API of the running server (the CLI's online mode is
  // exercised once, the rest is fast).
  t.equal(cli('task', 'add', '--repo', 'demo', '--title', 't-online', '--data', data).trim(), 'task-2')
  const admin = fs.readFileSync(path.join(data, 'admin.token'), 'utf8').trim()
  for (let i = 0; i < 300; i++) {
    const r = await fetch(`${first.url}/admin/repos/demo/tasks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({ title: `t${i}` }),
    })
    taskIds.push(((await r.json()) as { id: string }).id)
  }
  const call = async (
    url: string,
    method: string,
    p: string,
    body?: unknown,
    as = token,
  ): Promise<{ status: number; body: Json }> => {
    const r = await fetch(url + p, {
      method,
      headers: { authorization: `Bearer ${as}`, 'content-type': 'application/json' },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    })
    return { status: r.status, body: await r.json() }
  }
  const ws = (await call(first.url, 'POST', '/repos/demo/workspaces', {})).body.id as string

  const acked = {
    claims: new Map<string, string>(),
    writes: new Map<string, string>(),
    proposals: new Map<string, string>(),
    integrations: new Map<string, string>(),
  }
  let killed = false
  const worker = async (kind: number): Promise<void> => {
    for (let i = 0; !killed && i < 1000; i++) {
      try {
        if (kind === 0) {
          const task = taskIds[i]
          if (!task) return
          const r = await call(first.url, 'POST', `/tasks/${task}/claim`, {})
          if (r.status === 201) acked.claims.set(task, r.body.run_id)
        } else if (kind === 1) {
          const p = `burst/f${i}.txt`
          const r = await call(first.url, 'PUT', `/workspaces/${ws}/files`, { path: p, content: `content ${i}\n` })
          if (r.status === 200) acked.writes.set(p, r.body.blob)
        } else if (kind === 2) {
          const w = (await call(first.url, 'POST', '/repos/demo/workspaces', {})).body.id
          await call(first.url, 'PUT', `/workspaces/${w}/files`, { path: `p${i}.txt`, content: `${i}\n` })
          const r = await call(first.url, 'POST', `/workspaces/${w}/proposals`, { title: `p${i}` })
          if (r.status === 201) acked.proposals.set(r.body.id, r.body.head)
        } else {
          // propose, then integrate (merge strategy: the proposal head becomes reachable
          // from main exactly when the integration happened)
          const w = (await call(first.url, 'POST', '/repos/demo/workspaces', {})).body.id
          await call(first.url, 'PUT', `/workspaces/${w}/files`, { path: `int/i${kind}-${i}.txt`, content: `${i}\n` })
          const pr = await call(first.url, 'POST', `/workspaces/${w}/proposals`, { title: `i${kind}-${i}` })
          if (pr.status !== 201) continue
          acked.proposals.set(pr.body.id, pr.body.head)
          const r = await call(first.url, 'POST', `/proposals/${pr.body.id}/integrate`, { strategy: 'merge' }, mona)
          if (r.status === 200) acked.integrations.set(pr.body.id, r.body.commit)
        }
      } catch {
        return // connection died with the server
      }
    }
  }
  const workers = [0, 1, 1, 2, 2, 3, 4].map(worker)
  // Let the burst run until each kind of write has been acknowledged a few times (bounded
  // wait: the machine may be busy), then kill without warning while requests are in flight.
  const started = Date.now()
  while (
    Date.now() - started < 15_000 &&
    !(acked.claims.size >= 5 && acked.writes.size >= 5 && acked.proposals.size >= 3 && acked.integrations.size >= 3)
  )
    await new Promise((r) => setTimeout(r, 20))
  killed = true
  const exited = new Promise((r) => first.child.once('exit', r))
  first.child.kill('SIGKILL')
  await Promise.all(workers)
  await exited
  t.ok(
    acked.claims.size > 0 && acked.writes.size > 0 && acked.proposals.size > 0 && acked.integrations.size > 0,
    `burst acknowledged writes (${acked.claims.size} claims, ${acked.writes.size} writes, ${acked.proposals.size} proposals, ${acked.integrations.size} integrations)`,
  )

  const second = await serve(data)
  for (const [task, run] of acked.claims) {
    const r = await call(second.url, 'GET', `/tasks/${task}`)
    t.equal(r.body.run_id, run, `claim of ${task} survived`)
  }
  const wsView = (await call(second.url, 'GET', `/workspaces/${ws}`)).body
  const blobs = new Map<string, string>(wsView.changes.map((c: { path: string; blob: string }) => [c.path, c.blob]))
  let writesOk = 0
  for (const [p, blob] of acked.writes) if (blobs.get(p) === blob) writesOk++
  t.equal(writesOk, acked.writes.size, 'every acknowledged file write survived')
  for (const [p] of blobs) {
    const r = await call(second.url, 'GET', `/workspaces/${ws}/file?path=${encodeURIComponent(p)}`)
    t.equal(r.status, 200, `${p} readable (object present)`)
    if (r.status !== 200) break
  }
  const bare = path.join(data, 'repos/demo.git')
  for (const [id, head] of acked.proposals) {
    const r = await call(second.url, 'GET', `/proposals/${id}`)
    t.equal(r.body.head, head, `proposal ${id} survived`)
    t.equal(sh(bare, 'rev-parse', `refs/proposals/${id}`).trim(), head)
  }
  // Nothing half-written: every recorded proposal's commit exists and every run a task points to exists.
  const all = (await call(second.url, 'GET', '/repos/demo/proposals?limit=500')).body.proposals as {
    id: string
    head: string
  }[]
  for (const p of all) t.equal(sh(bare, 'cat-file', '-t', p.head).trim(), 'commit', `${p.id} head is a commit`)
  // Integrations are crash-consistent: the store and the branch agree on every proposal.
  for (const [id, commit] of acked.integrations) {
    const r = await call(second.url, 'GET', `/proposals/${id}`)
    t.same([r.body.state, r.body.integrated?.commit], ['integrated', commit], `integration of ${id} survived`)
  }
  const onMain = (c: string): boolean => {
    try {
      sh(bare, 'merge-base', '--is-ancestor', c, 'refs/heads/main')
      return true
    } catch {
      return false
    }
  }
  const inconsistent: string[] = []
  for (const p of all) {
    const full = (await call(second.url, 'GET', `/proposals/${p.id}`)).body
    if (full.state === 'integrated' && !onMain(full.integrated.commit))
      inconsistent.push(`${p.id} integrated but ${full.integrated.commit} is not on main`)
    if (full.state === 'open' && onMain(full.head)) inconsistent.push(`${p.id} open but its head is on main`)
  }
  // Every integration commit on main's first-parent chain is recorded on its proposal.
  const firstParent = sh(bare, 'log', '--first-parent', '--format=%H %s', 'refs/heads/main').trim().split('\n')
  let merges = 0
  for (const line of firstParent) {
    const m = /^([0-9a-f]{40}) Integrate (pr-[0-9]+):/.exec(line)
    if (!m) continue
    merges++
    const full = (await call(second.url, 'GET', `/proposals/${m[2]}`)).body
    if (full.state !== 'integrated' || full.integrated.commit !== m[1])
      inconsistent.push(`${m[2]} merged as ${m[1]} but recorded ${full.state} ${full.integrated?.commit ?? ''}`)
  }
  t.same(inconsistent, [], `store and branch agree after the crash (${merges} integration merges on main)`)
  t.same(
    (await call(second.url, 'GET', '/repos/demo/proposals?limit=500&state=integrated')).body.proposals.length >=
      acked.integrations.size,
    true,
  )
  const tasks = (await call(second.url, 'GET', '/repos/demo/tasks?limit=500')).body.tasks as {
    id: string
    run_id?: string
  }[]
  for (const task of tasks.filter((x) => x.run_id))
    t.equal((await call(second.url, 'GET', `/runs/${task.run_id}`)).status, 200)
  t.equal(sh(bare, 'fsck', '--connectivity-only', '--no-progress', '--no-dangling').trim(), '', 'repository is intact')
  // The restarted server keeps working.
  const fresh = await call(second.url, 'POST', '/repos/demo/workspaces', {})
  t.equal(fresh.status, 201)
  second.child.kill('SIGKILL')
})

t.test('killing the whole process group leaves no lock that blocks a later operation', async (t) => {
  const root = tmpdir('groupkill')
  t.teardown(() => cleanUp(root))
  if (!fs.existsSync(bin) || !bin.startsWith(os.tmpdir())) bundle(root)
  const src = makeSourceRepo(root, 2)
  const data = path.join(root, 'data')
  cli('init', data)
  cli('repo', 'add', 'demo', '--from', src, '--data', data)
  const mint = (principal: string, scopes: string, role: string): string => {
    const f = path.join(root, `${principal.replace(':', '-')}.tok`)
    cli(
      'token',
      'mint',
      '--principal',
      principal,
      '--scopes',
      scopes,
      '--repos',
      'demo',
      '--ttl',
      '1h',
      '--out',
      f,
      '--data',
      data,
    )
    cli('role', 'set', '--repo', 'demo', '--principal', principal, '--role', role, '--data', data)
    return fs.readFileSync(f, 'utf8').trim()
  }
  const alice = mint('agent:alice', 'read,workspace,propose', 'contributor')
  const mona = mint('human:mona', 'read,integrate', 'maintainer')
  cli('policy', 'set', '--repo', 'demo', '--required-approvals', '0', '--data', data)
  const bare = path.join(data, 'repos/demo.git')
  const call = async (url: string, method: string, p: string, body: unknown, as: string) => {
    const r = await fetch(url + p, {
      method,
      headers: { authorization: `Bearer ${as}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    return { status: r.status, body: (await r.json()) as Json }
  }
  const propose = async (url: string, file: string) => {
    const w = (await call(url, 'POST', '/repos/demo/workspaces', {}, alice)).body.id
    await call(url, 'PUT', `/workspaces/${w}/files`, { path: file, content: `${file}\n` }, alice)
    return { ws: w as string, pr: await call(url, 'POST', `/workspaces/${w}/proposals`, { title: file }, alice) }
  }
  // A proposal revised over and over while the group dies (its ref lock is the hot one).
  const first = await serve(data)
  const long = await propose(first.url, 'long.txt')
  first.child.kill('SIGKILL')
  await new Promise((r) => first.child.once('exit', r))

  let integrations = 0
  for (let round = 0; round < 3; round++) {
    const s = await serve(data)
    let stop = false
    let acked = 0
    const work = async (kind: number): Promise<void> => {
      for (let i = 0; !stop; i++) {
        try {
          if (kind === 0) {
            const { pr } = await propose(s.url, `g${round}/i${i}.txt`)
            if (pr.status !== 201) continue
            const r = await call(s.url, 'POST', `/proposals/${pr.body.id}/integrate`, { strategy: 'merge' }, mona)
            if (r.status === 200) acked++
          } else {
            await call(
              s.url,
              'PUT',
              `/workspaces/${long.ws}/files`,
              { path: 'long.txt', content: `r${round}-${i}\n` },
              alice,
            )
            const r = await call(
              s.url,
              'POST',
              `/proposals/${long.pr.body.id}/revisions`,
              { workspace: long.ws },
              alice,
            )
            if (r.status === 200) acked++
          }
        } catch {
          return
        }
      }
    }
    const workers = [0, 0, 1].map(work)
    const started = Date.now()
    while (Date.now() - started < 10_000 && acked < 4 + round * 3) await new Promise((r) => setTimeout(r, 5))
    stop = true
    integrations += acked
    const exited = new Promise((r) => s.child.once('exit', r))
    process.kill(-(s.child.pid as number), 'SIGKILL') // the server and every git process it started
    await Promise.all(workers)
    await exited
  }
  t.ok(integrations > 0, `writes acknowledged between group kills (${integrations})`)
  // What a group kill can leave in the middle of an update: the locks git and ag-server take.
  for (const f of ['refs/heads/main.lock', `refs/proposals/${long.pr.body.id}.lock`, 'HEAD.lock', 'packed-refs.lock'])
    fs.writeFileSync(path.join(bare, f), '')
  const after = await serve(data)
  const left: string[] = []
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const f = path.join(d, e.name)
      if (e.isDirectory()) walk(f)
      else if (e.name.endsWith('.lock')) left.push(path.relative(bare, f))
    }
  }
  walk(bare)
  t.same(left, [], 'start-up removed every stale lock')
  const { pr } = await propose(after.url, 'after.txt')
  t.equal(pr.status, 201, 'propose works')
  t.equal(
    (await call(after.url, 'POST', `/proposals/${pr.body.id}/integrate`, {}, mona)).status,
    200,
    'integrate into main works',
  )
  await call(after.url, 'PUT', `/workspaces/${long.ws}/files`, { path: 'long.txt', content: 'final\n' }, alice)
  t.equal(
    (await call(after.url, 'POST', `/proposals/${long.pr.body.id}/revisions`, { workspace: long.ws }, alice)).status,
    200,
    'revising the proposal whose ref lock was stale works',
  )
  t.equal(sh(bare, 'fsck', '--no-progress', '--no-dangling').trim(), '', 'repository is intact')
  after.child.kill('SIGKILL')
})
