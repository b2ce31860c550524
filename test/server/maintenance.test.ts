import t from 'tap'
import fs from 'node:fs'
import http from 'node:http'
import { once } from 'node:events'
import path from 'node:path'
import { execFileSync } from 'node:child_process'
import { fixture, sh, type Fixture } from './helpers.ts'
import { repoAdd } from '../../server/src/admin.ts'
import {
  countRepo,
  maintainRepo,
  DEFAULT_MAINTENANCE,
  DEFER_LIMIT,
  keptFor,
  readState,
} from '../../server/src/maintenance.ts'
import { casRefFile, readRef } from '../../server/src/refs.ts'
import { git } from '../../server/src/git.ts'

// Repositories keep themselves small (maintenance.ts): loose objects and refs are packed,
// packs consolidated, unreachable objects past the grace dropped; nothing a ref reaches, nor
// anything younger than the grace, is ever removed, and requests are served throughout.
// Maintenance is driven by its tick (or maintainRepo), never by waiting for its timer.

const OPTS = { ...DEFAULT_MAINTENANCE, looseObjects: 40, maxPacks: 3, looseRefs: 5, intervalS: 3600 }

async function withServer(grace: number, f: (fx: Fixture, bare: string) => Promise<void>): Promise<void> {
  const fx = await fixture({ server: { maintenance: { ...OPTS, graceS: grace } } })
  try {
    await f(fx, path.join(fx.data, 'repos/demo.git'))
  } finally {
    await fx.close() // runs git fsck --strict on every repository
  }
}

/** Every object some ref reaches, by `git rev-list --objects --all`. */
const reachable = (bare: string): string[] =>
  sh(bare, 'rev-list', '--objects', '--all')
    .split('\n')
    .filter(Boolean)
    .map((l) => l.slice(0, 40))

/** Of these ids, those the repository does not have. */
function missing(bare: string, ids: string[]): string[] {
  const out = execFileSync('git', ['--git-dir', bare, 'cat-file', '--batch-check=%(objectname) %(objecttype)'], {
    input: ids.join('\n') + '\n',
    encoding: 'utf8',
  })
  return out
    .split('\n')
    .filter((l) => l.endsWith(' missing'))
    .map((l) => l.slice(0, 40))
}

const blobOf = (bare: string, content: string): string =>
  execFileSync('git', ['--git-dir', bare, 'hash-object', '--stdin'], { input: content, encoding: 'utf8' }).trim()

/** A workspace with `n` writes of one file (the superseded versions are unreachable) and a proposal. */
async function churn(fx: Fixture, n: number): Promise<{ ws: string; last: string }> {
  const ws = (await fx.api('alice', 'POST', '/repos/demo/workspaces', {})).body.id as string
  let last = ''
  for (let i = 0; i < n; i++) {
    last = `version ${i} of a file written again and again\n`
    const r = await fx.api('alice', 'PUT', `/workspaces/${ws}/files`, { path: 'churn/file.txt', content: last })
    if (r.status !== 200) throw new Error(`write ${i}: ${r.status}`)
  }
  for (let i = 0; i < 8; i++) {
    const pw = (await fx.api('bob', 'POST', '/repos/demo/workspaces', {})).body.id as string
    await fx.api('bob', 'PUT', `/workspaces/${pw}/files`, { path: `p/${i}.txt`, content: `proposed ${i}\n` })
    const p = await fx.api('bob', 'POST', `/workspaces/${pw}/proposals`, { title: `p${i}` })
    if (p.status !== 201) throw new Error(`propose ${i}: ${p.status}`)
  }
  return { ws, last }
}

