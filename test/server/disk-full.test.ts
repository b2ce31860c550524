import t, { type Test } from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { execFileSync } from 'node:child_process'
import { makeSourceRepo, sh, tmpdir, ALL_AGENT, journalStore } from './helpers.ts'
import { startServer, type RunningServer } from '../../server/src/http.ts'
import { createTask } from '../../server/src/coordination.ts'
import { fsJournalIo } from '../../server/src/store.ts'
import type { Json } from '../helpers/json.ts'
import { seedWorld } from '../helpers/agwp-world.ts'

// A full disk, seen from outside: writes answer 507 storage_full and change nothing, reads
// keep working, no temporary object file is left behind, and after space is freed and
// the server restarts every acknowledged write is there and nothing else.

async function setup(dataParent: string, srcParent: string): Promise<{ data: string; tokens: Record<string, string> }> {
  const src = makeSourceRepo(srcParent, 2)
  const data = path.join(dataParent, 'data')
  const { tokens } = await seedWorld(data, {
    repos: { demo: src },
    people: { alice: { principal: 'agent:alice', scopes: ALL_AGENT, role: 'contributor' } },
  })
  return { data, tokens }
}

const start = (data: string): Promise<RunningServer> =>
  startServer({ dataDir: data, host: '127.0.0.1', port: 0, rate: 0, log: () => undefined })

function client(server: RunningServer, token: string) {
  return async (method: string, p: string, body?: unknown): Promise<{ status: number; body: Json }> => {
    const r = await fetch(server.url + p, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    })
    return { status: r.status, body: await r.json() }
  }
}

function tmpObjects(gitDir: string): string[] {
  const out: string[] = []
  const objects = path.join(gitDir, 'objects')
  for (const d of fs.readdirSync(objects))
    if (/^[0-9a-f]{2}$/.test(d))
      for (const f of fs.readdirSync(path.join(objects, d))) if (f.startsWith('tmp_obj_')) out.push(f)
  return out
}

/** Fire a mixed series of writes; returns what was acknowledged, and every refusal's status/code. */
async function burst(
  api: ReturnType<typeof client>,
  ws: string,
  run: string,
  tag: string,
  n: number,
  acked: { files: Map<string, string>; notes: string[] },
): Promise<string[]> {
  const refused: string[] = []
  for (let i = 0; i < n; i++) {
    const p = `full/${tag}-${i}.txt`
    // sizes vary so some fit in what space is left and some do not
    const w = await api('PUT', `/workspaces/${ws}/files`, {
      path: p,
      content: `${tag} ${i}\n${'z'.repeat((i * 733) % 3000)}`,
    })
    if (w.status === 200) acked.files.set(p, w.body.blob)
    else refused.push(`${w.status} ${w.body.error?.code}`)
    const body = `note ${tag} ${i} ${'n'.repeat((i * 331) % 1500)}`
    const r = await api('POST', `/runs/${run}/notes`, { body })
    if (r.status === 201) acked.notes.push(body)
    else refused.push(`${r.status} ${r.body.error?.code}`)
  }
  return refused
}

async function verifyAfterRestart(
  t: Test,
  data: string,
  token: string,
  ws: string,
  run: string,
  acked: { files: Map<string, string>; notes: string[] },
): Promise<void> {
  const server = await start(data)
  try {
    const api = client(server, token)
    const view = (await api('GET', `/workspaces/${ws}`)).body
    const have = new Map<string, string>(view.changes.map((c: { path: string; blob: string }) => [c.path, c.blob]))
    t.same(Object.fromEntries(have), Object.fromEntries(acked.files), 'exactly the acknowledged file writes survived')
    for (const [p] of acked.files) {
      const r = await api('GET', `/workspaces/${ws}/file?path=${encodeURIComponent(p)}`)
      if (r.status !== 200) t.fail(`${p} unreadable after restart: ${r.status}`)
    }
    const notes = (await api('GET', `/runs/${run}`)).body.notes.map((x: { body: string }) => x.body)
    t.same(notes, acked.notes, 'exactly the acknowledged notes survived, in order')
    const fresh = await api('POST', '/repos/demo/workspaces', {})
    t.equal(fresh.status, 201, 'the restarted server takes writes')
  } finally {
    await server.close()
  }
}

t.test('injected ENOSPC on the journal: 507, reads work, nothing half-recorded', async (t) => {
  const root = tmpdir('full-seam')
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }))
  const { data, tokens } = await setup(root, root)
  const server = await start(data)
  const api = client(server, tokens.alice as string)
  const ws = (await api('POST', '/repos/demo/workspaces', {})).body.id as string
  const task = await createTask(server.ctx, 'human:x', 'demo', { title: 'disk' })
  const run = (await api('POST', `/tasks/${task.id}/claim`, {})).body.run_id as string
  const acked = { files: new Map<string, string>(), notes: [] as string[] }
  t.same(await burst(api, ws, run, 'before', 3, acked), [])
  // The journal's appends fail half-way, as on a full disk.
  let budget = 0
  journalStore(server.ctx).io = {
    ...fsJournalIo,
    write: (fd, buf, off, len) => {
      if (budget <= 0) throw Object.assign(new Error('ENOSPC'), { code: 'ENOSPC' })
      const n = fsJournalIo.write(fd, buf, off, Math.min(len, budget))
      budget -= n
      return n
    },
  }
  for (const b of [0, 5, 40, 0]) {
    budget = b
    const refused = await burst(api, ws, run, `full${b}`, 2, acked)
    t.same(new Set(refused), new Set(['507 storage_full']), `every write refused with 507 storage_full (budget ${b})`)
  }
  const read = await api('GET', `/workspaces/${ws}/file?path=README.md`)
  t.equal(read.status, 200, 'reads keep working while the disk is full')
  t.equal((await api('GET', `/workspaces/${ws}`)).status, 200)
  journalStore(server.ctx).io = fsJournalIo
  t.same(await burst(api, ws, run, 'after', 3, acked), [], 'writes work again once space is back')
  await server.close()
  await verifyAfterRestart(t, data, tokens.alice as string, ws, run, acked)
  t.same(tmpObjects(path.join(data, 'repos/demo.git')), [])
})

