// The start-up check, from outside: the real bundled ag-mcp against a real ag-server on loopback
// warns on stderr, once it has answered, when an enabled group needs a scope the token lacks
// (the rule `ag-mcp doctor` applies), or when the upstream refuses the token; a token with
// enough scopes gets no warning. The token is never printed.
import t from 'tap'
import type { Test } from 'tap'
import { chmodSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startMcp } from '../helpers/mcp-process.ts'
import type { McpProcess } from '../helpers/mcp-process.ts'
import { fixture } from '../server/helpers.ts'

const fx = await fixture()
t.teardown(fx.close)
const dir = t.testdir({})

function tokenFile(name: string, token: string): string {
  const f = join(dir, `${name}.token`)
  writeFileSync(f, `${token}\n`)
  chmodSync(f, 0o600)
  return f
}

/** ag-mcp on the fixture's server with one token, from a directory that is no git repository. */
async function started(t: Test, token: string, extra: string[] = []): Promise<McpProcess> {
  const p = startMcp(t, {
    args: ['--upstream', fx.server.url, '--token-file', tokenFile('t', token), '--log-level', 'debug', ...extra],
    cwd: dir,
  })
  const r = await p.request('server/discover')
  t.ok(r.result, 'the first request is answered')
  return p
}

/** The check's whole line (it runs in the background, after the first answer). */
const CHECKED = /start-up check: .*\n/

t.test('a token lacking scopes for enabled groups: one warning naming them and the fix', async (t) => {
  const p = await started(t, fx.tokens['reed'] as string)
  await p.waitForStderr(CHECKED)
  const warnings = p.stderr.split('\n').filter((l) => / warn start-up check: /.test(l))
  t.equal(warnings.length, 1, p.stderr)
  t.match(
    warnings[0],
    /warn start-up check: enabled group\(s\) coordinate, propose, workspace need scope\(s\) the token lacks \(it has read\); their calls will be refused\. Fix: mint a token with --scopes read,coordinate,propose,workspace, or leave coordinate, propose, workspace out of --allow$/,
  )
  t.notOk(p.stderr.includes(fx.tokens['reed'] as string), 'the token is not logged')
  t.equal((await p.close()).code, 0)
  p.assertValid(t)
})

t.test('a token with a scope for every enabled group: no warning', async (t) => {
  for (const [who, extra] of [
    ['alice', []],
    ['reed', ['--allow', 'read']],
  ] as const) {
    const p = await started(t, fx.tokens[who] as string, [...extra])
    await p.waitForStderr(CHECKED)
    t.match(p.stderr, /debug start-up check: the token has a scope for every enabled upstream group/, who)
    t.notMatch(p.stderr, / warn /, `${who} ${extra.join(' ')}: nothing to warn about`)
    t.equal((await p.close()).code, 0)
  }
})

t.test('a revoked token: the refusal is a warning at start, not a surprise later', async (t) => {
  const minted = await fx.api('admin', 'POST', '/admin/tokens', {
    principal: 'agent:alice',
    scopes: ['read'],
    repos: ['demo'],
    ttl_s: 600,
  })
  const token = minted.body['token'] as string
  t.equal((await fx.api('admin', 'DELETE', `/admin/tokens/${minted.body['info'].id as string}`)).status, 200)
  const p = await started(t, token)
  await p.waitForStderr(CHECKED)
  t.match(
    p.stderr,
    /warn start-up check: the upstream could not say who the token is \(401 unauthenticated: .*run ag-mcp doctor/,
  )
  t.notOk(p.stderr.includes(token), 'the token is not logged')
  t.equal((await p.close()).code, 0)
})
