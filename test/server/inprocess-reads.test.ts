import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { execFileSync } from 'node:child_process'
import { GIT_ENV, tmpdir } from './helpers.ts'
import { Repo } from '../../server/src/repos.ts'
import { packedParses } from '../../server/src/refs.ts'
import { isAncestor, walkPathLog } from '../../server/src/history.ts'
import { commitDetail, diff } from '../../server/src/gitread.ts'
import { search } from '../../server/src/search.ts'
import { dirParts } from '../../server/src/corpus.ts'

// Reads answered in process must answer what git answers: `git log -- <path>` (history
// simplification through merges), `git grep -n -I -F` (order, binary skipping, line
// numbers, pathspecs), `merge-base --is-ancestor`, `for-each-ref refs/heads/` and
// `log -1` of a commit. Each is compared with git itself on a repository built to have
// the awkward cases.

const root = tmpdir('inproc')
t.teardown(() => fs.rmSync(root, { recursive: true, force: true }))
const gitDir = path.join(root, 'r.git')
const git = (args: string[], input?: string | Buffer, env: Record<string, string> = {}): string =>
  execFileSync('git', ['--git-dir', gitDir, ...args], {
    env: { ...GIT_ENV, GIT_LITERAL_PATHSPECS: '1', ...env },
    encoding: 'utf8',
    input,
    maxBuffer: 64 * 1024 * 1024,
  })
git(['init', '-q', '--bare', '-b', 'main'])

const blob = (content: string | Buffer): string => git(['hash-object', '-w', '--stdin'], content).trim()
type Files = Record<string, { mode: string; oid: string }>
/** Write a tree from flat paths (nested directories made on the way). */
function tree(files: Files): string {
  const dirs = new Map<string, Files>()
  const here: string[] = []
  for (const [p, e] of Object.entries(files)) {
    const slash = p.indexOf('/')
    if (slash < 0) here.push(`${e.mode} ${e.mode === '160000' ? 'commit' : 'blob'} ${e.oid}\t${p}`)
    else {
      const d = p.slice(0, slash)
      const sub = dirs.get(d) ?? {}
      sub[p.slice(slash + 1)] = e
      dirs.set(d, sub)
    }
  }
  for (const [d, sub] of dirs) here.push(`040000 tree ${tree(sub)}\t${d}`)
  return git(['mktree'], here.join('\n') + '\n').trim()
}
let clock = 1_700_000_000
const commit = (files: Files, parents: string[], msg: string, at?: number): string => {
  if (at === undefined) clock += 60
  const time = at ?? clock
  return git(['commit-tree', tree(files), ...parents.flatMap((p) => ['-p', p])], msg, {
    GIT_AUTHOR_DATE: `${time} +0100`,
    GIT_COMMITTER_DATE: `${time} +0100`,
  }).trim()
}
const f = (content: string | Buffer, mode = '100644'): { mode: string; oid: string } => ({ mode, oid: blob(content) })

// A history: a/x edited on main and on a side branch merged back (one merge brings a
// change, one is TREESAME to its first parent, one to its second), a file that becomes
// a directory, an executable bit flip, a delete and re-add, equal commit dates.
let state: Files = { 'a/x': f('1\n'), 'b.txt': f('b\n'), top: f('top\n') }
let main = commit(state, [], 'root\n')
const history: string[] = [main]
const step = (change: Files, msg: string, drop: string[] = [], time?: number): string => {
  state = { ...state, ...change }
  for (const d of drop) delete state[d]
  main = commit(state, [main], msg, time)
  history.push(main)
  return main
}
step({ 'a/x': f('2\n') }, 'edit a/x')
step({ 'b.txt': f('b2\n') }, 'edit b')
const fork = main
const forkState = { ...state }
step({ 'a/y': f('y\n') }, 'add a/y')
const side1 = commit({ ...forkState, 'a/x': f('side\n') }, [fork], 'side edits a/x')
main = commit({ ...state, 'a/x': f('side\n') }, [main, side1], 'merge side (brings a/x)')
state = { ...state, 'a/x': f('side\n') }
const side2 = commit({ ...state, 'c.txt': f('c\n') }, [main], 'side adds c')
step({ 'b.txt': f('b3\n') }, 'edit b again')
main = commit({ ...state, 'c.txt': f('c\n') }, [main, side2], 'merge side2')
state = { ...state, 'c.txt': f('c\n') }
const side3 = commit({ ...state, 'b.txt': f('b4\n') }, [main], 'side3 edits b')
main = commit({ ...state, 'b.txt': f('b4\n') }, [side3, main], 'merge with side3 first')
state = { ...state, 'b.txt': f('b4\n') }
step({ top: f('top\n', '100755') }, 'chmod top')
step({ 'top/inner': f('now a dir\n') }, 'top becomes a directory', ['top'])
step({}, 'delete b', ['b.txt'])
step({ 'b.txt': f('b again\n') }, 'b is back', [], clock) // same date as its parent
step({ 'a/x': f('3\n') }, 'edit a/x', [], clock)

