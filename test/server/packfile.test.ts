import t, { type Test } from 'tap'
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { execFileSync } from 'node:child_process'
import fc from 'fast-check'
import { GIT_ENV, sh } from './helpers.ts'
import { encodeIndex, encodePack, type PackObject, type PackType } from '../../server/src/packfile.ts'
import { formatCommit, hashObject, packsWritten, serializeTree, writeObjects } from '../../server/src/objects.ts'
import { settleRepository } from '../../server/src/refs.ts'

// The server writes objects as packs of its own (packfile.ts, objects.ts). git is the oracle:
// `git index-pack` must compute from our pack exactly the index we wrote, and every object must
// read back as written.

const bareRepo = (t: Test): string => {
  const dir = t.testdir({})
  sh(dir, 'init', '-q', '--bare')
  return dir
}
const git = (gitDir: string, args: string[], input?: Buffer): Buffer =>
  execFileSync('git', ['--git-dir', gitDir, ...args], { env: GIT_ENV, input, maxBuffer: 64 << 20 })
const obj = (type: PackType, body: Buffer): PackObject => ({ oid: hashObject(type, body), type, body })
const packFiles = (gitDir: string): string[] => fs.readdirSync(path.join(gitDir, 'objects/pack')).sort()

/** Our pack and index against git's: index-pack recomputes the index from the pack alone. */
async function checkWithGit(t: Test, objs: PackObject[]): Promise<void> {
  const dir = t.testdir({})
  const { pack, idx, checksum } = await encodePack(objs)
  fs.writeFileSync(path.join(dir, 'p.pack'), pack)
  execFileSync('git', ['index-pack', '-o', path.join(dir, 'git.idx'), path.join(dir, 'p.pack')], { env: GIT_ENV })
  t.equal(Buffer.compare(fs.readFileSync(path.join(dir, 'git.idx')), idx), 0, 'the index is the one git computes')
  t.equal(pack.subarray(-20).toString('hex'), checksum, 'the checksum is the trailer')
}

t.test('packs and indexes as git writes them: sizes across the header boundaries, every type', async (t) => {
  const sizes = [0, 1, 15, 16, 17, 2047, 2048, 2049, 262143, 262144, 300000]
  const objs = sizes.map((n) => obj('blob', crypto.randomBytes(n)))
  const tree = obj('tree', serializeTree([{ mode: '100644', name: 'f', oid: (objs[1] as PackObject).oid }]))
  const who = { name: 'A U Thor', email: 'a@example.com' }
  objs.push(
    tree,
    obj('commit', formatCommit({ tree: tree.oid, parents: [], author: who, committer: who, message: 'm\n' })),
  )
  await checkWithGit(t, objs)
  const bare = bareRepo(t)
  const ids = await writeObjects(bare, objs)
  t.same(
    ids,
    objs.map((o) => o.oid),
  )
  for (const o of objs)
    t.equal(
      Buffer.compare(git(bare, ['cat-file', o.type, o.oid]), o.body),
      0,
      `${o.type} of ${o.body.length} bytes reads back`,
    )
  t.equal(git(bare, ['fsck', '--strict', '--no-dangling']).toString(), '')
})

t.test('any object sizes (sampled): git computes the same index', async (t) => {
  await fc.assert(
    fc.asyncProperty(fc.array(fc.integer({ min: 0, max: 70000 }), { minLength: 1, maxLength: 6 }), async (sizes) => {
      const dir = t.testdir({})
      const objs = sizes.map((n, i) => obj('blob', Buffer.concat([Buffer.from(`${i}`), crypto.randomBytes(n)])))
      const { pack, idx } = await encodePack(objs)
      fs.writeFileSync(path.join(dir, 'p.pack'), pack)
      execFileSync('git', ['index-pack', '-o', path.join(dir, 'git.idx'), path.join(dir, 'p.pack')], { env: GIT_ENV })
      return Buffer.compare(fs.readFileSync(path.join(dir, 'git.idx')), idx) === 0
    }),
    { numRuns: 25 },
  )
})

