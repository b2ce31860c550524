import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { execFileSync } from 'node:child_process'
import fc from 'fast-check'
import { GIT_ENV, makeSourceRepo, sh, tmpdir, workspaceRecord } from './helpers.ts'
import { Repo } from '../../server/src/repos.ts'
import { buildTree } from '../../server/src/wstree.ts'
import { cleanIdent, formatCommit, hashObject, writeObject } from '../../server/src/objects.ts'
import { Store } from '../../server/src/store.ts'
import { mintToken, hashToken } from '../../server/src/auth.ts'
import type { OverlayEntry, WorkspaceRec } from '../../server/src/types.ts'

// Objects written in-process must be exactly what git would write: checked against git
// itself (hash-object, read-tree + update-index + write-tree, commit-tree) as the oracle.

const root = tmpdir('objects')
t.teardown(() => fs.rmSync(root, { recursive: true, force: true }))
const src = makeSourceRepo(root, 2)
// Names that exercise git's tree order (a, a-b, a.b, a/ sorts as 'a/'), modes and UTF-8.
for (const f of ['a-b', 'a.b', 'a/x', 'a/y/z', 'ab', 'é.txt', 'sub/deep/er/leaf']) {
  fs.mkdirSync(path.join(src, path.dirname(f)), { recursive: true })
  fs.writeFileSync(path.join(src, f), `${f}\n`)
}
fs.writeFileSync(path.join(src, 'run.sh'), 'echo\n', { mode: 0o755 })
fs.symlinkSync('README.md', path.join(src, 'link'))
sh(src, 'add', '.')
sh(src, 'commit', '-q', '-m', 'names')
const gitDir = path.join(src, '.git')
const repo = new Repo('src', gitDir)
t.teardown(() => repo.close())
const base = sh(src, 'rev-parse', 'HEAD').trim()
const git = (args: string[], input?: string | Buffer, env: Record<string, string> = {}): string =>
  execFileSync('git', ['--git-dir', gitDir, ...args], { env: { ...GIT_ENV, ...env }, input, encoding: 'utf8' })

t.test('blobs: same id as git hash-object, readable by git', async (t) => {
  for (const data of [Buffer.alloc(0), Buffer.from('hello\n'), Buffer.from([0, 1, 2, 255]), Buffer.alloc(300_000, 7)]) {
    const oid = await writeObject(gitDir, 'blob', data)
    t.equal(oid, git(['hash-object', '--stdin'], data).trim())
    t.equal(hashObject('blob', data), oid)
    t.equal(execFileSync('git', ['--git-dir', gitDir, 'cat-file', 'blob', oid]).compare(data), 0)
  }
  // writing an existing object is a no-op
  const again = await writeObject(gitDir, 'blob', Buffer.from('hello\n'))
  t.equal(again, hashObject('blob', Buffer.from('hello\n')))
})

t.test('writing an object the repository has stores it again, so pruning by age keeps it', async (t) => {
  const body = Buffer.from('an object an old discarded workspace also had\n')
  const packsHolding = (): string[] =>
    fs
      .readdirSync(path.join(gitDir, 'objects/pack'))
      .filter((f) => f.endsWith('.idx'))
      .filter((f) => git(['show-index'], fs.readFileSync(path.join(gitDir, 'objects/pack', f))).includes(oid))
  const oid = await writeObject(gitDir, 'blob', body)
  const [first] = packsHolding()
  t.ok(first, 'written into a pack')
  const old = new Date(Date.now() - 30 * 24 * 3600 * 1000) // older than gc.pruneExpire (2 weeks)
  fs.utimesSync(path.join(gitDir, 'objects/pack', (first as string).replace(/\.idx$/, '.pack')), old, old)
  t.equal(await writeObject(gitDir, 'blob', body), oid)
  t.equal(packsHolding().length, 2, 'again, into a new pack: the same bytes under another name')
  // what a cron `git gc` does to unreachable objects past the expiry: it stays
  git(['repack', '--cruft', '--cruft-expiration=2.weeks.ago', '-d', '-q'])
  t.equal(execFileSync('git', ['--git-dir', gitDir, 'cat-file', 'blob', oid]).compare(body), 0, 'kept')
  t.equal(git(['fsck', '--strict', '--no-dangling']), '')
})

const baseFiles = new Map<string, string>(
  sh(src, 'ls-tree', '-r', '-z', 'HEAD')
    .split('\0')
    .filter(Boolean)
    .map((l) => [l.slice(l.indexOf('\t') + 1), l.split(' ')[0] as string]),
)