// Content for search: binary (NUL early, NUL late), no final newline, CRLF, a symlink
// and a submodule that grep skips, non-ASCII, an executable, matches on many lines.
const late = Buffer.concat([Buffer.from('needle early\n'), Buffer.alloc(9000, 0x61), Buffer.from('\0needle late\n')])
const grepState: Files = {
  ...state,
  'bin/early.bin': f(Buffer.from('needle\0here\n')),
  'bin/late.dat': f(late),
  'docs/notes.md': f('one needle\ntwo\nneedle needle three\n\nlast needle'),
  'docs/crlf.txt': f('needle\r\nplain\r\nneedle\r\n'),
  'docs/ünï.txt': f('ünïcode needle ✓\n'),
  link: f('needle-target', '120000'),
  sub: { mode: '160000', oid: main },
  'tools/run.sh': f('#!/bin/sh\necho needle\n', '100755'),
  'z/deep/er/file.txt': f(`${'x\n'.repeat(50)}needle at 51\n`),
}
const grepCommit = commit(grepState, [main], 'search fixture')

t.test('log with a path lists what git log -- <path> lists', async (t) => {
  const repo = new Repo('r', gitDir)
  t.teardown(() => repo.close())
  const fmt = '%H %P%x00%s'
  for (const p of ['a/x', 'a', 'b.txt', 'c.txt', 'top', 'top/inner', 'missing', 'a/y'])
    for (const [skip, count] of [
      [0, 100],
      [1, 2],
    ] as const) {
      const out = git(['log', `--format=${fmt}`, `-n${count}`, `--skip=${skip}`, main, '--', p]).trim()
      const expected = out === '' ? [] : out.split('\n')
      const got = ((await walkPathLog(repo, main, p, skip, count)) ?? []).map(
        (c) => `${c.id} ${c.parents.join(' ')}\0${c.subject}`,
      )
      t.same(got, expected, `${p} skip ${skip} count ${count}`)
    }
})

t.test('isAncestor agrees with merge-base --is-ancestor', async (t) => {
  const repo = new Repo('r', gitDir)
  t.teardown(() => repo.close())
  const lone = commit({ only: f('lone\n') }, [], 'unrelated root\n')
  const ids = [...history.filter((_, i) => i % 2 === 0), side1, side2, side3, main, lone]
  for (const a of ids)
    for (const d of ids) {
      let expected: boolean
      try {
        git(['merge-base', '--is-ancestor', a, d])
        expected = true
      } catch {
        expected = false
      }
      t.equal(await isAncestor(repo, a, d), expected, `${a.slice(0, 7)} ${d.slice(0, 7)}`)
    }
})

t.test('search finds what git grep -n -I -F finds', async (t) => {
  const repo = new Repo('r', gitDir)
  t.teardown(() => repo.close())
  const grep = (q: string, paths: string[]): { path: string; line: number; text: string }[] => {
    let out = ''
    try {
      out = git(['grep', '-n', '-I', '-F', '-z', '-e', q, grepCommit, ...(paths.length ? ['--', ...paths] : [])])
    } catch {
      return [] // exit 1: no match
    }
    return out
      .split('\n')
      .filter(Boolean)
      .map((l) => {
        const [loc = '', ln = '', ...rest] = l.split('\0')
        const text = rest.join('\0')
        return { path: loc.slice(grepCommit.length + 1), line: Number(ln), text: text.slice(0, 1000) }
      })
  }
  for (const [q, paths] of [
    ['needle', []],
    ['needle', ['docs']],
    ['needle', ['docs', 'docs/notes.md', 'z']],
    ['needle', ['bin']],
    ['needle', ['link', 'sub', 'tools/run.sh']],
    ['needle', ['do']],
    ['✓', []],
    ['e', ['a', 'b.txt']],
    ['no such text', []],
    ['\r', []],
  ] as [string, string[]][]) {
    const expected = grep(q, paths)
    const got = await search(repo, grepCommit, q, paths, 1000)
    t.same(got, { matches: expected, truncated: false }, `${JSON.stringify(q)} ${paths.join(',')}`)
  }
  const all = grep('needle', [])
  t.ok(all.length > 8)
  const capped = await search(repo, grepCommit, 'needle', [], 4)
  t.same(capped, { matches: all.slice(0, 4), truncated: true }, 'the limit cuts in git order and says so')
})

