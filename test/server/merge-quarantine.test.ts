import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { execFileSync } from 'node:child_process'
import { GIT_ENV, tmpdir } from './helpers.ts'
import { Repo } from '../../server/src/repos.ts'
import { mergeTree } from '../../server/src/merge.ts'
import { QUARANTINE_PREFIX, type RawObject } from '../../server/src/objects.ts'
import { settleRepository } from '../../server/src/refs.ts'

// A merge git must make (`git merge-tree`) writes its objects into a directory of its own,
// never the repository's fan-out directories, which maintenance's `prune-packed` and `prune`
// remove as they empty them (git retries a vanished one once, then fails the merge: seen as
// an integrate 500 during the soak). Here the repository cannot hold a loose object at all:
// each fan-out name is taken by a plain file.

const root = tmpdir('merge-quarantine')
t.teardown(() => fs.rmSync(root, { recursive: true, force: true }))
// A ':' and a '"' in the path: git splits its list of alternates at ':'.
const gitDir = path.join(root, 'r:"ü".git')
const git = (args: string[], input?: string): string =>
  execFileSync('git', ['--git-dir', gitDir, ...args], { env: GIT_ENV, encoding: 'utf8', input })
git(['init', '-q', '--bare', '-b', 'main'])

const blob = (s: string): string => git(['hash-object', '-w', '--stdin'], s).trim()
const commitOf = (content: string, parents: string[]): string => {
  const tree = git(['mktree'], `100644 blob ${blob(content)}\tf.txt\n`).trim()
  return git(['commit-tree', tree, ...parents.flatMap((p) => ['-p', p])], 'm').trim()
}
const lines = (edit: Record<number, string>): string =>
  Array.from({ length: 9 }, (_, i) => edit[i] ?? `line ${i}`).join('\n') + '\n'
const base = commitOf(lines({}), [])
// Both sides change f.txt (the in-process merge declines), far apart: git merges cleanly.
const ours = commitOf(lines({ 0: 'ours' }), [base])
const theirs = commitOf(lines({ 8: 'theirs' }), [base])
const clash = commitOf(lines({ 0: 'clash' }), [base])

for (const [name, c] of Object.entries({ ours, theirs, clash })) git(['update-ref', `refs/heads/${name}`, c])
git(['repack', '-adq'])
git(['prune-packed'])
const objects = path.join(gitDir, 'objects')
for (let i = 0; i < 256; i++) {
  const fan = path.join(objects, i.toString(16).padStart(2, '0'))
  fs.rmSync(fan, { recursive: true, force: true })
  fs.writeFileSync(fan, '')
}
const leftovers = (): string[] => fs.readdirSync(objects).filter((n) => n.startsWith(QUARANTINE_PREFIX))

t.test('git merges where the repository cannot take a loose object; its objects come back', async (t) => {
  const repo = new Repo('r', gitDir)
  const unwritten: RawObject[] = []
  const m = await mergeTree(repo, ours, theirs, null, unwritten)
  t.same(m.conflicts, [])
  t.match(m.tree, /^[0-9a-f]{40}$/)
  t.same(unwritten.map((o) => o.type).sort(), ['blob', 'tree'], 'the merged file and its tree, for the caller to write')
  t.throws(() => git(['cat-file', '-e', m.tree]), 'nothing written to the repository yet')
  t.same(leftovers(), [], 'the merge left no object directory behind')

  const written = await mergeTree(repo, ours, theirs, null)
  t.equal(written.tree, m.tree)
  t.equal(git(['cat-file', '-p', `${written.tree}:f.txt`]), lines({ 0: 'ours', 8: 'theirs' }), 'written as a pack')
  t.same(leftovers(), [])
})

t.test('a conflict is reported from the quarantine too', async (t) => {
  const m = await mergeTree(new Repo('r', gitDir), ours, clash, null)
  t.same(m.conflicts, ['f.txt'])
  t.same(leftovers(), [])
})

t.test('start-up removes the object directory of a merge a crash interrupted', async (t) => {
  const left = path.join(objects, `${QUARANTINE_PREFIX}dead`)
  fs.mkdirSync(path.join(left, 'ab'), { recursive: true })
  fs.writeFileSync(path.join(left, 'ab', 'c'.repeat(38)), 'x')
  t.ok(settleRepository(gitDir).includes(path.relative(gitDir, left)))
  t.same(leftovers(), [])
})

t.test('a commit git cannot read is an error, not a conflict', async (t) => {
  await t.rejects(mergeTree(new Repo('r', gitDir), ours, 'f'.repeat(40), null), /git merge-tree exited 1/)
  t.same(leftovers(), [])
})