/** The git oracle: the tree the old implementation built with a temporary index. */
function oracleTree(changes: Record<string, OverlayEntry | null>): string {
  const index = path.join(root, `index-${Math.random().toString(36).slice(2)}`)
  const env = { GIT_INDEX_FILE: index }
  try {
    git(['read-tree', base], undefined, env)
    const lines = Object.entries(changes).map(([p, e]) =>
      e ? `${e.mode} ${e.blob}\t${p}\0` : `0 ${'0'.repeat(40)}\t${p}\0`,
    )
    if (lines.length) git(['update-index', '-z', '--index-info'], lines.join(''), env)
    return git(['write-tree'], undefined, env).trim()
  } finally {
    fs.rmSync(index, { force: true })
  }
}

// A workspace-like sequence of writes and deletes, kept valid the way the server keeps it
// (no file under a file, no file over a directory).
const candidates = [
  ...baseFiles.keys(),
  'a',
  'a/new',
  'a.b/c',
  'a0',
  'b/c/d/e',
  'lib/deep/x',
  'lib',
  'new.txt',
  'sub/deep/er',
  'sub/z',
  '__proto__',
  'é/ü',
]
const opArb = fc.array(
  fc.tuple(fc.boolean(), fc.constantFrom(...candidates), fc.constantFrom('100644', '100755', '120000'), fc.nat(3)),
  { minLength: 1, maxLength: 25 },
)

t.test('trees: in-process build equals read-tree + update-index + write-tree', async (t) => {
  const blobs = await Promise.all([0, 1, 2, 3].map((i) => writeObject(gitDir, 'blob', Buffer.from(`content ${i}\n`))))
  let runs = 0
  await fc.assert(
    fc.asyncProperty(opArb, async (ops) => {
      const live = new Map(baseFiles)
      const changes: Record<string, OverlayEntry | null> = {}
      for (const [write, p, mode, b] of ops) {
        if (write) {
          const blocked = [...live.keys()].some((f) => p.startsWith(f + '/') || f.startsWith(p + '/'))
          if (blocked) continue
          live.set(p, mode)
          Object.defineProperty(changes, p, {
            value: { blob: blobs[b] as string, mode, size: 10 },
            enumerable: true,
            writable: true,
            configurable: true,
          })
        } else if (live.has(p)) {
          live.delete(p)
          if (baseFiles.has(p))
            Object.defineProperty(changes, p, { value: null, enumerable: true, writable: true, configurable: true })
          else delete changes[p]
        }
      }
      runs++
      const ws = {
        id: `ws-${runs}`,
        repo: 'src',
        base,
        base_ref: 'main',
        owner: 'agent:t',
        state: 'open',
        changes,
        proposals: [],
        created_at: '',
        updated_at: '',
      } as WorkspaceRec
      const mine = (await buildTree(repo, ws)).tree
      const theirs = oracleTree(changes)
      if (mine !== theirs) throw new Error(`tree mismatch for ${JSON.stringify(changes)}: ${mine} != ${theirs}`)
    }),
    { numRuns: 60, seed: 20240601 },
  )
  t.equal(runs, 60)
  t.equal(sh(src, 'fsck', '--no-progress', '--no-dangling').trim(), '', 'every object written is valid')
  // deleting everything leaves the empty tree, which is written as a real object
  const all: Record<string, null> = Object.fromEntries([...baseFiles.keys()].map((p) => [p, null]))
  const empty = await buildTree(repo, {
    id: 'ws-e',
    repo: 'src',
    base,
    base_ref: 'main',
    owner: 'agent:t',
    state: 'open',
    changes: all,
    proposals: [],
    created_at: '',
    updated_at: '',
  })
  t.equal(empty.tree, '4b825dc642cb6eb9a060e54bf8d69288fbee4904')
  t.equal(git(['cat-file', '-t', empty.tree]).trim(), 'tree')
})

