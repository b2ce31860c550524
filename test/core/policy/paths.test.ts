import t from 'tap'
import { checkRepo, checkWritePaths, compileGlobs, normalizeRepoPath } from '../../../core/src/policy/paths.ts'

t.test('hostile paths are refused whatever the globs', async (t) => {
  const hostile: Array<[string, RegExp]> = [
    ['', /empty/],
    ['../x', /"\.\."/],
    ['a/../../b', /"\.\."/],
    ['a/..', /"\.\."/],
    ['/etc/passwd', /absolute/],
    ['//server/share', /absolute/],
    ['C:\\x', /backslash|drive/],
    ['C:/x', /drive/],
    ['c:x', /drive/],
    ['a\\b', /backslash/],
    ['a\0b', /NUL/],
    ['a\nb', /control/],
    ['a\x1b[31mb', /control/],
    ['a\u0085b', /control/],
    ['a\u202eb', /invisible/],
    ['.g\u200cit/config', /invisible/],
    ['a\ud800', /surrogate/],
    ['.git/config', /\.git/],
    ['.git', /\.git/],
    ['x/.GIT/y', /\.git/],
    ['x/.Git', /\.git/],
    ['x/.git./hooks', /\.git/],
    ['x/.git /hooks', /\.git/],
    ['GIT~1/config', /\.git/],
    ['.git::$INDEX_ALLOCATION/x', /\.git/],
    ['./', /root/],
    ['.', /root/],
    ['x'.repeat(5000), /longer/],
  ]
  for (const [p, reason] of hostile) {
    const r = normalizeRepoPath(p)
    t.equal(r.ok, false, JSON.stringify(p).slice(0, 40))
    if (!r.ok) {
      t.match(r.reason, reason)
      t.match(r.reason, /^path /, 'reasons start with "path"')
    }
    const w = checkWritePaths([p], compileGlobs(['**', '**/.*', '.*/**']))
    t.equal(w.ok, false, 'refused even by allow-everything globs')
  }
})

t.test('normalization', async (t) => {
  const cases: Array<[string, string]> = [
    ['./a//b', 'a/b'],
    ['a/b/', 'a/b'],
    ['a/./b', 'a/b'],
    ['src/.env', 'src/.env'],
    ['.github/workflows/ci.yml', '.github/workflows/ci.yml'],
    ['.gitignore', '.gitignore'],
    ['x/.git-keep', 'x/.git-keep'],
    ['a..b/c...', 'a..b/c...'],
    ['日本/😀.txt', '日本/😀.txt'],
  ]
  for (const [p, out] of cases) t.same(normalizeRepoPath(p), { ok: true, path: out }, p)
})

t.test('globs: dot files matched explicitly, no negation, no extglob', async (t) => {
  const m = compileGlobs(['src/**', 'docs/*.md'])
  t.ok(m.matches('src/a.ts'))
  t.ok(m.matches('src/deep/er/a.ts'))
  t.notOk(m.matches('src/.env'), 'src/** does not reach dot files')
  t.notOk(m.matches('src/.config/x'))
  t.ok(m.matches('docs/a.md'))
  t.notOk(m.matches('docs/sub/a.md'))
  t.notOk(m.matches('other/a.ts'))
  t.ok(compileGlobs(['src/.env']).matches('src/.env'))
  t.ok(compileGlobs(['src/.*']).matches('src/.env'))
  t.ok(compileGlobs(['{src,test}/**']).matches('test/x.ts'), 'braces expand')
  const neg = compileGlobs(['!secret/**'])
  t.notOk(neg.matches('public/x'), 'a leading ! is literal: it does not allow everything else')
  t.ok(neg.matches('!secret/x'))
  t.notOk(compileGlobs(['+(a|b)']).matches('a'), 'extglob off')
  t.ok(compileGlobs(['#x']).matches('#x'), 'no comments')
  t.notOk(compileGlobs(['SRC/**']).matches('src/a'), 'case-sensitive')
  t.same(compileGlobs(['a/**']).globs, ['a/**'])
  t.throws(() => compileGlobs(['']), TypeError)
  t.throws(() => compileGlobs(['/abs/**']), /absolute/)
  t.notOk(compileGlobs([]).matches('a'), 'no globs: nothing matches')
})

t.test('checkWritePaths', async (t) => {
  const m = compileGlobs(['src/**'])
  t.same(checkWritePaths(['./src//a.ts', 'src/b/'], m), { ok: true, paths: ['src/a.ts', 'src/b'] })
  t.same(checkWritePaths(['src/a.ts'], undefined), { ok: true, paths: ['src/a.ts'] }, 'no globs: only path safety')
  t.same(checkWritePaths([], m), { ok: true, paths: [] })
  const miss = checkWritePaths(['src/a.ts', 'src/.env'], m)
  t.same(miss, { ok: false, rule: 'write-path', value: 'src/.env', reason: 'the path matches no --write-path glob.' })
  const evil = checkWritePaths(['src/ok', 'src/\u202e\x1b[2J../../etc/passwd'], m)
  t.equal(evil.ok, false)
  if (!evil.ok) {
    t.equal(evil.rule, 'write-path')
    t.equal(evil.value, 'src/\\u202e\\u001b[2J../../etc/passwd', 'offending value echoed inert')
  }
  const long = checkWritePaths(['a'.repeat(10_000)], m)
  t.ok(!long.ok && long.value.length <= 201, 'echo is bounded')
})

t.test('checkRepo', async (t) => {
  const m = compileGlobs(['acme/*', 'solo'])
  t.same(checkRepo('acme/web', m), { ok: true, repo: 'acme/web' })
  t.same(checkRepo('solo', m), { ok: true, repo: 'solo' })
  t.same(checkRepo('other/web', m), {
    ok: false,
    rule: 'repo',
    value: 'other/web',
    reason: 'repository "other/web" matches no --repo glob.',
  })
  t.equal(checkRepo('acme/.hidden', m).ok, false, 'dot names need an explicit glob')
  for (const bad of [
    '',
    'acme/../x',
    'acme//web',
    '/acme/web',
    'acme/web/',
    'acme\\web',
    'acme/w\0',
    'acme/\u202eweb',
    '.',
    '..',
  ]) {
    const r = checkRepo(bad, undefined)
    t.equal(r.ok, false, JSON.stringify(bad))
    if (!r.ok) t.equal(r.rule, 'repo')
  }
  t.same(checkRepo('anything/goes', undefined), { ok: true, repo: 'anything/goes' })
})
