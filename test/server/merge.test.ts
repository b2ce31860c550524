import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { execFileSync, spawnSync } from 'node:child_process'
import fc from 'fast-check'
import { GIT_ENV, tmpdir } from './helpers.ts'
import { Repo } from '../../server/src/repos.ts'
import { trivialMerge } from '../../server/src/merge.ts'

// A merge made in process (merge.ts) must be git's own: whenever it answers, `git merge-tree
// --write-tree` of the same two commits is clean and writes the very same tree; when git
// finds a conflict or follows a rename, the in-process merge must have declined. Checked on
// random pairs of changes to one base: edits, additions, deletions, mode changes, a file
// turned into a directory, directories renamed by moving their files.

const root = tmpdir('merge')
t.teardown(() => fs.rmSync(root, { recursive: true, force: true }))
const gitDir = path.join(root, 'r.git')
const git = (args: string[], input?: string): string =>
  execFileSync('git', ['--git-dir', gitDir, ...args], { env: GIT_ENV, encoding: 'utf8', input })
git(['init', '-q', '--bare', '-b', 'main'])

const CONTENTS = ['one\n', 'two\n', 'three\nlines\nhere\n', 'four\n'].map((c) =>
  git(['hash-object', '-w', '--stdin'], c).trim(),
)
const PATHS = ['a.txt', 'b.txt', 'd/x.txt', 'd/y.txt', 'd/e/z.txt', 'f', 'm/only.txt']
type Files = Map<string, { mode: string; oid: string }>

/** Write a tree from flat paths (nested directories made on the way). */
function tree(files: Files): string {
  const dirs = new Map<string, Files>()
  const here: string[] = []
  for (const [p, e] of files) {
    const slash = p.indexOf('/')
    if (slash < 0) here.push(`${e.mode} blob ${e.oid}\t${p}`)
    else {
      const d = p.slice(0, slash)
      const sub = dirs.get(d) ?? new Map()
      sub.set(p.slice(slash + 1), e)
      dirs.set(d, sub)
    }
  }
  for (const [d, sub] of dirs) here.push(`040000 tree ${tree(sub)}\t${d}`)
  return git(['mktree'], here.join('\n') + (here.length ? '\n' : '')).trim()
}
const commit = (files: Files, parents: string[]): string =>
  git(['commit-tree', tree(files), ...parents.flatMap((p) => ['-p', p])], 'm').trim()

type Change =
  | { kind: 'keep' }
  | { kind: 'edit'; content: number }
  | { kind: 'delete' }
  | { kind: 'mode' }
  | { kind: 'to-dir' }
  | { kind: 'move-dir' }

function apply(base: Files, changes: Record<string, Change>): Files {
  const out: Files = new Map(base)
  for (const [p, c] of Object.entries(changes)) {
    const cur = out.get(p)
    if (c.kind === 'edit') out.set(p, { mode: cur?.mode ?? '100644', oid: CONTENTS[c.content] as string })
    else if (c.kind === 'delete') out.delete(p)
    else if (c.kind === 'mode' && cur) out.set(p, { ...cur, mode: cur.mode === '100644' ? '100755' : '100644' })
    else if (c.kind === 'to-dir' && cur && !p.includes('/')) {
      out.delete(p)
      out.set(`${p}/inner.txt`, cur)
    } else if (c.kind === 'move-dir' && p.startsWith('d/'))
      for (const [q, e] of [...out])
        if (q.startsWith('d/')) {
          out.delete(q)
          out.set(`moved/${q.slice(2)}`, e)
        }
  }
  return out
}

const change: fc.Arbitrary<Change> = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ kind: 'keep' as const }) },
  { weight: 4, arbitrary: fc.nat(CONTENTS.length - 1).map((content) => ({ kind: 'edit' as const, content })) },
  { weight: 1, arbitrary: fc.constant({ kind: 'delete' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'mode' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'to-dir' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'move-dir' as const }) },
)
const side = fc.dictionary(fc.constantFrom(...PATHS), change, { maxKeys: 4 })
const baseFiles = fc
  .subarray(PATHS, { minLength: 1 })
  .chain((ps) => fc.tuple(...ps.map((p) => fc.nat(CONTENTS.length - 1).map((c) => [p, c] as const))))

t.test(
  'an in-process merge is the tree git writes, and declines whatever git would not merge as a choice',
  async (t) => {
    const repo = new Repo('r', gitDir)
    t.teardown(() => repo.close())
    let answered = 0
    let runs = 0
    await fc.assert(
      fc.asyncProperty(baseFiles, side, side, async (bf, ours, theirs) => {
        runs++
        const base: Files = new Map(bf.map(([p, c]) => [p, { mode: '100644', oid: CONTENTS[c] as string }]))
        const b = commit(base, [])
        const o = commit(apply(base, ours), [b])
        const th = commit(apply(base, theirs), [b])
        const mine = await trivialMerge(
          repo,
          await repo.commitTree(b),
          await repo.commitTree(o),
          await repo.commitTree(th),
        )
        const r = spawnSync(
          'git',
          ['--git-dir', gitDir, 'merge-tree', '--write-tree', '--no-messages', '--name-only', '-z', o, th],
          { env: GIT_ENV, encoding: 'utf8' },
        )
        if (mine === undefined) return true
        answered++
        if (r.status !== 0) return false // git found a conflict the in-process merge missed
        if ((r.stdout.split('\0')[0] ?? '').trim() !== mine) return false
        // the trees it made are in the repository, whole
        git(['ls-tree', '-r', mine])
        return true
      }),
      { numRuns: 120 },
    )
    t.ok(answered >= runs / 4, `answered ${answered} of ${runs} merges in process (the rest went to git)`)
    t.equal(spawnSync('git', ['--git-dir', gitDir, 'fsck', '--no-dangling'], { env: GIT_ENV }).status, 0, 'git fsck')
  },
)

// Found by the property above (seed 229798306): both sides delete d/y.txt, one side adds its
// content elsewhere. Their d/ trees are the same, yet git pairs the deletion with the addition
// as a rename on one side against a deletion on the other, a conflict.
t.test('a deletion both sides made inside a directory goes to git', async (t) => {
  const repo = new Repo('r', gitDir)
  t.teardown(() => repo.close())
  const c0 = 0
  const base: Files = new Map(
    ['a.txt', 'b.txt', 'd/y.txt', 'd/e/z.txt', 'f'].map((p) => [p, { mode: '100644', oid: CONTENTS[c0] as string }]),
  )
  const b = commit(base, [])
  const o = commit(apply(base, { 'm/only.txt': { kind: 'edit', content: c0 }, 'd/y.txt': { kind: 'delete' } }), [b])
  const th = commit(apply(base, { 'd/y.txt': { kind: 'delete' } }), [b])
  const r = spawnSync('git', ['--git-dir', gitDir, 'merge-tree', '--write-tree', '--no-messages', o, th], {
    env: GIT_ENV,
    encoding: 'utf8',
  })
  t.equal(r.status, 1, 'git reports a conflict')
  const mine = await trivialMerge(repo, await repo.commitTree(b), await repo.commitTree(o), await repo.commitTree(th))
  t.equal(mine, undefined, 'the in-process merge declines it')
})