t.test('search over more files than it reads ahead, some cached and some not, agrees with git grep', async (t) => {
  const repo = new Repo('r', gitDir)
  t.teardown(() => repo.close())
  // 100 files (the look-ahead is 32), one process to write them: some match once, some
  // twice, some are binary, the rest do not match.
  const dir = path.join(root, 'many')
  fs.mkdirSync(dir)
  const names = Array.from({ length: 100 }, (_, i) => `f${String(i).padStart(3, '0')}.txt`)
  names.forEach((n, i) => {
    const body =
      i % 7 === 0
        ? 'bin\0needle\n'
        : i % 3 === 0
          ? `needle ${i}\nx\nneedle again\n`
          : i % 2
            ? `needle ${i}\n`
            : 'none\n'
    fs.writeFileSync(path.join(dir, n), body)
  })
  const oids = git(['hash-object', '-w', '--stdin-paths'], names.map((n) => path.join(dir, n)).join('\n'))
    .trim()
    .split('\n')
  const files: Files = {}
  names.forEach((n, i) => {
    files[`many/${n}`] = { mode: '100644', oid: oids[i] as string }
  })
  // Between them: files too large to copy into a directory's run (text and binary), an
  // empty one, one without a final newline, and a subdirectory (git orders it as
  // "f050.d/", before f050.txt).
  const large = `${'filler line\n'.repeat(25_000)}needle in a large file\n${'more\n'.repeat(10)}needle last`
  Object.assign(files, {
    'many/f010.large': f(large),
    'many/f020.large': f(Buffer.concat([Buffer.from('needle\0'), Buffer.alloc(300_000, 0x61)])),
    'many/f030.empty': f(''),
    'many/f040.nonl': f('needle without a newline'),
    'many/f050.d/inner.txt': f('inner needle\n'),
  })
  // A directory with more text than one directory's runs may hold (2 MiB: searched file
  // by file), a subdirectory inside it, and a small directory after it.
  const heavy = Array.from({ length: 20 }, (_, i) => {
    const p = path.join(dir, `heavy${i}`)
    fs.writeFileSync(p, `${'heavy filler\n'.repeat(18_000 + i)}needle heavy ${i}\n`)
    return p
  })
  git(['hash-object', '-w', '--stdin-paths'], heavy.join('\n'))
    .trim()
    .split('\n')
    .forEach((oid, i) => {
      files[`many/heavy/h${String(i).padStart(2, '0')}.txt`] = { mode: '100644', oid }
    })
  Object.assign(files, { 'many/heavy/h05.d/x.txt': f('needle inside heavy\n'), 'many/z/last.txt': f('needle z\n') })
  const c = commit(files, [], 'many files')
  const grep = (at = c): { path: string; line: number; text: string }[] =>
    git(['grep', '-n', '-I', '-F', '-z', '-e', 'needle', at])
      .split('\n')
      .filter(Boolean)
      .map((l) => {
        const [loc = '', ln = '', text = ''] = l.split('\0')
        return { path: loc.slice(at.length + 1), line: Number(ln), text }
      })
  // Every fifth file read into the cache first, so the scan meets both kinds out of order.
  await search(
    repo,
    c,
    'needle',
    names.filter((_, i) => i % 5 === 0).map((n) => `many/${n}`),
    1000,
  )
  const expected = grep()
  t.ok(expected.length > 60, `${expected.length} matches`)
  t.same(await search(repo, c, 'needle', [], 1000), { matches: expected, truncated: false }, 'partly cached')
  t.same(await search(repo, c, 'needle', [], 1000), { matches: expected, truncated: false }, 'all cached')
  t.same(await search(repo, c, 'needle', [], 50), { matches: expected.slice(0, 50), truncated: true }, 'cut at 50')
  t.ok(
    expected.some((m) => m.path === 'many/f010.large') && expected.some((m) => m.path === 'many/f050.d/inner.txt'),
    'the fixture has matches in a large file and in a subdirectory',
  )
  t.ok(
    expected.some((m) => m.path === 'many/heavy/h05.d/x.txt') && expected.some((m) => m.path === 'many/z/last.txt'),
    'and inside and after a directory searched file by file',
  )
  // New roots reuse the file lists of the subtrees they share (one walked already, one
  // changed, one new), and must still answer what git answers for each.
  const c2 = commit({ ...files, 'a/new.txt': f('needle new\n') }, [c], 'a new directory')
  const c3 = commit({ ...files, 'many/f001.txt': f('changed\nneedle changed\n') }, [c], 'a changed file')
  const [x, y] = await Promise.all([search(repo, c2, 'needle', [], 1000), search(repo, c2, 'needle', [], 7)])
  t.same(
    [x, y],
    [
      { matches: grep(c2), truncated: false },
      { matches: grep(c2).slice(0, 7), truncated: true },
    ],
    'at once',
  )
  // Each run of text in a buffer of its own size: a slice of Node's 8 KiB pool would keep
  // the whole slab alive for as long as the directory stays cached.
  const small = (await repo.treeItems(await repo.commitTree(c2))).get('a')?.oid as string
  const runs = ((await dirParts(repo, small, 'a')) ?? []).filter((p) => p.kind === 'run')
  t.same(
    runs.map((r) => [r.paths, r.bytes.toString(), r.bytes.buffer.byteLength]),
    [[['a/new.txt'], 'needle new\n', 11]],
    'a small run owns its buffer',
  )
  for (const [at, what] of [
    [c2, 'a directory added beside a walked one'],
    [c3, 'a file changed in a walked directory'],
    [c, 'the first root again'],
  ] as const)
    t.same(await search(repo, at, 'needle', [], 1000), { matches: grep(at), truncated: false }, what)
  t.same(
    await search(repo, c3, 'needle', ['many/f001.txt', 'many/f003.txt'], 1000),
    { matches: grep(c3).filter((m) => ['many/f001.txt', 'many/f003.txt'].includes(m.path)), truncated: false },
    'pathspecs inside a walked directory',
  )
  // A pathspec naming a whole directory walks it file by file through the subtree lists.
  for (const at of [c, c3])
    t.same(
      await search(repo, at, 'needle', ['many'], 1000),
      { matches: grep(at).filter((m) => m.path.startsWith('many/')), truncated: false },
      'a directory as the pathspec, before and after one of its files changed',
    )
})

