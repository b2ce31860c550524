// `ag-server maintenance status|run` and serve's maintenance flags, from outside: a run by hand
// shrinks a repository with the server stopped and refuses while one holds the data directory;
// bad flags are refused with what to do, before anything changes.
import t, { type Test } from 'tap'
import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { run, serveFor } from '../helpers/ag-server-cli.ts'
import { makeSourceRepo, sh } from './helpers.ts'

/** A data directory with repository demo. */
function dataDir(t: Test): { data: string; bare: string } {
  const dir = t.testdir({})
  const src = makeSourceRepo(dir)
  const data = join(dir, 'data')
  t.equal(run('init', data).code, 0)
  t.equal(run('repo', 'add', 'demo', '--from', src, '--data', data).code, 0)
  return { data, bare: join(data, 'repos/demo.git') }
}

const looseCount = (bare: string): number => Number(/^count: (\d+)/m.exec(sh(bare, 'count-objects', '-v'))?.[1])

t.test('maintenance run --full --grace 0 packs everything and drops the unreachable', async (t) => {
  const { data, bare } = dataDir(t)
  const write = (s: string): string =>
    spawnSync('git', ['--git-dir', bare, 'hash-object', '-w', '--stdin'], { input: s, encoding: 'utf8' }).stdout.trim()
  const garbage = Array.from({ length: 30 }, (_, i) => write(`unreachable ${i}\n`))
  t.ok(looseCount(bare) >= 30)
  const st = run('maintenance', 'status', '--data', data, '--json')
  t.equal(st.code, 0, st.stderr)
  const before = JSON.parse(st.stdout) as { repo: string; counts: { loose_objects: number } }[]
  t.equal(before[0]?.repo, 'demo')
  t.ok((before[0]?.counts.loose_objects ?? 0) >= 30, 'status counts the loose objects')

  const due = run('maintenance', 'run', '--data', data)
  t.equal(due.code, 0, due.stderr)
  t.match(due.stdout, /demo: nothing due/, 'thresholds not reached: nothing done')

  const r = run('maintenance', 'run', '--data', data, '--full', '--grace', '0')
  t.equal(r.code, 0, r.stderr)
  t.match(r.stdout, /demo: .*pack_refs \+ consolidate: ok/)
  t.equal(looseCount(bare), 0, 'nothing loose')
  const left = spawnSync('git', ['--git-dir', bare, 'cat-file', '--batch-check'], {
    input: garbage.join('\n') + '\n',
    encoding: 'utf8',
  }).stdout
  t.equal(left.split('\n').filter((l) => l.endsWith(' missing')).length, 30, 'the unreachable blobs are gone')
  t.equal(sh(bare, 'fsck', '--strict', '--no-dangling'), '', 'fsck is clean')
  const human = run('maintenance', 'status', '--data', data)
  t.match(human.stdout, /^demo: [\d.]+ MB on disk; 0 loose objects, \d packs .* 1 runs, 0 failed/)
  t.match(human.stdout, /last run: .*consolidate: ok/)
})

t.test('maintenance run refuses while a server holds the data directory', async (t) => {
  const { data } = dataDir(t)
  await serveFor(t, data)
  const r = run('maintenance', 'run', '--data', data, '--full')
  t.equal(r.code, 1)
  t.match(
    r.stderr,
    /a server \(pid \d+\) holds .* and maintains its repositories itself .*stop it to run maintenance by hand/,
  )
  t.notMatch(r.stderr, /\n\s+at /, 'no stack trace')
  t.equal(run('maintenance', 'status', '--data', data).code, 0, 'status works beside a server')
})

t.test('bad flags are refused with what to do', async (t) => {
  const { data } = dataDir(t)
  // A slip in a flag is a usage error (exit 2); a data directory that is not one, exit 1.
  const cases: [string[], RegExp][] = [
    [['maintenance', 'run', '--data', data, '--repo', 'nope'], /--repo: no repository nope in .* \(it has demo\)/],
    [['maintenance', 'status', '--data', data, '--repo', 'nope'], /--repo: no repository nope/],
    [
      ['maintenance', 'run', '--data', data, '--grace', 'soon'],
      /--grace: 'soon' is not a duration \(e\.g\. 30s, 10m, 1h, 2d\)/,
    ],
    [['maintenance', 'run', '--data', join(data, 'x')], /is not an ag-server data directory/],
    [
      ['serve', '--data', data, '--maintenance-grace', '5s'],
      /--maintenance-grace: 5s is too short for a serving server \(at least 10s/,
    ],
    [
      ['serve', '--data', data, '--maintenance-max-packs', '1'],
      /--maintenance-max-packs: '1' is not a whole number >= 2/,
    ],
    [['serve', '--data', data, '--maintenance-interval', 'often'], /--maintenance-interval: 'often' is not a duration/],
  ]
  for (const [args, re] of cases) {
    const r = run(...args)
    t.equal(r.code, /not an ag-server data directory/.test(re.source) ? 1 : 2, args.join(' '))
    t.match(r.stderr, re, args.join(' '))
    t.notMatch(r.stderr, /\n\s+at /, 'no stack trace')
  }
  t.equal(run('maintenance', 'run', '--data', data).code, 0, 'and the data directory was left usable')
})
