// .ci/check-subjects, the CI habit of docs/contributing.md ("Commits"): every commit after the
// recorded starting point has a subject of at most 72 characters; older history is left alone.
import t from 'tap'
import type { Test } from 'tap'
import { execFileSync, spawnSync } from 'node:child_process'
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { GIT_IDENTITY } from '../helpers/git-identity.ts'

const SCRIPT = fileURLToPath(new URL('../../.ci/check-subjects', import.meta.url))

function repoWith(t: Test, subjects: string[]): { dir: string; commits: string[] } {
  const dir = t.testdir({})
  const git = (...args: string[]) =>
    execFileSync('git', args, { cwd: dir, encoding: 'utf8', env: { ...process.env, ...GIT_IDENTITY } }).trim()
  git('init', '-q', '-b', 'main')
  mkdirSync(join(dir, '.ci'))
  copyFileSync(SCRIPT, join(dir, '.ci', 'check-subjects'))
  const commits = subjects.map((s, i) => {
    writeFileSync(join(dir, `f${i}`), `${i}\n`)
    git('add', '.')
    git('commit', '-qm', s)
    return git('rev-parse', 'HEAD')
  })
  return { dir, commits }
}

const run = (dir: string) => spawnSync('bash', [join(dir, '.ci', 'check-subjects'), dir], { encoding: 'utf8' })
const long = `x${'y'.repeat(72)}` // 73 characters

t.test('a subject over 72 characters after the starting point fails, naming it', async (t) => {
  const { dir, commits } = repoWith(t, [long, 'start here', 'a short subject', long])
  writeFileSync(join(dir, '.ci', 'subjects-since'), `${commits[1]}\n`)
  const r = run(dir)
  t.equal(r.status, 1)
  t.match(r.stderr, new RegExp(`^check-subjects: ${commits[3]?.slice(0, 7)}\\w* has a subject of 73 characters`))
  t.equal(r.stderr.trim().split('\n').length, 1, 'the long subject before the starting point is not counted')
})

t.test('subjects of at most 72 characters pass; 72 exactly is allowed', async (t) => {
  const { dir, commits } = repoWith(t, ['start', 'y'.repeat(72), 'fine'])
  writeFileSync(join(dir, '.ci', 'subjects-since'), commits[0] as string)
  const r = run(dir)
  t.equal(r.status, 0, r.stderr)
  t.match(r.stdout, /all at most 72 characters/)
})

t.test('a starting point missing from history is an error, not a pass', async (t) => {
  const { dir } = repoWith(t, ['one'])
  writeFileSync(join(dir, '.ci', 'subjects-since'), 'f'.repeat(40))
  const r = run(dir)
  t.equal(r.status, 1)
  t.match(r.stderr, /is not in this clone's history/)
})

t.test("this repository's own history passes", async (t) => {
  const r = spawnSync('bash', [SCRIPT], { encoding: 'utf8' })
  t.equal(r.status, 0, r.stderr)
})
