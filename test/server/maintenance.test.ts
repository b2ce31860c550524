import t from 'tap'
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { execFileSync } from 'node:child_process'
import { fixture, sh } from './helpers.ts'
import { repoAdd } from '../../server/src/admin.ts'
import {
  countRepo,
  maintainRepo,
  DEFAULT_MAINTENANCE,
  DEFER_LIMIT,
  behind,
  keptFor,
  rollUp,
  ROLL_AT,
  plan,
  readState,
  type RepoCounts,
} from '../../server/src/maintenance.ts'
import { gitSpawns } from '../../server/src/git.ts'
import { readRef } from '../../server/src/refs.ts'
import { writeObjects } from '../../server/src/objects.ts'
import type { Repo } from '../../server/src/repos.ts'
import { blobOf, churn, looseBlobs, missing, OPTS, reachable, withServer } from './maintenance-kit.ts'

// Repositories keep themselves small (maintenance.ts): loose objects and refs are packed,
// packs consolidated, unreachable objects past the grace dropped; nothing a ref reaches, nor
// anything younger than the grace, is ever removed. Serving while it runs:
// maintenance-serving.test.ts.

t.test('the repository shrinks; everything reachable stays; fsck is clean', (t) =>
  withServer(0, async (fx, bare) => {
    const { ws, last } = await churn(fx, 60)
    const garbage = looseBlobs(bare, 50, 'a merge wrote and nothing kept')
    const before = await countRepo(bare, true)
    const keep = reachable(bare)
    const superseded = blobOf(bare, 'version 3 of a file written again and again\n')
    t.ok(before.added_packs >= 60, `packs before: ${before.added_packs} (a write is a pack of its own)`)
    t.ok(before.loose_objects >= 50, `loose objects before: ${before.loose_objects}`)
    t.ok(before.loose_refs >= 8, `loose refs before: ${before.loose_refs}`)
    t.same(missing(bare, [superseded]), [], 'a superseded version is there before')
    // pack refs and loose objects, then (the packs pile up) consolidate
    for (let i = 0; i < 4; i++) {
      await fx.server.maintenance?.tick()
      await churn(fx, 45)
      looseBlobs(bare, 50, `round ${i}`)
    }
    await fx.server.maintenance?.tick()
    const state = readState(bare)
    const steps = state.recent.flatMap((r) => r.steps)
    // A small repository: what requests add soon weighs 15% of its base, so it is consolidated
    // (which packs the loose objects too); a larger one rolls up (below).
    t.ok(steps.includes('pack_refs') && steps.includes('consolidate'), steps.join())
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
    t.same(missing(bare, garbage), garbage, 'and so are unreachable loose objects')
    const r = await fx.api('alice', 'GET', `/workspaces/${ws}/file?path=churn/file.txt`)
    t.equal(r.body.content, last, 'the workspace reads its file from the pack')
    t.ok(readRef(bare, `refs/agwp/workspaces/${ws}`), 'the workspace ref is there (packed)')
  }),
)