t.test('search walks a directory of 140,000 files (no spread of its list into an argument list)', async (t) => {
  const repo = new Repo('r', gitDir)
  t.teardown(() => repo.close())
  // One blob under 140,000 names (a spread call overflows the stack from about 130,000).
  const x = blob('x\n')
  const names = Array.from({ length: 140_000 }, (_, i) => `f${String(i).padStart(6, '0')}`)
  const big = git(['mktree'], names.map((n) => `100644 blob ${x}\t${n}`).join('\n') + '\n').trim()
  const top = tree({ 'z.txt': f('needle after\n') })
  const root = git(['mktree'], `040000 tree ${big}\tbig\n` + git(['ls-tree', top])).trim()
  const c = git(['commit-tree', root], 'a large directory').trim()
  const after = { matches: [{ path: 'z.txt', line: 1, text: 'needle after' }], truncated: false }
  t.same(await search(repo, c, 'needle', [], 10), after, 'the whole tree')
  t.same(await search(repo, c, 'needle', ['big', 'z.txt'], 10), after, 'walked with pathspecs')
})

t.test('commit detail and branches read in process agree with git', async (t) => {
  const repo = new Repo('r', gitDir)
  t.teardown(() => repo.close())
  git(['update-ref', 'refs/heads/main', main])
  git(['update-ref', 'refs/heads/feature/deep/one', side1])
  git(['update-ref', 'refs/heads/packed', side2])
  git(['pack-refs', '--all'])
  git(['update-ref', 'refs/heads/packed', side3]) // loose over packed
  git(['update-ref', 'refs/heads/Zed', fork])
  const expected = git(['for-each-ref', '--format=%(objectname) %(refname:strip=2)', 'refs/heads/'])
    .split('\n')
    .filter(Boolean)
    .map((l) => ({ commit: l.slice(0, 40), name: l.slice(41) }))
  t.same(await repo.branches(), expected)
  t.equal(expected.length, 4)

  const odd = commit(state, [main], '\n\n  Subject  line  \ncontinues\n\nbody\twith tab\n\n\n')
  // Fields read out of the commit's bytes (history.ts parseCommit): non-ASCII idents, two
  // parents, a subject that is the whole message.
  const named = git(['commit-tree', tree(state), '-p', main, '-p', side1], 'Ünïcode sübject ✓', {
    GIT_AUTHOR_NAME: 'Zoë Ünïcode',
    GIT_AUTHOR_EMAIL: 'zoë@exämple.org',
    GIT_AUTHOR_DATE: '1700000123 +0530',
    GIT_COMMITTER_NAME: 'Ω',
    GIT_COMMITTER_EMAIL: 'omega@example.org',
    GIT_COMMITTER_DATE: '1700000456 -0800',
  }).trim()
  for (const id of [main, history[0] as string, side1, odd, named]) {
    const d = await commitDetail(repo, id)
    const [h, p, an, ae, at, cn, ce, ct, s, b] = git([
      'log',
      '-1',
      '--format=%H%x00%P%x00%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%s%x00%B',
      id,
    ]).split('\0')
    const iso = (x = ''): string => new Date(x).toISOString()
    t.same(
      { ...d, files: undefined },
      {
        id: h,
        parents: (p ?? '').split(' ').filter(Boolean),
        author: { name: an, email: ae, date: iso(at) },
        committer: { name: cn, email: ce, date: iso(ct) },
        subject: s,
        message: (b ?? '').replace(/\n+$/, ''),
        files: undefined,
      },
      id.slice(0, 7),
    )
    const raw = git([
      'diff-tree',
      '-r',
      '-M',
      '--name-status',
      d.parents[0] ?? '4b825dc642cb6eb9a060e54bf8d69288fbee4904',
      id,
    ])
    t.equal(d.files.length, raw.split('\n').filter(Boolean).length, `${id.slice(0, 7)} files`)
  }
})

