// `ag-mcp local status` and `ag-mcp local remove` (issue 26, item 9; friction 12: nothing said
// what local mode changes in the repository or how to undo it). Status shows what is kept and
// what other commands left beside it; remove takes local mode's part away, refuses while a
// session runs or a proposal is open unless --force, and names what it leaves.
import t from 'tap'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { agMcp, call, git, localSession, makeRepo, manyFiles, propose, refAppears } from '../helpers/local-mode.ts'

t.test('status shows what local mode keeps; remove takes it away, and says what it leaves', async (t) => {
  const home = t.testdir({})
  const top = makeRepo(join(home, 'proj'), { ...manyFiles(50), 'README.md': '# p\n' })
  const exclude = join(top, '.git', 'info', 'exclude')
  const excludedBefore = readFileSync(exclude, 'utf8')
  // What agit and continuity would have left (theirs to remove, ours to report).
  mkdirSync(join(top, '.agit'))
  writeFileSync(join(top, '.agit', 'log.jsonl'), '{}\n')
  const p = localSession(t, home, top)
  const id = await propose(p, 'proj', { 'docs/a.md': 'a\n' })
  t.ok(await refAppears(top, `refs/proposals/${id}`))

  const status = agMcp(home, top, ['local', 'status'])
  t.equal(status.status, 0, status.stderr)
  t.match(
    status.stdout,
    /\.ag\/\s+[\d.]+ KiB \([\d.]+% of \.git's [\d.]+ KiB\): the private server's state; it borrows your objects/,
  )
  t.match(status.stdout, /private server\s+running \(pid \d+\)/)
  t.match(status.stdout, new RegExp(`sessions\\s+agent:local \\(pid ${p.child.pid}, since `))
  t.match(status.stdout, new RegExp(`proposals\\s+1 recorded, 1 open \\(${id}\\)`))
  t.match(status.stdout, /refs in your repo\s+1 refs\/proposals\/\* \(open proposals\), \d+ refs\/ag\/\*/)
  t.match(status.stdout, /\.git\/info\/exclude\s+\/\.ag\//)
  t.match(status.stdout, /also here\s+agit's thought log \([\d.]+ B\): .*\.agit \(not local mode's; rm -r /)
  t.match(status.stdout, /undo all of local mode: ag-mcp local remove/)

  // A live session: refused, with how, and nothing removed.
  const live = agMcp(home, top, ['local', 'remove'])
  t.equal(live.status, 1)
  t.match(
    live.stderr,
    new RegExp(
      `1 session\\(s\\) use local mode here \\(pids ${p.child.pid}\\): end them first .*ag-mcp local remove --force`,
    ),
  )
  t.ok(existsSync(join(top, '.ag')), 'nothing was removed')
  t.equal((await p.close()).code, 0)

  // An open proposal: refused, with how to keep it.
  const open = agMcp(home, top, ['local', 'remove'])
  t.equal(open.status, 1)
  t.match(
    open.stderr,
    new RegExp(`open proposals would be lost: ${id}\\. .*git branch keep-${id} refs/proposals/${id}`),
  )
  t.ok(existsSync(join(top, '.ag')), 'nothing was removed')

  const removed = agMcp(home, top, ['local', 'remove', '--force'])
  t.equal(removed.status, 0, removed.stderr)
  t.match(
    removed.stdout,
    /^removed .*\.ag \([\d.]+ KiB\); \d+ ref\(s\) under refs\/ag\/ and refs\/proposals\/.*; the \/\.ag\/ line of /,
  )
  t.match(removed.stdout, /left .*\.agit: agit's thought log/)
  t.notOk(existsSync(join(top, '.ag')), '.ag/ is gone')
  t.equal(git(top, ['for-each-ref', 'refs/ag/', 'refs/proposals/']), '', 'its refs are gone')
  t.equal(readFileSync(exclude, 'utf8'), excludedBefore, 'info/exclude is as it was')
  t.ok(existsSync(join(top, '.agit')), "agit's folder is left to agit")
  t.match(agMcp(home, top, ['local', 'status']).stdout, /nothing: ag-mcp --local has not run here/)
})

t.test('remove --force under a live session stops its server, and the session does not bring .ag/ back', async (t) => {
  const home = t.testdir({})
  const top = makeRepo(join(home, 'proj'), { 'README.md': '# p\n' })
  const p = localSession(t, home, top)
  t.notOk((await call(p, 'whoami', {})).isError)
  const r = agMcp(home, top, ['local', 'remove', '--force'])
  t.equal(r.status, 0, r.stderr)
  t.match(r.stdout, /^stopped the private server \(pid \d+\); the 1 session\(s\) using it will fail from now on\n/)
  t.ok((await call(p, 'whoami', {})).isError, "the session's calls fail now")
  t.notOk(existsSync(join(top, '.ag')), 'and .ag/ stays gone')
  await p.close()
  t.notOk(existsSync(join(top, '.ag')), 'also after the session ended')
})
