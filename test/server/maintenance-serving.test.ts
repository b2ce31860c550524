import t from 'tap'
import fs from 'node:fs'
import http from 'node:http'
import { once } from 'node:events'
import path from 'node:path'
import { fixture, sh } from './helpers.ts'
import { maintainRepo, readState } from '../../server/src/maintenance.ts'
import { casRefFile, readRef } from '../../server/src/refs.ts'
import { git, gitSpawns, STALE_PACKS } from '../../server/src/git.ts'
import { writeObject } from '../../server/src/objects.ts'
import { churn, OPTS, withServer } from './maintenance-kit.ts'

// Maintenance beside a serving server: what requests in flight may reference is kept, reads and
// writes are answered while it runs, and refs it packs lose nothing to the server's own updates.

t.test('a serving server keeps what the requests it is handling may reference', (t) =>
  withServer(0, async (fx, bare) => {
    await churn(fx, 60)
    // A write whose body has not all arrived: its handler runs (the server has answered
    // 100 Continue, which it does as it starts handling), for as long as the test likes.
    const held = http.request(`${fx.server.url}/repos/demo/workspaces`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${fx.tokens['bob']}`,
        'content-type': 'application/json',
        'content-length': '100',
        expect: '100-continue',
      },
    })
    held.on('error', () => undefined)
    held.flushHeaders()
    await once(held, 'continue')
    await fx.server.maintenance?.tick()
    const run = readState(bare).last_run
    t.ok(run?.ok, 'a run happened')
    t.ok((run?.kept_s ?? 0) > 0, `grace 0, yet it kept ${run?.kept_s} s: the held request's age and a margin`)
    held.destroy()
  }),
)

// A grace far above a request's duration (2 s here, minutes in production: a grace of 0 with
// writers running prunes blobs a write has stored and not yet referenced, which is why serve
// refuses a short one).
t.test('reads and writes are served while maintenance runs', (t) =>
  withServer(2, async (fx) => {
    const { ws } = await churn(fx, 80)
    let running = true
    let during = 0
    const failures: string[] = []
    const run = maintainRepo(fx.server.ctx.repos.get('demo'), { ...OPTS, graceS: 2 }, { full: true }).finally(() => {
      running = false
    })
    for (let i = 0; running || i < 20; i++) {
      const reqs = await Promise.all([
        fx.api('reed', 'GET', '/repos/demo/file?path=lib/util.ts'),
        fx.api('alice', 'GET', `/workspaces/${ws}/file?path=churn/file.txt`),
        fx.api('reed', 'GET', '/repos/demo/log?limit=5'),
        fx.api('alice', 'PUT', `/workspaces/${ws}/files`, { path: `during/${i}.txt`, content: `${i}\n` }),
      ])
      for (const r of reqs) if (r.status !== 200) failures.push(`${r.status} ${JSON.stringify(r.body)}`)
      if (running) during++
    }
    const r = await run
    t.ok(r && r !== 'deferred' && r.ok, 'the run succeeded')
    t.ok(during > 0, `rounds of requests answered while it ran: ${during}`)
    t.same(failures, [], 'no request failed')
    for (let i = 0; i < 20; i++) {
      const f = await fx.api('alice', 'GET', `/workspaces/${ws}/file?path=during/${i}.txt`)
      if (f.body.content !== `${i}\n`) failures.push(`during/${i}.txt: ${f.status}`)
    }
    t.same(failures, [], 'every file written during the run reads back')
  }),
)

t.test('a workspace ref deleted while pack-refs ran does not come back', (t) =>
  withServer(3600, async (fx, bare) => {
    const pw = (await fx.api('bob', 'POST', '/repos/demo/workspaces', {})).body.id as string
    await fx.api('bob', 'PUT', `/workspaces/${pw}/files`, { path: 'x.txt', content: 'x\n' })
    const ref = `refs/agwp/workspaces/${pw}`
    const state = readRef(bare, ref) as string
    t.ok(state, 'the workspace has a ref')
    t.equal((await fx.api('bob', 'POST', `/workspaces/${pw}/proposals`, { title: 'x' })).status, 201)
    t.equal(readRef(bare, ref), null, 'proposing dropped it')
    // What a pack-refs that listed the ref before its deletion writes: the ref in packed-refs.
    sh(bare, 'update-ref', ref, state)
    for (let i = 0; i < 6; i++) sh(bare, 'update-ref', `refs/test/r${i}`, 'HEAD')
    await fx.server.maintenance?.tick()
    t.ok(readState(bare).last_run?.steps.includes('pack_refs'), 'refs were packed')
    t.equal(readRef(bare, ref), null, 'the store does not want it: gone again')
  }),
)

t.test('compare-and-swap of refs loses nothing to a concurrent pack-refs', (t) =>
  withServer(3600, async (_fx, bare) => {
    const commits = sh(bare, 'rev-list', 'main').split('\n').filter(Boolean)
    t.ok(commits.length >= 3)
    const refs = Array.from({ length: 40 }, (_, i) => `refs/test/cas/${i}`)
    const value = new Map<string, string | null>(refs.map((r) => [r, null]))
    let packing = true
    const packer = (async () => {
      let n = 0
      while (packing || n < 3) {
        await git(bare, ['pack-refs', '--all', '--prune'], { okCodes: [1, 128] })
        n++
      }
      return n
    })()
    let swapped = 0
    let tried = 0
    for (let round = 0; round < 15; round++)
      await Promise.all(
        refs.map(async (ref, i) => {
          const cur = value.get(ref) ?? null
          const next = commits[(round + i) % commits.length] as string
          if (next === cur) return
          tried++
          if (await casRefFile(bare, ref, next, cur)) {
            value.set(ref, next)
            swapped++
          } else if (readRef(bare, ref) !== cur) throw new Error(`${ref} moved to ${readRef(bare, ref)} behind the CAS`)
        }),
      )
    packing = false
    t.ok((await packer) >= 3, 'pack-refs ran alongside')
    // pack-refs only holds a ref's lock for a moment: a swap waits for it rather than
    // failing (a failed swap of a workspace ref was a 500 on a file write).
    t.equal(swapped, tried, `all ${tried} swaps made, none refused for pack-refs' lock`)
    for (const ref of refs) t.equal(readRef(bare, ref), value.get(ref), `${ref} holds its last swap`)
    t.equal(
      sh(bare, 'for-each-ref', '--format=%(refname) %(objectname)', 'refs/test/cas/').split('\n').filter(Boolean)
        .length,
      40,
    )
  }),
)

t.test('the admin endpoint shows the counts and the last run', (t) =>
  withServer(3600, async (fx) => {
    await churn(fx, 50)
    await fx.server.maintenance?.tick()
    const r = await fx.api('admin', 'GET', '/admin/repos/demo/maintenance')
    t.equal(r.status, 200)
    t.equal(r.body.repo, 'demo')
    t.equal(typeof r.body.counts.disk_bytes, 'number')
    t.ok(r.body.state.runs >= 1, 'a run is recorded')
    t.ok(r.body.state.last_run.ok)
    t.equal((await fx.api('alice', 'GET', '/admin/repos/demo/maintenance')).status, 403, 'an agent token may not')
    t.equal((await fx.api('admin', 'GET', '/admin/repos/nope/maintenance')).status, 403, 'outside the token')
  }),
)

t.test('a ref lock held by another process is waited for, within a bound', async (t) => {
  const bare = t.testdir({})
  sh(bare, 'init', '-q', '--bare')
  const oid = '1'.repeat(40)
  const lock = path.join(bare, 'refs/heads/held.lock')
  fs.writeFileSync(lock, '')
  // The first attempt runs before casRefFile yields: the lock is still held then.
  const waiting = casRefFile(bare, 'refs/heads/held', oid, null)
  fs.rmSync(lock)
  t.equal(await waiting, true, 'taken once released')
  t.equal(readRef(bare, 'refs/heads/held'), oid)
  fs.writeFileSync(lock, '')
  t.equal(await casRefFile(bare, 'refs/heads/held', oid, oid, 0), false, 'a lock still held past the wait: refused')
  t.equal(readRef(bare, 'refs/heads/held'), oid, 'and nothing changed')
})

// `git pack-refs --prune` removes the directories it empties: one can go between the server's
// mkdir and its open of a lock inside. Made to happen here. (Objects go into objects/pack, which
// git never removes.)
t.test('a ref whose directory maintenance removed meanwhile is written', async (t) => {
  const bare = t.testdir({})
  sh(bare, 'init', '-q', '--bare')
  const open = fs.openSync
  let removed = 0
  const racing = (match: RegExp): void => {
    fs.openSync = (...args: Parameters<typeof fs.openSync>): number => {
      const file = String(args[0])
      if (removed === 0 && match.test(file)) {
        fs.rmdirSync(path.dirname(file))
        removed++
      }
      return open(...args)
    }
  }
  t.teardown(() => {
    fs.openSync = open
  })
  const id = await writeObject(bare, 'blob', Buffer.from('written while pack-refs ran\n'))
  racing(/refs\/race\/[^/]+\.lock$/)
  t.equal(await casRefFile(bare, 'refs/race/r1', id, null), true, 'the ref is written')
  t.equal(removed, 1, 'its directory was removed between the mkdir and the lock')
  t.equal(readRef(bare, 'refs/race/r1'), id)
})

// The timer looks at a repository every intervalS, and sooner once the server has written
// kickAt packs to it: here the interval is an hour, so only the packs can bring the look.
t.test('packs the server writes bring a look forward', async (t) => {
  const fx = await fixture({ server: { maintenance: { ...OPTS, graceS: 3600, intervalS: 3600, kickAt: 4 } } })
  t.teardown(fx.close)
  const bare = path.join(fx.data, 'repos/demo.git')
  t.equal(readState(bare).last_check, undefined, 'not looked at yet')
  const ws = (await fx.api('alice', 'POST', '/repos/demo/workspaces', {})).body.id as string
  for (let i = 0; i < 6; i++)
    await fx.api('alice', 'PUT', `/workspaces/${ws}/files`, { path: `k/${i}.txt`, content: `${i}\n` })
  // A condition, not a duration: the look comes within the timer's next rounds.
  for (let i = 0; i < 200 && readState(bare).last_check === undefined; i++) await new Promise((r) => setTimeout(r, 50))
  t.ok(readState(bare).last_check, 'looked at, an hour early')
})

// A long-lived git process keeps every pack it has seen mapped, removed or not, and searches
// them all on a miss: once STALE_PACKS were removed the repository's readers are replaced.
t.test('after many packs are removed, reads go to a new cat-file; reads in flight are answered', (t) =>
  withServer(3600, async (fx, bare) => {
    const repo = fx.server.ctx.repos.get('demo')
    const { ws, last } = await churn(fx, 20)
    // more packs, as writes make them (churn's reads of the repository went to the first cat-file)
    for (let i = 0; i < STALE_PACKS; i++) await writeObject(bare, 'blob', Buffer.from(`pack ${i}\n`))
    const head = sh(bare, 'rev-parse', 'refs/heads/main').trim()
    await repo.cat.get(head)
    const spawned = gitSpawns.get('cat-file --batch-command') ?? 0
    const inFlight = Array.from({ length: 50 }, () => repo.cat.get(head))
    const r = await maintainRepo(repo, OPTS, { full: true })
    t.ok(r && r !== 'deferred' && r.ok, 'a full run removed the packs the writes made')
    t.ok(r && r !== 'deferred' && r.before.packs > STALE_PACKS, `${r && r !== 'deferred' ? r.before.packs : 0} packs`)
    t.ok(
      inFlight.length > 0 && (await Promise.all(inFlight)).every((o) => o?.type === 'commit'),
      'reads in flight answered',
    )
    const f = await fx.api('alice', 'GET', `/workspaces/${ws}/file?path=churn/file.txt`)
    t.equal(f.body.content, last, 'a read after the run')
    t.equal(gitSpawns.get('cat-file --batch-command'), spawned + 1, 'by a new cat-file')
    // and the old one has exited, its removed packs with it
    const mapsOf = (pid: string): string => {
      try {
        return fs.readFileSync(`/proc/${pid}/maps`, 'utf8')
      } catch {
        return ''
      }
    }
    const stale = (): string[] =>
      fs
        .readdirSync('/proc')
        .filter((d) => /^\d+$/.test(d))
        .filter((pid) => /\.idx \(deleted\)/.test(mapsOf(pid)) && mapsOf(pid).includes(bare))
    // A condition, not a duration: the old process exits once it has read the end of its input.
    for (let i = 0; i < 100 && stale().length; i++) await new Promise((r) => setTimeout(r, 20))
    t.same(stale(), [], 'no process maps a removed pack of this repository')
  }),
)