t.test('diffs through the long-lived diff-tree are what one-shot git diff-tree prints', async (t) => {
  const repo = new Repo('r', gitDir)
  t.teardown(() => repo.close())
  // a rename with an edit, an exact rename, a deletion, a binary change
  const body = Array.from({ length: 40 }, (_, i) => `line ${i} of a file that moves\n`).join('')
  const before = commit(
    { ...grepState, 'old/name.txt': f(body), 'same.txt': f('same\n') },
    [grepCommit],
    'before moves',
  )
  const after = commit(
    {
      ...grepState,
      'new/name.txt': f(body.replace('line 7 ', 'line seven ')),
      'moved.txt': f('same\n'),
      'bin/early.bin': f(Buffer.from('changed\0binary\n')),
    },
    [before],
    'moves',
  )
  const oneShot = (args: string[], b: string, h: string, paths: string[]): string =>
    git(['-c', 'core.quotepath=false', 'diff-tree', ...args, b, h, ...(paths.length ? ['--', ...paths] : [])])
  for (const [b, h, paths] of [
    [before, after, []],
    [main, grepCommit, []],
    [history[0], main, ['a', 'top']],
    [before, after, ['new', 'old']],
    [before, after, ['new']],
  ] as [string, string, string[]][]) {
    const got = await diff(repo, b, h, paths, 1 << 20)
    const name = `${b.slice(0, 7)}..${h.slice(0, 7)} ${paths.join(',')}`
    const patch = oneShot(['-r', '-M', '-p', '--no-color', '--no-ext-diff'], b, h, paths)
    const chunks = patch.split(/^(?=diff --git )/m).filter((c) => c.startsWith('diff --git '))
    t.same(
      got.files.map((x) => (x.binary ? '' : x.patch)),
      chunks.map((c) => (c.includes('\nBinary files ') ? '' : c)),
      `${name}: patch text`,
    )
    const numstat = oneShot(['-r', '-M', '--numstat'], b, h, paths).trim().split('\n').filter(Boolean)
    t.same(
      got.files.map((x) => `${x.binary ? '-' : x.additions}\t${x.binary ? '-' : x.deletions}`),
      numstat.map((l) => l.split('\t').slice(0, 2).join('\t')),
      `${name}: line counts`,
    )
    t.equal(got.truncated, false)
  }
  const renamed = (await diff(repo, before, after, [], 1 << 20)).files.filter((x) => x.status === 'renamed')
  t.same(renamed.map((x) => [x.old_path, x.path]).sort(), [
    ['old/name.txt', 'new/name.txt'],
    ['same.txt', 'moved.txt'],
  ])
  const small = await diff(repo, main, grepCommit, [], 300)
  t.equal(small.truncated, true, 'over the byte budget: truncated, as before')
  t.ok(small.files.every((x) => x.patch.length <= 300))
  // the process is still usable after a budget cut it short
  t.same(await diff(repo, before, after, [], 1 << 20), await diff(repo, before, after, [], 1 << 20))
})

