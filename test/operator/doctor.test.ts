// `ag-mcp doctor` against a real ag-server on loopback: a good setup passes; a wrong URL, a revoked
// token, a token without a scope an enabled group needs, and an unreachable host each fail with
// the fix, exit 1, and never print the token.
import t from 'tap'
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { BINARY } from '../helpers/mcp-process.ts'
import { fixture } from '../server/helpers.ts'

const fx = await fixture()
t.teardown(fx.close)
const base = fx.server.url.replace(/\/agwp\/v1$/, '')

/** Async, so the in-process ag-server keeps answering while doctor runs. */
function doctor(dir: string, ...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const c = spawn(process.execPath, [BINARY, 'doctor', ...args], {
      cwd: dir,
      env: { PATH: process.env['PATH'] ?? '', HOME: dir },
    })
    let stdout = ''
    let stderr = ''
    c.stdout.on('data', (b: Buffer) => (stdout += b))
    c.stderr.on('data', (b: Buffer) => (stderr += b))
    c.on('close', (code) => resolve({ code, stdout, stderr }))
  })
}

function tokenFile(dir: string, name: string, token: string): string {
  const f = join(dir, `${name}.token`)
  writeFileSync(f, `${token}\n`)
  chmodSync(f, 0o600)
  return f
}

async function closedPort(): Promise<number> {
  const s = createServer()
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()))
  const port = (s.address() as { port: number }).port
  await new Promise<void>((r) => s.close(() => r()))
  return port
}

t.test('a good setup: every check passes, exit 0', async (t) => {
  const dir = t.testdir({})
  const r = await doctor(
    dir,
    '--upstream',
    fx.server.url,
    '--token-file',
    tokenFile(dir, 'alice', fx.tokens['alice'] as string),
  )
  t.equal(r.code, 0, r.stdout + r.stderr)
  // agit's group joins when the directory is a git repository.
  t.match(r.stdout, /^ok\s+config\s+groups core, (agit, )?coordinate, propose, read, workspace$/m)
  t.match(r.stdout, /^ok\s+token\s+--token-file .*alice\.token \(mode 0600\)$/m)
  t.match(
    r.stdout,
    /^ok\s+upstream\s+http:\/\/127\.0\.0\.1:\d+ answers as agent:alice \(scopes read,workspace,propose,coordinate; roles demo=contributor\)$/m,
  )
  t.match(r.stdout, /^ok\s+scopes\s+the token has a scope for every enabled upstream group$/m)
  t.match(r.stdout, /^ok\s+clock\s+/m)
  t.notOk(r.stdout.includes(fx.tokens['alice'] as string))
  const j = await doctor(dir, '--upstream', base, '--token-file', join(dir, 'alice.token'), '--json')
  const parsed = JSON.parse(j.stdout) as { ok: boolean; checks: { check: string; status: string }[] }
  t.equal(parsed.ok, true)
  t.same(parsed.checks.map((c) => c.check).slice(0, 5), ['config', 'token', 'upstream', 'clock', 'scopes'])
})

t.test('what goes wrong is named with its fix, exit 1', async (t) => {
  const dir = t.testdir({})
  const alice = tokenFile(dir, 'alice', fx.tokens['alice'] as string)
  const minted = await fx.api('admin', 'POST', '/admin/tokens', {
    principal: 'agent:alice',
    scopes: ['read'],
    repos: ['demo'],
    ttl_s: 600,
  })
  const revoked = tokenFile(dir, 'revoked', minted.body.token as string)
  t.equal((await fx.api('admin', 'DELETE', `/admin/tokens/${minted.body.info.id as string}`)).status, 200)
  const cases: [string, string[], RegExp][] = [
    [
      'wrong URL',
      ['--upstream', `${base}/not-here`, '--token-file', alice],
      /FAIL\s+upstream\s+http:\/\/127\.0\.0\.1:\d+: no AGWP v1 API at .*\(404\)\n\s+fix: give the ag-server base URL/,
    ],
    [
      'revoked token',
      ['--upstream', base, '--token-file', revoked],
      /FAIL\s+upstream\s+.* refused the token \(401: revoked, expired or not its token\)\n\s+fix: mint a new token/,
    ],
    [
      'missing scope',
      ['--upstream', base, '--token-file', tokenFile(dir, 'reed', fx.tokens['reed'] as string)],
      /FAIL\s+scopes\s+enabled group\(s\) coordinate, propose, workspace need scope\(s\) the token lacks \(it has read\)\n\s+fix: mint a token with --scopes read,coordinate,propose,workspace, or leave coordinate, propose, workspace out of --allow/,
    ],
    [
      'unreachable',
      ['--upstream', `http://127.0.0.1:${await closedPort()}`, '--token-file', alice],
      /FAIL\s+upstream\s+http:\/\/127\.0\.0\.1:\d+: cannot connect \(ECONNREFUSED\)\n\s+fix: is ag-server running there\?/,
    ],
    [
      'no upstream',
      ['--token-file', alice],
      /FAIL\s+upstream\s+no --upstream: .*\n\s+fix: pass --upstream URL .* or for your own repository: ag-mcp doctor --local/,
    ],
    [
      'token file is a directory',
      ['--upstream', base, '--token-file', dir],
      /FAIL\s+token\s+--token-file .* is a directory/,
    ],
  ]
  for (const [what, args, re] of cases) {
    const r = await doctor(dir, ...args)
    t.equal(r.code, 1, what)
    t.match(r.stdout, re, what)
    for (const tok of Object.values(fx.tokens))
      t.notOk(r.stdout.includes(tok) || r.stderr.includes(tok), `${what}: no token printed`)
  }
})

t.test("the repository's agit hooks: named when missing, with the command that installs them", async (t) => {
  // A repository of its own, outside this one, so the answer is about it alone.
  const dir = mkdtempSync(join(tmpdir(), 'ag-mcp-doctor-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  execFileSync('git', ['init', '-q', dir])
  const hooks = async () => {
    const r = await doctor(dir, '--json')
    return (
      JSON.parse(r.stdout) as { checks: { check: string; status: string; detail: string; fix?: string }[] }
    ).checks.find((c) => c.check === 'hooks')
  }
  const before = await hooks()
  t.equal(before?.status, 'warn', 'information, not a failure')
  t.match(
    before?.detail,
    /agit's git hooks are not installed in .* \(missing: post-commit, post-checkout, post-merge, post-rewrite\)/,
  )
  t.match(before?.fix, /ag-mcp agit init/)
  const init = spawnSync(process.execPath, [BINARY, 'agit', 'hooks', 'install'], {
    cwd: dir,
    env: { PATH: process.env['PATH'] ?? '', HOME: dir },
    encoding: 'utf8',
  })
  t.equal(init.status, 0, init.stderr)
  const after = await hooks()
  t.equal(after?.status, 'ok')
  t.match(after?.detail, /agit's git hooks are installed in /)
})