t.test('the repository shrinks; everything reachable stays; fsck is clean', (t) =>
  withServer(0, async (fx, bare) => {
    const { ws, last } = await churn(fx, 60)
    const before = await countRepo(bare, true)
    const keep = reachable(bare)
    const superseded = blobOf(bare, 'version 3 of a file written again and again\n')
    t.ok(before.loose_objects >= 60, `loose objects before: ${before.loose_objects}`)
    t.ok(before.loose_refs >= 8, `loose refs before: ${before.loose_refs}`)
    t.same(missing(bare, [superseded]), [], 'a superseded version is there before')
    // pack refs and loose objects, then (the packs pile up) consolidate
    for (let i = 0; i < 4; i++) {
      await churn(fx, 45)
      await fx.server.maintenance?.tick()
    }
    await fx.server.maintenance?.tick()
    const state = readState(bare)
    const steps = state.recent.flatMap((r) => r.steps)
    t.ok(steps.includes('pack_refs') && steps.includes('pack_loose') && steps.includes('consolidate'), steps.join())
    t.ok(
      state.recent.every((r) => r.ok),
      'every run ok',
    )
    // once more, everything: nothing loose, one pack of what refs reach, the rest dropped (grace 0)
    const full = await maintainRepo(fx.server.ctx.repos.get('demo'), { ...OPTS, graceS: 0 }, { full: true })
    t.ok(full && full !== 'deferred' && full.ok, 'full run ok')
    const after = await countRepo(bare, true)
    t.equal(after.loose_objects, 0, 'no loose objects')
    t.ok(after.packs <= 2, `packs: ${after.packs}`)
    t.equal(after.loose_refs, 0, 'no loose refs')
    t.ok(after.disk_bytes < before.disk_bytes, `disk ${before.disk_bytes} -> ${after.disk_bytes}`)
    t.same(missing(bare, keep), [], 'every object reachable before is still there')
    t.same(missing(bare, [superseded]), [superseded], 'an unreachable superseded version past the grace is gone')
    const r = await fx.api('alice', 'GET', `/workspaces/${ws}/file?path=churn/file.txt`)
    t.equal(r.body.content, last, 'the workspace reads its file from the pack')
    t.ok(readRef(bare, `refs/agwp/workspaces/${ws}`), 'the workspace ref is there (packed)')
  }),
)

t.test('unreachable objects younger than the grace are kept', (t) =>
  withServer(3600, async (fx, bare) => {
    await churn(fx, 30)
    const superseded = blobOf(bare, 'version 3 of a file written again and again\n')
    const r = await maintainRepo(fx.server.ctx.repos.get('demo'), { ...OPTS, graceS: 3600 }, { full: true })
    t.ok(r && r !== 'deferred' && r.ok)
    t.equal((await countRepo(bare)).loose_objects, 0, 'all packed')
    t.same(missing(bare, [superseded]), [], 'the young unreachable blob is kept (cruft pack)')
  }),
)

t.test('what is kept: the grace, or longer while an older request runs', async (t) => {
  t.equal(keptFor(120, 0), 120, 'no request running: the grace')
  t.equal(keptFor(120, 30_000), 120, 'a request younger than the grace: the grace')
  t.equal(keptFor(120, 600_000), 610, 'a request running 10 minutes: its age and a margin')
  t.equal(keptFor(0, 1), 11, 'even a request just begun, with no grace')
})

t.test('an unreachable object older than the grace stays while an older request runs', (t) =>
  withServer(3600, async (fx, bare) => {
    const repo = fx.server.ctx.repos.get('demo')
    // What a request that began 10 minutes ago wrote 5 minutes ago, and has not referenced yet.
    const id = execFileSync('git', ['--git-dir', bare, 'hash-object', '-w', '--stdin'], {
      input: 'written by a request still running\n',
      encoding: 'utf8',
    }).trim()
    const file = path.join(bare, 'objects', id.slice(0, 2), id.slice(2))
    const fiveMinutesAgo = Date.now() / 1000 - 300
    fs.utimesSync(file, fiveMinutesAgo, fiveMinutesAgo)
    const grace = { ...OPTS, graceS: 60 }
    const held = await maintainRepo(repo, grace, { full: true, oldestRequestMs: () => 600_000 })
    t.ok(held && held !== 'deferred' && held.ok, 'run ok')
    t.equal(held && held !== 'deferred' ? held.kept_s : 0, 610, 'the run kept what the request may still reference')
    t.same(missing(bare, [id]), [], 'kept while the request runs')
    const done = await maintainRepo(repo, grace, { full: true, oldestRequestMs: () => 0 })
    t.equal(done && done !== 'deferred' ? done.kept_s : 0, 60, 'no request running: the grace')
    t.same(missing(bare, [id]), [id], 'gone once no request that old runs')
  }),
)

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