// A small tmpfs of our own to fill up; where it cannot be mounted the test is skipped,
// with the reason printed.
const fullRoot = tmpdir('full-fs')
t.teardown(() => fs.rmSync(fullRoot, { recursive: true, force: true }))
const mnt = path.join(fullRoot, 'mnt')
fs.mkdirSync(mnt)
let cannotMount: string | undefined
try {
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', mnt], { stdio: 'pipe' })
} catch (e) {
  const why = String((e as { stderr?: Buffer }).stderr ?? e)
    .trim()
    .split('\n')[0]
  cannotMount = `cannot mount a small tmpfs here (needs root or CAP_SYS_ADMIN): ${why}`
}

t.test('a real full filesystem (tmpfs)', { skip: cannotMount ?? false }, async (t) => {
  const root = fullRoot
  t.teardown(() => execFileSync('umount', ['-l', mnt]))
  const { data, tokens } = await setup(mnt, root)
  const server = await start(data)
  const api = client(server, tokens.alice as string)
  const ws = (await api('POST', '/repos/demo/workspaces', {})).body.id as string
  const task = await createTask(server.ctx, 'human:x', 'demo', { title: 'disk' })
  const run = (await api('POST', `/tasks/${task.id}/claim`, {})).body.run_id as string
  const acked = { files: new Map<string, string>(), notes: [] as string[] }
  t.same(await burst(api, ws, run, 'before', 2, acked), [])
  // Fill the filesystem, then give back a few pages so writes fail part-way through.
  const filler = path.join(mnt, 'filler')
  const fd = fs.openSync(filler, 'w')
  const chunk = Buffer.alloc(64 * 1024, 1)
  try {
    for (;;) fs.writeSync(fd, chunk)
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e
  }
  const size = fs.fstatSync(fd).size
  fs.ftruncateSync(fd, Math.max(0, size - 3 * 4096))
  fs.closeSync(fd)
  const refused = await burst(api, ws, run, 'full', 12, acked)
  t.ok(
    refused.length > 0,
    `the full disk refused writes (${refused.length} refused, ${acked.files.size} files and ${acked.notes.length} notes acknowledged so far)`,
  )
  t.same([...new Set(refused)], ['507 storage_full'], 'every refusal is 507 storage_full')
  t.equal((await api('GET', `/workspaces/${ws}/file?path=README.md`)).status, 200, 'reads keep working')
  t.equal((await api('GET', '/repos/demo/file?path=lib/util.ts')).status, 200)
  t.same(tmpObjects(path.join(data, 'repos/demo.git')), [], 'no temporary object file left behind')
  fs.rmSync(filler)
  t.same(await burst(api, ws, run, 'after', 3, acked), [], 'space freed: writes work again, no restart needed')
  await server.close()
  await verifyAfterRestart(t, data, tokens.alice as string, ws, run, acked)
  t.equal(
    sh(path.join(data, 'repos/demo.git'), 'fsck', '--no-progress', '--no-dangling').trim(),
    '',
    'repository intact',
  )
})

t.test('group commit: no answer before its state is durable; a failed fsync is 507 and rolled back', async (t) => {
  const root = tmpdir('full-fsync')
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }))
  const { data, tokens } = await setup(root, root)
  const server = await start(data)
  t.teardown(() => server.close())
  const api = client(server, tokens.alice as string)
  const ws = (await api('POST', '/repos/demo/workspaces', {})).body.id as string
  // Hold every fsync until released.
  const held: ((err: Error | null) => void)[] = []
  journalStore(server.ctx).io = { ...fsJournalIo, fsyncAsync: (_fd, done) => void held.push(done) }
  let putDone = false
  let getDone = false
  const put = api('PUT', `/workspaces/${ws}/files`, { path: 'held.txt', content: 'held\n' }).then((r) => {
    putDone = true
    return r
  })
  while (held.length === 0) await new Promise((r) => setImmediate(r))
  // A reader of the workspace sees the un-fsynced write in memory: it must wait too.
  const get = api('GET', `/workspaces/${ws}`).then((r) => {
    getDone = true
    return r
  })
  for (let i = 0; i < 50; i++) await new Promise((r) => setImmediate(r))
  t.notOk(putDone, 'the write is not answered before its fsync')
  t.notOk(getDone, 'a read of that state is not answered before it is durable')
  // The fsync fails: both are refused, and the write is gone from memory.
  for (const done of held.splice(0)) done(Object.assign(new Error('ENOSPC'), { code: 'ENOSPC' }))
  const [p, g] = await Promise.all([put, get])
  t.equal(p.status, 507)
  t.equal(p.body.error.code, 'storage_full')
  t.equal(g.status, 507, 'the read that saw lost state is refused too')
  journalStore(server.ctx).io = fsJournalIo
  const view = (await api('GET', `/workspaces/${ws}`)).body
  t.same(view.changes, [], 'the unacknowledged write was rolled back')
  t.equal((await api('PUT', `/workspaces/${ws}/files`, { path: 'ok.txt', content: 'ok\n' })).status, 200)
  t.equal((await api('GET', `/workspaces/${ws}/file?path=ok.txt`)).status, 200)
})