t.test('commits: in-process equals git commit-tree', async (t) => {
  const tree = sh(src, 'rev-parse', 'HEAD^{tree}').trim()
  const date = '1700000000 +0000'
  for (const [name, email, message] of [
    ['agent:alice#run-7', 'alice@agent.agwp.invalid', 'Title\n\nBody\n\nAGWP-Proposal: pr-1\n'],
    ['human:bob.', 'bob@human.agwp.invalid', 'no trailing newline'],
    [' "odd<name>", ', '<e@x>', 'ünïcode\n'],
  ] as const) {
    const env = {
      GIT_AUTHOR_NAME: name,
      GIT_AUTHOR_EMAIL: email,
      GIT_COMMITTER_NAME: name,
      GIT_COMMITTER_EMAIL: email,
      GIT_AUTHOR_DATE: date,
      GIT_COMMITTER_DATE: date,
    }
    const theirs = git(['commit-tree', tree, '-p', base], message, env).trim()
    const body = formatCommit({
      tree,
      parents: [base],
      author: { name, email },
      committer: { name, email },
      message,
      date,
    })
    t.equal(hashObject('commit', body), theirs, `commit by ${JSON.stringify(name)}`)
  }
  t.equal(cleanIdent('..agent:x#run-1;; '), 'agent:x#run-1')
  const rootCommit = formatCommit({
    tree,
    parents: [],
    author: { name: 'a', email: 'b' },
    committer: { name: 'a', email: 'b' },
    message: 'root\n',
    date,
  })
  t.equal(
    hashObject('commit', rootCommit),
    git(['commit-tree', tree], 'root\n', {
      GIT_AUTHOR_NAME: 'a',
      GIT_AUTHOR_EMAIL: 'b',
      GIT_COMMITTER_NAME: 'a',
      GIT_COMMITTER_EMAIL: 'b',
      GIT_AUTHOR_DATE: date,
      GIT_COMMITTER_DATE: date,
    }).trim(),
  )
})

t.test('store: field ops replay, never mutate handed-out records, keep __proto__ a plain key', async (t) => {
  const dir = path.join(root, 'state')
  const s1 = Store.open(dir)
  const ws = workspaceRecord('ws-1', 'r', { created_at: 'c', updated_at: 'u0' })
  s1.commit([{ c: 'workspaces', k: 'ws-1', v: ws }])
  const held = s1.get('workspaces', 'ws-1')
  s1.commit([
    { c: 'workspaces', k: 'ws-1', at: ['changes', 'a.txt'], v: { blob: 'b1', mode: '100644', size: 1 } },
    { c: 'workspaces', k: 'ws-1', at: ['changes', '__proto__'], v: { blob: 'b2', mode: '100755', size: 2 } },
    { c: 'workspaces', k: 'ws-1', at: ['changes', 'gone'], v: null },
    { c: 'workspaces', k: 'ws-1', at: ['updated_at'], v: 'u1' },
    { c: 'workspaces', k: 'missing', at: ['changes', 'x'], v: null },
  ])
  s1.commit([{ c: 'workspaces', k: 'ws-1', at: ['changes', 'a.txt'] }])
  t.same(held?.changes, {}, 'a record read earlier is not changed under its holder')
  const check = (s: Store, label: string): void => {
    const w = s.get('workspaces', 'ws-1') as WorkspaceRec
    t.same(Object.keys(w.changes).sort(), ['__proto__', 'gone'], label)
    t.equal(Object.getPrototypeOf(w.changes), Object.prototype, `${label}: prototype untouched`)
    t.same(Object.getOwnPropertyDescriptor(w.changes, '__proto__')?.value, { blob: 'b2', mode: '100755', size: 2 })
    t.equal(w.updated_at, 'u1')
    t.equal(s.get('workspaces', 'missing'), undefined, `${label}: a field op never creates a record`)
  }
  check(s1, 'live')
  const journal = fs.readFileSync(path.join(dir, 'journal.log'), 'utf8')
  t.notMatch(journal.split('\n')[1] ?? '', /"base_ref"/, 'a field op journals the field, not the record')
  s1.close()
  const s2 = Store.open(dir) // replays the journal, then compacts into the snapshot
  check(s2, 'replayed')
  s2.close()
  const s3 = Store.open(dir) // from the snapshot
  check(s3, 'snapshot')

  // token lookup by hash follows mint and revoke
  const { token, rec, op } = mintToken(new Date(), 'agent:a', ['read'], ['r'], 60)
  t.equal(s3.tokenByHash(hashToken(token)), undefined)
  s3.commit([op])
  t.equal(s3.tokenByHash(hashToken(token))?.id, rec.id)
  s3.commit([{ c: 'tokens', k: rec.id, v: { ...rec, revoked: true } }])
  t.equal(s3.tokenByHash(hashToken(token))?.revoked, true)
  s3.commit([{ c: 'tokens', k: rec.id, v: null }])
  t.equal(s3.tokenByHash(hashToken(token)), undefined)
  s3.close()
})