t.test('a busy server defers a run, at most DEFER_LIMIT times in a row', (t) =>
  withServer(3600, async (fx, bare) => {
    await churn(fx, 50)
    const repo = fx.server.ctx.repos.get('demo')
    for (let i = 0; i < DEFER_LIMIT; i++)
      t.equal(await maintainRepo(repo, OPTS, { busy: () => true }), 'deferred', `look ${i + 1}: deferred`)
    t.equal(readState(bare).deferred_in_a_row, DEFER_LIMIT)
    const r = await maintainRepo(repo, OPTS, { busy: () => true })
    t.ok(r && r !== 'deferred' && r.ok, 'then it runs, busy or not')
    t.equal(readState(bare).deferred_in_a_row, 0)
    t.equal(await maintainRepo(repo, OPTS, { busy: () => true }), undefined, 'nothing due: nothing deferred')
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

t.test('a repository that borrows its objects (repo add --shared) keeps working', async (t) => {
  const fx = await fixture({
    server: { maintenance: { ...OPTS, graceS: 0 } },
  })
  t.teardown(fx.close)
  const src = path.join(fx.root, 'src')
  repoAdd(fx.data, 'borrow', src, 'main', true)
  const bare = path.join(fx.data, 'repos/borrow.git')
  t.ok(fs.existsSync(path.join(bare, 'objects/info/alternates')), 'borrows through alternates')
  const srcObjects = sh(src, 'count-objects', '-v')
  const adminTok = fs.readFileSync(path.join(fx.data, 'admin.token'), 'utf8').trim()
  const role = await fx.api(adminTok, 'PUT', '/admin/repos/borrow/roles', {
    principal: 'agent:alice',
    role: 'contributor',
  })
  t.equal(role.status, 200)
  const tok = (
    await fx.api(adminTok, 'POST', '/admin/tokens', {
      principal: 'agent:alice',
      scopes: ['read', 'workspace', 'propose'],
      repos: ['borrow'],
    })
  ).body.token as string
  const ws = (await fx.api(tok, 'POST', '/repos/borrow/workspaces', {})).body.id as string
  for (let i = 0; i < 50; i++)
    await fx.api(tok, 'PUT', `/workspaces/${ws}/files`, { path: 'lib/util.ts', content: `export const x = ${i};\n` })
  const r = await maintainRepo(fx.server.ctx.repos.get('borrow'), { ...OPTS, graceS: 0 }, { full: true })
  t.ok(r && r !== 'deferred' && r.ok, r && r !== 'deferred' ? (r.error ?? 'ok') : 'ran')
  t.equal((await fx.api(tok, 'GET', `/workspaces/${ws}/file?path=lib/util.ts`)).body.content, 'export const x = 49;\n')
  t.equal(
    (await fx.api(tok, 'GET', '/repos/borrow/file?path=lib/deep/leaf.txt')).body.content,
    'leaf\n',
    'borrowed objects read',
  )
  // the borrowed objects stay borrowed: the local pack holds only what the server wrote
  const local = sh(bare, 'count-objects', '-v')
  const inPack = Number(/in-pack: (\d+)/.exec(local)?.[1])
  t.ok(inPack > 0 && inPack < 200, `objects packed locally: ${inPack}`)
  t.equal(sh(src, 'count-objects', '-v'), srcObjects, 'the lender is untouched')
})

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
