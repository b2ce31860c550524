// ag-server's CLI from outside: usage when no command is named, the nearest flag for a misspelt
// one, and `token mint --out` that refuses a bad destination before any token exists and revokes
// a token whose secret it could not write.
import t from 'tap'
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs'
import { createServer, type AddressInfo } from 'node:net'
import { join } from 'node:path'
import { listening, run, SERVER, serveFor } from '../helpers/ag-server-cli.ts'

t.test('no command: the usage, then what to do; exit 2', async (t) => {
  for (const args of [[], ['token'], ['repo']]) {
    const r = run(...args)
    t.equal(r.code, 2, `ag-server ${args.join(' ')} exits 2`)
    t.match(r.stderr, /Commands:[\s\S]*ag-server: name a command: see the usage above/)
  }
  t.match(run().stderr, /^ {2}token +mint, revoke or list tokens$/m, 'the top-level usage lists the commands')
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

t.test('token mint --out: a write that fails after minting revokes the token', async (t) => {
  // A running ag-server mints (the CLI goes over HTTP); the CLI itself runs with a file-size limit
  // of 0, so the destination passes every check but the secret cannot be written into it (EFBIG).
  const dir = t.testdir({})
  const data = join(dir, 'data')
  t.equal(run('init', data).code, 0)
  await serveFor(t, data)

  const out = join(dir, 'agent.token')
  const r = spawnSync(
    '/bin/sh',
    [
      '-c',
      // env -i: the test runner injects its own hooks (NODE_OPTIONS) into children, and those turn
      // the ignored SIGXFSZ back into a kill; ag-server itself ignores it and sees EFBIG.
      'ulimit -f 0 && exec env -i PATH="$PATH" "$0" "$@"',
      process.execPath,
      SERVER,
      ...['token', 'mint', '--principal', 'agent:a', '--scopes', 'read', '--repos', '*', '--out', out, '--data', data],
    ],
    { encoding: 'utf8', env: { PATH: process.env['PATH'] ?? '' }, timeout: 20_000 },
  )
  t.equal(r.status, 1, `${String(r.signal)} ${r.stderr}`)
  const id = /token (tok_\w+) was revoked/.exec(r.stderr)?.[1]
  t.match(
    r.stderr,
    /--out .*agent\.token: the token could not be written \(EFBIG[^)]*\); token tok_\w+ was revoked, so none is live without its secret/,
  )
  t.notMatch(r.stderr, /\n\s+at /, 'no stack trace')
  t.notOk(existsSync(out), 'no token file was left')
  t.same(
    readdirSync(dir).filter((f) => f.includes('.tmp-')),
    [],
    'no temporary file is left beside it',
  )
  const tokens = (
    JSON.parse(run('token', 'list', '--data', data).stdout) as {
      tokens: { id: string; principal: string; revoked: boolean }[]
    }
  ).tokens
  const minted = tokens.filter((k) => k.principal === 'agent:a')
  t.equal(minted.length, 1, 'the token was minted (the failure came after)')
  t.equal(minted[0]?.id, id, 'the id the error names is that token')
  t.equal(minted[0]?.revoked, true, 'and it is revoked')
})

t.test('serve: an occupied address names itself and the fix; the data directory is free again', async (t) => {
  const dir = t.testdir({})
  const data = join(dir, 'data')
  t.equal(run('init', data).code, 0)
  const taken = createServer()
  await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r))
  t.teardown(() => new Promise<void>((r) => taken.close(() => r())))
  const port = (taken.address() as AddressInfo).port
  const r = run('serve', '--data', data, '--listen', `127.0.0.1:${port}`)
  t.equal(r.code, 1)
  t.equal(
    r.stderr,
    `ag-server: 127.0.0.1:${port} is already in use (another ag-server, or another program): stop it, or pick another address with --listen HOST:PORT (port 0 picks a free one)\n`,
  )
  t.notOk(existsSync(join(data, 'lock')), 'the lock taken for it was released')
})

t.test('serve: plain HTTP beyond loopback warns and names the TLS recipe; loopback does not', async (t) => {
  const data = join(t.testdir({}), 'data')
  t.equal(run('init', data).code, 0)
  for (const [listen, warns] of [
    ['0.0.0.0:0', true],
    ['127.0.0.1:0', false],
  ] as const) {
    const serve = spawn(process.execPath, [SERVER, 'serve', '--data', data, '--listen', listen], {
      env: { PATH: process.env['PATH'] ?? '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stderr = ''
    serve.stderr.on('data', (b: Buffer) => {
      stderr += b.toString()
    })
    // 'close': every byte the server wrote before the kill has been read.
    const closed = new Promise((r) => serve.once('close', r))
    await listening(serve)
    // The warning is written before the listening line, so it is in the pipe before the kill.
    serve.kill()
    await closed
    if (warns)
      t.match(
        stderr,
        /^ag-server: warning: plain HTTP on 0\.0\.0\.0:\d+, beyond loopback: .*TLS reverse proxy.*docs\/security\.md/m,
      )
    else t.equal(stderr, '', `${listen}: no warning`)
  }
})

t.test('operator mistakes name the value and the fix; exit 2, nothing minted', async (t) => {
  const data = join(t.testdir({}), 'data')
  t.equal(run('init', data).code, 0)
  t.match(run('--version').stdout, /^ag-server \d+\.\d+\.\d+$/m, '--version prints ag-server <version>')
  const port = run('serve', '--data', data, '--port', '7420')
  t.equal(port.code, 2)
  t.match(port.stderr, /unknown flag --port: ag-server takes --listen HOST:PORT/)
  const mint = (...extra: string[]) =>
    run('token', 'mint', '--principal', 'agent:x', '--out', join(data, '..', 'x.token'), '--data', data, ...extra)
  const scope = mint('--scopes', 'read,admn', '--repos', '*')
  t.equal(scope.code, 2)
  t.equal(
    scope.stderr,
    'ag-server: --scopes: unknown scope admn (did you mean admin?); the scopes are read, workspace, propose, coordinate, review, integrate, admin\n',
  )
  const repo = mint('--scopes', 'read', '--repos', 'nosuch')
  t.equal(repo.code, 2)
  t.match(
    repo.stderr,
    /--repos: no repository nosuch in this data directory \(it has none\); add one with ag-server repo add/,
  )
  t.notOk(existsSync(join(data, '..', 'x.token')), 'no token file was written')
  t.notMatch(run('token', 'list', '--data', data).stdout, /agent:x/, 'and no token minted')
})