t.test('packed refs are parsed once per version of packed-refs, and never go stale', async (t) => {
  const repo = new Repo('r', gitDir)
  t.teardown(() => repo.close())
  // after git gc every branch and proposal ref is packed: thousands of lines
  const lines = Array.from({ length: 3000 }, (_, i) => `update refs/proposals/pr-${i} ${side1}\n`).join('')
  git(['update-ref', '--stdin'], lines)
  git(['update-ref', 'refs/heads/main', main])
  git(['pack-refs', '--all', '--prune'])
  t.equal(await repo.branchHead('main'), main)
  const before = packedParses.count
  for (let i = 0; i < 50; i++) t.equal(await repo.resolve('main'), main)
  t.equal(await repo.refValue('refs/proposals/pr-2999'), side1)
  t.equal(packedParses.count - before, 0, 'unchanged packed-refs: not read again')
  // a ref packed, then moved (loose over packed), then deleted (git rewrites packed-refs)
  git(['update-ref', 'refs/heads/main', side3])
  t.equal(await repo.branchHead('main'), side3)
  git(['pack-refs', '--all', '--prune'])
  t.equal(await repo.branchHead('main'), side3, 'after a repack')
  git(['update-ref', '-d', 'refs/proposals/pr-7'])
  t.equal(await repo.refValue('refs/proposals/pr-7'), null, 'deleted from packed-refs')
  t.ok(packedParses.count - before >= 2, 'each new packed-refs is parsed')
  git(['update-ref', 'refs/heads/main', main])
})

t.test('cat-file answers large objects whole, pipelined with small ones', async (t) => {
  const repo = new Repo('r', gitDir)
  t.teardown(() => repo.close())
  // many pipe reads per object: each must be joined once, in order, with the next answers
  const big = Buffer.alloc(6 * 1024 * 1024 + 7)
  for (let i = 0; i < big.length; i++) big[i] = (i * 31 + (i >> 12)) & 0xff
  const bigId = blob(big)
  const small = ['a\n', 'b\n', 'c\n'].map((x) => ({ id: blob(x), x }))
  const data = (o: { data: Buffer } | null | undefined): Buffer => o?.data ?? Buffer.alloc(0)
  const [b1, info, smalls, b2, missing] = await Promise.all([
    repo.cat.get(bigId),
    repo.cat.info(bigId),
    Promise.all(small.map((s) => repo.cat.get(s.id))),
    repo.cat.get(bigId),
    repo.cat.get('0'.repeat(40)),
  ])
  t.ok(data(b1).equals(big), 'the large blob, whole')
  t.equal(info?.size, big.length)
  t.same(
    smalls.map((o) => data(o).toString()),
    small.map((s) => s.x),
  )
  t.ok(data(b2).equals(big), 'and again after the small ones')
  // A small object is not a piece of Node's shared buffer pool: the object cache, which
  // counts objects by size, would otherwise keep whole 8 KiB slabs alive behind them.
  for (const o of smalls) t.equal(data(o).buffer.byteLength, data(o).length, 'a small object owns exactly its bytes')
  t.equal(missing, null)
})

t.test('the bounded caches count what they hold under concurrent misses', async (t) => {
  const repo = new Repo('r', gitDir)
  t.teardown(() => repo.close())
  // 16 clients asking for the same new tree or blob at once (right after an integration)
  const root = await repo.commitTree(grepCommit)
  const blobs = [...(await repo.treeItems(root)).values()].filter((it) => it.mode === '100644').map((it) => it.oid)
  for (let round = 0; round < 3; round++)
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        for (const c of history) await repo.entryAt(c, 'a/x')
        await Promise.all(blobs.map((b) => repo.object(b)))
      }),
    )
  const s = repo.cacheStats()
  t.ok(s.trees > 0 && s.objects > 0)
  t.equal(s.treeEntries, s.trees, 'tree entries counted once each')
  t.equal(s.objectBytes, s.objects, 'object bytes counted once each')
})
