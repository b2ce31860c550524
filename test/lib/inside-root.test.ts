// The one "inside the root, no symbolic link out" check (lib/inside-root.ts), against hostile
// names: what each of its four users refuses rests on these answers.
import t, { type Test } from 'tap'
import { mkdirSync, realpathSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { isInside, resolveInsideRoot } from '../../lib/inside-root.ts'

/** A root with a file, a directory, and links in and out of it, beside a sibling named like it. */
function world(t: Test) {
  const top = realpathSync(
    t.testdir({
      repo: { 'a.txt': 'a', dir: { 'b.txt': 'b' } },
      'repo-evil': { 'x.txt': 'x' },
      elsewhere: { 'f.txt': 'f' },
    }),
  )
  const root = join(top, 'repo')
  symlinkSync(join(top, 'elsewhere'), join(root, 'out'))
  symlinkSync(join(top, 'elsewhere', 'f.txt'), join(root, 'out.txt'))
  symlinkSync(join(root, 'dir'), join(root, 'in'))
  symlinkSync(join(root, 'nowhere'), join(root, 'dangling'))
  symlinkSync(join(root, 'loop'), join(root, 'loop'))
  return { top, root }
}

t.test('isInside compares whole path segments: /repo-evil is not inside /repo', async (t) => {
  t.ok(isInside('/repo', '/repo'))
  t.ok(isInside('/repo', '/repo/a/b'))
  t.ok(isInside('/repo', '/repo/..a'), 'a name that starts with two dots is a name')
  t.notOk(isInside('/repo', '/repo-evil'))
  t.notOk(isInside('/repo', '/repo-evil/a'))
  t.notOk(isInside('/repo', '/repository/a'))
  t.notOk(isInside('/repo', '/'))
  t.notOk(isInside('/repo', '/repo/../etc'))
  t.ok(isInside('/', '/anything'))
})

t.test('paths that stay inside: existing, missing, through a link that stays in', async (t) => {
  const { root } = world(t)
  t.match(await resolveInsideRoot(root, 'a.txt'), { ok: true, rel: 'a.txt', kind: 'file', real: join(root, 'a.txt') })
  t.match(await resolveInsideRoot(root, 'dir'), { ok: true, rel: 'dir', kind: 'directory' })
  t.match(await resolveInsideRoot(root, 'new/deeper/c.txt'), { ok: true, rel: 'new/deeper/c.txt', kind: undefined })
  t.match(await resolveInsideRoot(root, 'in/b.txt'), {
    ok: true,
    rel: 'dir/b.txt',
    kind: 'file',
    abs: join(root, 'in/b.txt'),
  })
  t.match(
    await resolveInsideRoot(root, 'in'),
    { ok: true, rel: 'dir', kind: 'directory' },
    'a link at the end: its target',
  )
  t.match(await resolveInsideRoot(root, 'dir/../a.txt'), { ok: true, rel: 'a.txt' })
  t.match(await resolveInsideRoot(root, join(root, 'a.txt')), { ok: true, rel: 'a.txt' }, 'absolute, inside')
  t.match(
    await resolveInsideRoot(root, ''),
    { ok: true, rel: '', kind: 'directory' },
    'the root itself: the caller decides',
  )
})

t.test('`..` and absolute paths out of the root are refused before anything is probed', async (t) => {
  const { top, root } = world(t)
  t.same(await resolveInsideRoot(root, '..'), { ok: false, why: 'outside' })
  t.same(await resolveInsideRoot(root, '../repo-evil/x.txt'), { ok: false, why: 'outside' })
  t.same(await resolveInsideRoot(root, 'dir/../../elsewhere/f.txt'), { ok: false, why: 'outside' })
  t.same(
    await resolveInsideRoot(root, join(top, 'repo-evil', 'x.txt')),
    { ok: false, why: 'outside' },
    'a prefix sibling',
  )
  t.same(await resolveInsideRoot(root, '/etc/passwd'), { ok: false, why: 'outside' })
  t.same(
    await resolveInsideRoot(root, '/no/such/file'),
    { ok: false, why: 'outside' },
    'missing or not: the same answer',
  )
})

t.test('a symbolic link out of the root: the link itself, or a directory on the way', async (t) => {
  const { root } = world(t)
  t.same(await resolveInsideRoot(root, 'out.txt'), { ok: false, why: 'escapes' })
  t.same(await resolveInsideRoot(root, 'out/f.txt'), { ok: false, why: 'escapes' })
  t.same(
    await resolveInsideRoot(root, 'out/new.txt'),
    { ok: false, why: 'escapes' },
    'a new file under a linked parent',
  )
  t.same(await resolveInsideRoot(root, 'out/new/deeper.txt'), { ok: false, why: 'escapes' })
})

t.test('a link to nothing and a link loop', async (t) => {
  const { root } = world(t)
  t.same(await resolveInsideRoot(root, 'dangling'), { ok: false, why: 'dangling', code: 'ENOENT' })
  t.same(await resolveInsideRoot(root, 'loop'), { ok: false, why: 'dangling', code: 'ELOOP' })
  t.same(await resolveInsideRoot(root, 'loop/x'), { ok: false, why: 'unresolvable', code: 'ELOOP' })
})

t.test('NUL, a file used as a directory, a name too long', async (t) => {
  const { root } = world(t)
  t.same(await resolveInsideRoot(root, 'a.txt\0.png'), { ok: false, why: 'nul' })
  t.same(await resolveInsideRoot(root, 'a.txt/x'), { ok: false, why: 'not-directory' })
  t.same(await resolveInsideRoot(root, `${'n'.repeat(300)}.txt`), {
    ok: false,
    why: 'unresolvable',
    code: 'ENAMETOOLONG',
  })
  const deep = Array.from({ length: 400 }, () => 'abcdefghij').join('/')
  t.same(await resolveInsideRoot(root, deep), { ok: false, why: 'unresolvable', code: 'ENAMETOOLONG' })
})

t.test("symlinks: 'refuse' takes no link at any step, even one that stays inside", async (t) => {
  const { root } = world(t)
  const refuse = { symlinks: 'refuse' } as const
  t.match(await resolveInsideRoot(root, 'dir/b.txt', refuse), { ok: true, rel: 'dir/b.txt', kind: 'file' })
  t.match(await resolveInsideRoot(root, 'dir/new.txt', refuse), { ok: true, rel: 'dir/new.txt', kind: undefined })
  for (const p of ['in/b.txt', 'in', 'out.txt', 'out/f.txt', 'dangling', 'loop'])
    t.same(await resolveInsideRoot(root, p, refuse), { ok: false, why: 'symlink' }, p)
  t.same(await resolveInsideRoot(root, 'a.txt/x', refuse), { ok: false, why: 'not-directory' })
  t.same(await resolveInsideRoot(root, '../repo-evil/x.txt', refuse), { ok: false, why: 'outside' })
})

t.test('a root given through a link: its spelling and its real path are inside', async (t) => {
  const { top, root } = world(t)
  mkdirSync(join(top, 'links'))
  const alias = join(top, 'links', 'repo')
  symlinkSync(root, alias)
  t.match(await resolveInsideRoot(alias, 'a.txt'), { ok: true, rel: 'a.txt', real: join(root, 'a.txt') })
  t.match(await resolveInsideRoot(alias, join(root, 'a.txt')), { ok: true, rel: 'a.txt' }, 'absolute, by its real path')
  t.same(
    await resolveInsideRoot(root, join(alias, 'a.txt')),
    { ok: false, why: 'outside' },
    'a spelling the root was not given by is outside: where it leads is not probed',
  )
  t.match(await resolveInsideRoot(alias, 'dir/b.txt', { symlinks: 'refuse' }), { ok: true, rel: 'dir/b.txt' })
  t.same(await resolveInsideRoot(alias, 'out.txt'), { ok: false, why: 'escapes' })
})

t.test('a root that does not exist cannot hold anything', async (t) => {
  const { top } = world(t)
  t.same(await resolveInsideRoot(join(top, 'no-such-root'), 'a.txt'), {
    ok: false,
    why: 'unresolvable',
    code: 'ENOENT',
  })
})
