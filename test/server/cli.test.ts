// ag-server's CLI from outside: usage when no command is named, the nearest flag for a misspelt
// one, and `token mint --out` that refuses a bad destination before any token exists.
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { mkdirSync, readdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const SERVER = fileURLToPath(new URL('../../dist/ag-server.mjs', import.meta.url))

function run(...args: string[]) {
  const r = spawnSync(process.execPath, [SERVER, ...args], {
    encoding: 'utf8',
    env: { PATH: process.env['PATH'] ?? '' },
    timeout: 20_000,
  })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

t.test('no command: the usage, then what to do; exit 2', async (t) => {
  for (const args of [[], ['token'], ['repo']]) {
    const r = run(...args)
    t.equal(r.code, 2, `ag-server ${args.join(' ')} exits 2`)
    t.match(r.stderr, /Commands:[\s\S]*ag-server: name a command: see the usage above/)
  }
  t.match(run().stderr, /ag-server token <action>/, 'the top-level usage lists the commands')
})

t.test('a misspelt flag gets the nearest one of that command', async (t) => {
  const cases: [string[], RegExp][] = [
    [['token', 'mint', '--principl', 'agent:a'], /unknown flag --principl \(did you mean --principal\?\)/],
    [
      ['serve', '--dat', 'x', '--lisen', '127.0.0.1:0'],
      /unknown flag --dat \(did you mean --data\?\); unknown flag --lisen \(did you mean --listen\?\)/,
    ],
    [['serve', '--zzzzzz'], /unknown flag --zzzzzz \(see --help\)/],
  ]
  for (const [args, re] of cases) {
    const r = run(...args)
    t.equal(r.code, 2, args.join(' '))
    t.match(r.stderr, re, args.join(' '))
  }
})

t.test('token mint --out: a bad destination is refused before a token exists', async (t) => {
  const dir = t.testdir({})
  const data = join(dir, 'data')
  t.equal(run('init', data).code, 0)
  const tokenCount = (): number =>
    (JSON.parse(run('token', 'list', '--data', data).stdout) as { tokens: unknown[] }).tokens.length
  const before = tokenCount()
  const mint = (out: string) =>
    run('token', 'mint', '--principal', 'agent:a', '--scopes', 'read', '--repos', '*', '--out', out, '--data', data)
  mkdirSync(join(dir, 'a-folder'))
  const cases: [string, RegExp][] = [
    [
      join(dir, 'missing', 'x.token'),
      /--out .*x\.token: the folder .*missing does not exist; create it \(mkdir -p .*missing\) or name another file/,
    ],
    [join(dir, 'a-folder'), /--out .*a-folder is a directory; name the file to write the secret to/],
  ]
  for (const [out, re] of cases) {
    const r = mint(out)
    t.equal(r.code, 1, out)
    t.match(r.stderr, re)
    t.notMatch(r.stderr, /\n\s+at /, 'no stack trace')
  }
  t.equal(tokenCount(), before, 'no token was minted for a refused destination')
  t.same(readdirSync(join(dir, 'a-folder')), [], 'nothing was left in the folder')

  const good = join(dir, 'agent.token')
  const r = mint(good)
  t.equal(r.code, 0, r.stderr)
  t.match(r.stdout, /^minted \S+ for agent:a .*token written to/)
  t.equal(statSync(good).mode & 0o777, 0o600)
  t.equal(tokenCount(), before + 1)
  t.same(
    readdirSync(dir).filter((f) => f.includes('.tmp-')),
    [],
    'no temporary file is left beside it',
  )
})