t.test('an object given twice is stored once', async (t) => {
  const o = obj('blob', Buffer.from('twice\n'))
  await checkWithGit(t, [o, o])
})

t.test('offsets past 2 GiB go to the index large-offset table', (t) => {
  // No 2 GiB pack here: the index alone, read back by git show-index.
  const entries = [
    { oid: 'aa'.repeat(20), crc: 1, offset: 12 },
    { oid: 'bb'.repeat(20), crc: 2, offset: 0x80000000 },
    { oid: '11'.repeat(20), crc: 3, offset: 5 * 2 ** 32 + 7 },
  ]
  const idx = encodeIndex(entries, Buffer.alloc(20))
  const shown = execFileSync('git', ['show-index'], { input: idx, encoding: 'utf8' })
  t.same(
    shown
      .trim()
      .split('\n')
      .map((l) => l.split(' ').slice(0, 2)),
    [
      ['12', 'aa'.repeat(20)],
      [String(0x80000000), 'bb'.repeat(20)],
      [String(5 * 2 ** 32 + 7), '11'.repeat(20)],
    ].sort((a, b) => ((a[1] as string) < (b[1] as string) ? -1 : 1)),
  )
  t.end()
})

t.test('calls for one repository while a pack is written share the next one', async (t) => {
  const bare = bareRepo(t)
  const before = packsWritten(bare)
  const calls = Array.from({ length: 20 }, (_, i) => [
    { type: 'blob' as const, body: Buffer.from(`call ${i}\n`) },
    { type: 'blob' as const, body: Buffer.from(`and its second object ${i}\n`) },
  ])
  const ids = await Promise.all(calls.map((objs) => writeObjects(bare, objs)))
  const packs = packFiles(bare).filter((f) => f.endsWith('.pack'))
  t.ok(packs.length < 20 && packs.length === packsWritten(bare) - before, `20 calls, ${packs.length} packs`)
  ids.forEach((pair, i) => {
    t.equal(git(bare, ['cat-file', 'blob', pair[0] as string]).toString(), `call ${i}\n`)
    t.equal(git(bare, ['cat-file', 'blob', pair[1] as string]).toString(), `and its second object ${i}\n`)
  })
})

t.test('a pack that cannot be completed fails its calls and leaves nothing behind', async (t) => {
  const bare = bareRepo(t)
  const rename = fs.promises.rename
  let failed = 0
  // The index's rename fails (a full disk, say), after the pack got its name.
  fs.promises.rename = async (from, to) => {
    if (String(to).endsWith('.idx') && failed++ === 0)
      throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' })
    return rename(from, to)
  }
  t.teardown(() => {
    fs.promises.rename = rename
  })
  const listed = packFiles(bare)
  const first = writeObjects(bare, [{ type: 'blob', body: Buffer.from('lost\n') }])
  const second = writeObjects(bare, [{ type: 'blob', body: Buffer.from('in the next pack\n') }])
  await t.rejects(first, { code: 'ENOSPC' })
  const [id] = await second
  t.equal(failed, 2, 'the next pack was written')
  t.equal(
    git(bare, ['cat-file', 'blob', id as string]).toString(),
    'in the next pack\n',
    'a later call is not failed with it',
  )
  t.equal(
    packFiles(bare).length,
    listed.length + 2,
    'nothing of the failed pack is left: only the next pack and its index',
  )
})

t.test('start-up removes a pack whose index never got its name', async (t) => {
  const bare = bareRepo(t)
  await writeObjects(bare, [{ type: 'blob', body: Buffer.from('kept\n') }])
  const orphan = path.join(bare, 'objects/pack', `pack-${'0'.repeat(40)}.pack`)
  fs.writeFileSync(orphan, 'PACK')
  fs.writeFileSync(path.join(bare, 'objects/pack/tmp_agwp_123456_idx'), '')
  const removed = settleRepository(bare)
  t.same(removed.sort(), [`objects/pack/pack-${'0'.repeat(40)}.pack`, 'objects/pack/tmp_agwp_123456_idx'])
  t.equal(packFiles(bare).length, 2, 'the complete pack and its index stay')
})
