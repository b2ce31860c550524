import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { execFileSync } from 'node:child_process'
import { GIT_ENV, tmpdir } from './helpers.ts'
import { Repo } from '../../server/src/repos.ts'
import { mergeBase, walkLog } from '../../server/src/history.ts'

// The in-process log walk must list exactly what `git log <start>` lists, in the same
// order, with the same fields: merges, equal commit dates (ties), subjects with leading
// blank lines, trailing whitespace and several lines, identities with odd spacing.

const root = tmpdir('history')
t.teardown(() => fs.rmSync(root, { recursive: true, force: true }))
const gitDir = path.join(root, 'h.git')
const git = (args: string[], input?: string, env: Record<string, string> = {}): string =>
  execFileSync('git', ['--git-dir', gitDir, ...args], { env: { ...GIT_ENV, ...env }, encoding: 'utf8', input })
git(['init', '-q', '--bare'])
let n = 0
const commit = (parents: string[], msg: string, time: number, who = 'Ann  Author'): string => {
  const blob = git(['hash-object', '-w', '--stdin'], `content ${n++}\n`).trim()
  const tree = git(['mktree'], `100644 blob ${blob}\tf${n}.txt\n`).trim()
  const date = `${time} +0200`
  return git(['commit-tree', tree, ...parents.flatMap((p) => ['-p', p])], msg, {
    GIT_AUTHOR_NAME: who,
    GIT_AUTHOR_EMAIL: 'ann@example.invalid',
    GIT_COMMITTER_NAME: 'Cy Committer',
    GIT_COMMITTER_EMAIL: 'cy@example.invalid',
    GIT_AUTHOR_DATE: date,
    GIT_COMMITTER_DATE: date,
  }).trim()
}

// main: a line of commits; side branches merged back; several commits share a date.
let main = commit([], 'root\n', 1_700_000_000)
const tips: string[] = []
for (let i = 1; i <= 24; i++) {
  const time = 1_700_000_000 + Math.floor(i / 3) * 60 // ties in groups of three
  if (i % 5 === 0) {
    const side = commit([tips[tips.length - 3] ?? main], `side ${i}\n`, time - 30, 'Bo')
    main = commit([main, side], `Integrate side ${i}\n\nAGWP-Proposal: pr-${i}\n`, time)
  } else if (i % 7 === 0) main = commit([main], `\n\n  lead ${i}  \nsecond line\t\n  \nbody\n`, time)
  else main = commit([main], `change ${i}\nwrapped subject\n\nbody ${i}\n`, time)
  tips.push(main)
}

t.test('walkLog lists what git log lists', async (t) => {
  const repo = new Repo('h', gitDir)
  t.teardown(() => repo.close())
  const fmt = '%H %P%x00%an%x00%ae%x00%at%x00%cn%x00%ce%x00%ct%x00%s'
  for (const [skip, count] of [
    [0, 100],
    [0, 5],
    [3, 7],
    [20, 50],
  ] as const) {
    const expected = git(['log', `--format=${fmt}`, `-n${count}`, `--skip=${skip}`, main])
      .trim()
      .split('\n')
    const got = (await walkLog(repo, main, skip, count)) ?? []
    const mine = got.map(
      (c) =>
        `${c.id} ${c.parents.join(' ')}\0${c.author.name}\0${c.author.email}\0${c.author.time}\0${c.committer.name}\0${c.committer.email}\0${c.committer.time}\0${c.subject}`,
    )
    t.same(mine, expected, `skip ${skip}, count ${count}`)
  }
})

t.test('walkLog declines where git could differ', async (t) => {
  const repo = new Repo('h', gitDir)
  t.teardown(() => repo.close())
  git(['replace', tips[2] as string, tips[3] as string])
  t.equal(await walkLog(repo, main, 0, 10), undefined, 'replace refs: git answers')
  git(['replace', '-d', tips[2] as string])
  t.ok(await walkLog(repo, main, 0, 10))
})

t.test('mergeBase agrees with git merge-base', async (t) => {
  const repo = new Repo('h', gitDir)
  t.teardown(() => repo.close())
  // a branch off an old commit, a branch off a merge, a root of its own (no common history)
  const offOld = commit([tips[1] as string], 'off old\n', 1_700_000_500)
  const offMerge = commit([tips[9] as string], 'off merge\n', 1_700_000_400)
  const lone = commit([], 'lone root\n', 1_700_000_600)
  const pairs: [string, string][] = [
    [main, offOld],
    [main, offMerge],
    [offOld, offMerge],
    [main, tips[3] as string],
    [tips[3] as string, main],
    [main, main],
    [main, lone],
  ]
  for (const [a, b] of pairs) {
    let expected: string | null
    try {
      expected = git(['merge-base', a, b]).trim()
    } catch {
      expected = null
    }
    t.equal(await mergeBase(repo, a, b), expected, `${a.slice(0, 7)} ${b.slice(0, 7)}`)
  }
})