t.test('a consolidation runs git prune only where git left loose objects or a temporary file', (t) =>
  withServer(0, async (fx, bare) => {
    const repo = fx.server.ctx.repos.get('demo')
    const prunes = (): number => gitSpawns.get('prune') ?? 0
    await churn(fx, 20)
    await maintainRepo(repo, { ...OPTS, graceS: 0 }, { full: true }) // packs what the fixture left loose
    const before = prunes()
    const { last } = await churn(fx, 20)
    const superseded = blobOf(bare, 'version 3 of a file written again and again\n')
    t.equal((await countRepo(bare)).loose_objects, 0, 'requests write packs only')
    const r = await maintainRepo(repo, { ...OPTS, graceS: 0 }, { full: true })
    t.ok(r && r !== 'deferred' && r.ok && r.steps.includes('consolidate'))
    t.equal(prunes(), before, 'nothing loose: no git prune (a second walk of every reachable object)')
    t.same(missing(bare, [superseded]), [superseded], 'the garbage went all the same (the cruft pack dropped it)')
    t.same(missing(bare, [blobOf(bare, last)]), [], 'what a ref reaches stayed')
    // A git killed mid-write leaves tmp_ files; git prune removes those older than the grace.
    const left = path.join(bare, 'objects', 'pack', 'tmp_pack_killed')
    fs.writeFileSync(left, 'half a pack')
    const old = Date.now() / 1000 - 3600
    fs.utimesSync(left, old, old)
    await churn(fx, 2)
    await maintainRepo(repo, { ...OPTS, graceS: 0 }, { full: true })
    t.equal(prunes(), before + 1, 'a temporary file: git prune runs')
    t.notOk(fs.existsSync(left), 'and removes it')
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

t.test('what a look decides: shares of the base pack, the cruft pack aside', async (t) => {
  const MB = 1024 * 1024
  const c = (over: Partial<RepoCounts>): RepoCounts => ({
    loose_objects: 0,
    packs: 1,
    pack_bytes: 8 * MB,
    cruft_bytes: 0,
    base_bytes: 8 * MB,
    added_packs: 0,
    rollable: 0,
    loose_refs: 0,
    packed_refs: 0,
    disk_bytes: 0,
    ...over,
  })
  const o = DEFAULT_MAINTENANCE
  t.same(plan(c({}), o), [], 'one pack, nothing loose: nothing to do')
  t.same(plan(c({ loose_objects: 99 }), o), [], 'fewer than 100 loose objects wait')
  t.same(plan(c({ loose_objects: 300 }), o), [], '1.2 MB loose beside an 8 MB base: not yet')
  t.same(plan(c({ loose_objects: 320 }), o), ['pack_loose'], '1.25 MB loose: 15% of the base')
  // A busy repository keeps minutes of superseded content in its cruft pack: it is no reason
  // to let more pile up loose (a share of all the packs let the soak's disk reach 2.5x).
  t.same(
    plan(c({ loose_objects: 320, packs: 2, pack_bytes: 16 * MB, cruft_bytes: 8 * MB }), o),
    ['pack_loose'],
    'a cruft pack as large as the base changes nothing',
  )
  t.same(plan(c({ packs: 2, pack_bytes: 16 * MB, cruft_bytes: 8 * MB }), o), [], 'base and cruft: nothing to do')
  t.same(
    plan(c({ packs: 3, added_packs: 2, pack_bytes: 9 * MB }), o),
    [],
    'packs added since: 1 MB, under 15% of the base',
  )
  t.same(plan(c({ packs: 3, added_packs: 2, pack_bytes: 9.3 * MB }), o), ['consolidate'], '1.3 MB added: consolidated')
  t.same(
    plan(c({ packs: 17, added_packs: 16, pack_bytes: 8.1 * MB }), o),
    ['consolidate'],
    'roll-ups left --maintenance-max-packs packs, whatever their size',
  )
  t.same(
    plan(c({ packs: 17, added_packs: 16, rollable: 15, pack_bytes: 8.1 * MB }), o),
    ['roll_up'],
    '16 small packs a roll-up combines: rolled up, not consolidated',
  )
  t.same(
    plan(c({ packs: 8, added_packs: 7, rollable: 7, pack_bytes: 8.1 * MB }), o),
    [],
    'fewer than 8 small packs wait',
  )
  t.same(
    plan(c({ loose_objects: 320, packs: 17, added_packs: 16, rollable: 16, pack_bytes: 8.1 * MB }), o),
    ['pack_loose', 'roll_up'],
    'loose objects are packed first, and that pack rolled up with the others',
  )
  t.same(plan(c({ loose_objects: 2000, base_bytes: 0, pack_bytes: 0, packs: 0 }), o), ['pack_loose'])
  t.same(plan(c({ loose_refs: 100 }), o), ['pack_refs'], 'refs at 100 loose files')
  t.same(plan(c({ loose_refs: 99 }), o), [], '99 loose ref files beside an 8 MB base wait')
  t.same(
    plan(c({ loose_refs: 40, base_bytes: MB, pack_bytes: MB }), o),
    ['pack_refs'],
    'beside a 1 MB base: 40 are 15% of it',
  )
  t.same(plan(c({ loose_refs: 15, base_bytes: 0, pack_bytes: 0, packs: 0 }), o), [], 'fewer than 16 wait')
  // pack-refs rewrites every packed ref: with thousands packed, 100 loose ones wait for a tenth.
  const big = { base_bytes: 64 * MB, pack_bytes: 64 * MB, packed_refs: 11_000 }
  t.same(plan(c({ ...big, loose_refs: 1099 }), o), [], '1,099 loose refs beside 11,000 packed wait')
  t.same(plan(c({ ...big, loose_refs: 1100 }), o), ['pack_refs'], 'a tenth of the packed ones: packed')
  t.same(
    plan(c({ ...big, base_bytes: 8 * MB, pack_bytes: 8 * MB, loose_refs: 310 }), o),
    ['pack_refs'],
    'their blocks at 15% of the base pack them sooner',
  )
  t.same(plan(c({}), o, true), ['pack_refs', 'consolidate'], 'a full run does both')
  t.notOk(behind(c({ loose_objects: 320 }), o), 'due, not behind')
  t.ok(behind(c({ loose_objects: 640 }), o), 'twice what calls for a run: behind (not niced, does not wait)')
  t.ok(behind(c({ packs: 33, added_packs: 32, pack_bytes: 8.1 * MB }), o), 'twice --maintenance-max-packs')
  t.notOk(
    behind(c({ packs: 33, added_packs: 32, rollable: 32, pack_bytes: 8.1 * MB }), o),
    'twice the packs for a roll-up: not behind (requests write them faster than runs go)',
  )
  t.notOk(behind(c({ packs: 17, added_packs: 16, rollable: 16, pack_bytes: 8.1 * MB }), o), 'a roll-up due: not behind')
  t.notOk(behind(c({ packs: 2, pack_bytes: 16 * MB, cruft_bytes: 8 * MB }), o), 'a large cruft pack is not')
})

t.test('a roll-up combines the smallest packs until each left is twice the next smaller', (t) => {
  t.equal(rollUp([]), 0)
  t.equal(rollUp([8]), 0, 'one pack: nothing to combine')
  t.equal(rollUp([8, 8]), 2)
  t.equal(rollUp(Array(16).fill(8)), 16, 'equal packs: all of them')
  t.equal(rollUp([8, 16, 32, 64]), 0, 'already a progression')
  t.equal(rollUp([64, 8, 8, 128]), 2, 'in any order: the two 8s; 64 and 128 stay')
  t.equal(rollUp([8, 8, 1000]), 2, 'a large pack above stays')
  t.equal(rollUp([8, 8, 20]), 3, 'the next one under twice the rolled sum joins')
  // Sixteen packs of one size at a time, rolled each time: a binary counter, so the packs left
  // stay few (log2 of what was written) and each byte is rewritten about log2 times.
  let packs: number[] = []
  let rewritten = 0
  for (let round = 0; round < 64; round++) {
    packs.push(...Array(16).fill(1))
    const s = [...packs].sort((a, b) => a - b)
    const n = rollUp(s)
    const rolled = s.slice(0, n).reduce((a, b) => a + b, 0)
    rewritten += rolled
    packs = n ? [rolled, ...s.slice(n)] : s
  }
  const written = 64 * 16
  t.ok(packs.length <= 1 + Math.log2(written), `packs left: ${packs.length} after ${written} written`)
  t.ok(rewritten <= written * (1 + Math.log2(64)), `rewritten ${rewritten} for ${written}: about log2 times`)
  t.end()
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

/** A branch with `bytes` of random data, consolidated into the base pack. */
async function bigBase(repo: Repo, bare: string, bytes: number): Promise<void> {
  const big = execFileSync('git', ['--git-dir', bare, 'hash-object', '-w', '--stdin'], {
    input: crypto.randomBytes(bytes),
    encoding: 'utf8',
  }).trim()
  const tree = execFileSync('git', ['--git-dir', bare, 'mktree'], {
    input: `100644 blob ${big}\tbig.bin\n`,
    encoding: 'utf8',
  }).trim()
  sh(bare, 'update-ref', 'refs/heads/big', sh(bare, 'commit-tree', tree, '-m', 'big').trim())
  await maintainRepo(repo, OPTS, { full: true })
}

t.test('the packs requests write are rolled up; every object stays; fsck is clean', (t) =>
  withServer(0, async (fx, bare) => {
    // A base large enough that what the requests below add stays under 15% of it.
    const repo = fx.server.ctx.repos.get('demo')
    await bigBase(repo, bare, 2 << 20)
    const opts = { ...OPTS, maxPacks: 16 }
    await churn(fx, 20)
    const before = await countRepo(bare)
    t.ok(before.added_packs >= ROLL_AT, `packs the requests wrote: ${before.added_packs}`)
    const keep = reachable(bare)
    const r = await maintainRepo(repo, opts)
    t.ok(r && r !== 'deferred' && r.ok, 'run ok')
    t.same(
      r && r !== 'deferred' ? r.steps.filter((s) => s !== 'pack_refs') : [],
      ['roll_up'],
      'rolled up, not consolidated',
    )
    const after = await countRepo(bare)
    t.ok(after.added_packs < before.added_packs / 4, `packs: ${before.added_packs} -> ${after.added_packs}`)
    t.equal(after.base_bytes, before.base_bytes, 'the base pack is not rewritten')
    t.same(missing(bare, keep), [], 'every object reachable before is still there')
    const superseded = blobOf(bare, 'version 3 of a file written again and again\n')
    t.same(missing(bare, [superseded]), [], 'and what is not reachable too: a roll-up drops nothing')
  }),
)

t.test('a busy server defers a consolidation, at most DEFER_LIMIT times in a row', (t) =>
  withServer(3600, async (fx, bare) => {
    const repo = fx.server.ctx.repos.get('demo')
    await bigBase(repo, bare, 2 << 20)
    // 20% of the base added: a consolidation is due, and not behind (that is at 30%)
    await writeObjects(bare, [{ type: 'blob', body: crypto.randomBytes(400 << 10) }])
    t.same(plan(await countRepo(bare), OPTS), ['consolidate'], 'due')
    t.notOk(behind(await countRepo(bare), OPTS), 'due, not behind')
    // Small packs a roll-up would combine do not wait with it (they piled up to 72 in the soak).
    for (let i = 0; i < ROLL_AT; i++)
      await writeObjects(bare, [{ type: 'blob', body: Buffer.from(`small pack ${i}\n`) }])
    const rolled = await maintainRepo(repo, OPTS, { busy: () => true })
    t.same(rolled && rolled !== 'deferred' ? rolled.steps : rolled, ['roll_up'], 'look 1: rolled up meanwhile')
    t.ok((await countRepo(bare)).added_packs <= 2, 'the small packs are one now')
    t.same(plan(await countRepo(bare), OPTS), ['consolidate'], 'and the consolidation still due')
    t.equal(readState(bare).deferred_in_a_row, 1, 'look 1 counts as a deferral')
    for (let i = 1; i < DEFER_LIMIT; i++)
      t.equal(await maintainRepo(repo, OPTS, { busy: () => true }), 'deferred', `look ${i + 1}: deferred`)
    t.equal(readState(bare).deferred_in_a_row, DEFER_LIMIT)
    const r = await maintainRepo(repo, OPTS, { busy: () => true })
    t.ok(r && r !== 'deferred' && r.ok, 'then it runs, busy or not')
    t.same(r && r !== 'deferred' ? r.steps : [], ['consolidate'])
    t.equal(readState(bare).deferred_in_a_row, 0)
    t.equal(await maintainRepo(repo, OPTS, { busy: () => true }), undefined, 'nothing due: nothing deferred')
    // Cheaper steps do not wait: loose objects (git children wrote them) are packed at once.
    looseBlobs(bare, 60, 'a merge wrote')
    const loose = { ...OPTS, looseObjects: 45 }
    const packed = await maintainRepo(repo, loose, { busy: () => true })
    t.same(
      packed && packed !== 'deferred' ? packed.steps : packed,
      ['pack_loose'],
      'loose objects: packed, busy or not',
    )
    t.equal((await countRepo(bare)).loose_objects, 0)
    // Fallen behind (twice the threshold): a consolidation does not wait for a busy server.
    await writeObjects(bare, [{ type: 'blob', body: crypto.randomBytes(800 << 10) }])
    t.ok(behind(await countRepo(bare), OPTS), 'behind')
    const now = await maintainRepo(repo, OPTS, { busy: () => true })
    t.ok(now && now !== 'deferred' && now.ok, 'behind: it runs at once, busy or not')
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
