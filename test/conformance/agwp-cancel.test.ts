// Cancellation and shutdown against slow upstreams, and the policy gates that must refuse a
// call before any request leaves the process (a recording listener counts what arrives).
import t from 'tap'
import { agwpFixture, client, mcp, recorder, toCallResult } from './agwp-fixture.ts'
import { modernMeta } from '../helpers/mcp-process.ts'

const fx = await agwpFixture()
t.teardown(() => fx.close())
const tokenFile = fx.tokenFile('alice')
t.test('notifications/cancelled aborts the upstream request and suppresses the response', async (t) => {
  const silent = await recorder(() => {
    /* never answers */
  })
  t.teardown(() => silent.close())
  const p = mcp(t, silent.url, tokenFile, ['--timeout-ms', '60000'])
  p.send({
    jsonrpc: '2.0',
    id: 'slow',
    method: 'tools/call',
    params: { name: 'log', arguments: { repo: 'demo' }, _meta: modernMeta() },
  })
  await silent.until(() => silent.requests.length === 1)
  t.equal(silent.closedSockets, 0, 'the request is open')
  p.notify('notifications/cancelled', { requestId: 'slow', reason: 'changed my mind' })
  await silent.until(() => silent.closedSockets === 1)
  t.pass('the upstream saw its socket close')
  // A positive barrier: the ping was read after the cancellation, so its answer comes after
  // anything the cancelled call could still have written.
  const after = await p.request('ping')
  t.ok(after.result, 'the server still answers')
  t.notOk(
    p.responses.some((r) => r.id === 'slow'),
    'no response for the cancelled call',
  )
  t.equal(silent.requests.length, 1, 'and no retry')
  t.equal((await p.close()).code, 0)
  t.notOk(
    p.responses.some((r) => r.id === 'slow'),
    'not even at exit',
  )
  p.assertValid(t)
})

t.test('stdin EOF with three calls in flight: three responses, then exit 0', async (t) => {
  const slow = await recorder((req, res) => {
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ commits: [{ id: 'c'.repeat(40), subject: req.url }] }))
    }, 300)
  })
  t.teardown(() => slow.close())
  const p = mcp(t, slow.url, tokenFile)
  for (const id of [1, 2, 3])
    p.send({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'log', arguments: { repo: 'demo', limit: id }, _meta: modernMeta() },
    })
  await slow.until(() => slow.requests.length === 3)
  p.child.stdin.end()
  const { code } = await p.exited
  t.equal(code, 0, 'exit 0')
  const answers = p.responses.filter((r) => [1, 2, 3].includes(r.id as number))
  t.equal(answers.length, 3, 'all three answered before exit')
  for (const a of answers) t.notOk(toCallResult(a).isError, `call ${String(a.id)} succeeded`)
  p.assertValid(t)
})

t.test('refusals that make no upstream request', async (t) => {
  const rec = await recorder((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end('{"leases":[]}')
  })
  t.teardown(() => rec.close())
  const cases: { flags: string[]; tool: string; args: Record<string, unknown>; why: RegExp }[] = [
    { flags: [], tool: 'review_submit', args: { proposal: 'prop-1', verdict: 'approve' }, why: /review/ },
    {
      flags: ['--allow', 'read,review'],
      tool: 'proposal_integrate',
      args: { proposal: 'prop-1' },
      why: /--enable-integrate/,
    },
    { flags: ['--repo', 'other-*'], tool: 'log', args: { repo: 'demo' }, why: /refused by --repo/ },
    {
      flags: ['--repo', 'other-*'],
      tool: 'lease_acquire',
      args: { repo: 'demo', paths: ['a'] },
      why: /refused by --repo/,
    },
    {
      flags: ['--write-path', 'docs/**'],
      tool: 'file_write',
      args: { workspace: 'ws-1', path: 'src/a.ts', content: 'x' },
      why: /refused by --write-path/,
    },
    {
      flags: ['--write-path', 'docs/**'],
      tool: 'file_move',
      args: { workspace: 'ws-1', from: 'docs/a.md', to: 'src/a.md' },
      why: /refused by --write-path/,
    },
    {
      flags: [],
      tool: 'file_write',
      args: { workspace: 'ws-1', path: '../etc/passwd', content: 'x' },
      why: /refused by path safety/,
    },
    {
      flags: ['--require-lease'],
      tool: 'file_delete',
      args: { workspace: 'ws-1', path: 'a.txt' },
      why: /refused by --require-lease: writes need a lease/,
    },
  ]
  for (const era of ['2026-07-28', '2025-11-25'] as const) {
    for (const k of cases) {
      const p = mcp(t, rec.url, tokenFile, k.flags)
      const c = await client(p, era)
      const r = await c.call(k.tool, k.args)
      t.ok(r.isError, `${era} ${k.tool} ${k.flags.join(' ')}: refused`)
      t.match(r.text, k.why)
      t.equal((await p.close()).code, 0)
      p.assertValid(t)
    }
  }
  t.equal(rec.requests.length, 0, 'not one request reached the upstream')
})

t.test('--require-lease against the real server: the run must hold a lease covering every path', async (t) => {
  const task = await fx.task('lease gate', ['lib/**'])
  const p = mcp(t, fx.upstream, tokenFile, ['--require-lease'])
  const c = await client(p, '2026-07-28')
  const run = (await c.call('task_claim', { task })).structured ?? {}
  const runId = String(run['run_id'])
  const ws = String((await c.call('workspace_create', { repo: 'demo', run_id: runId })).structured?.['id'])
  const lease = String(
    (await c.call('lease_acquire', { repo: 'demo', paths: ['lib/'], run_id: runId })).structured?.['id'],
  )
  const write = (path: string, extra: Record<string, unknown>) =>
    c.call('file_write', { workspace: ws, path, content: 'x\n', ...extra })
  t.notOk((await write('lib/a.ts', { run_id: runId, lease_id: lease })).isError, "covered by the run's lease: written")
  t.match(
    (await write('README.md', { run_id: runId, lease_id: lease })).text,
    /refused by --require-lease: lease "lease-\d+" does not cover 1 of the written paths, e.g. "README.md"/,
  )
  t.match(
    (await write('lib/b.ts', { lease_id: lease })).text,
    /refused by --require-lease: lease "lease-\d+" is held by "agent:alice#run-\d+"; pass the run_id/,
  )
  t.match(
    (await c.call('file_move', { workspace: ws, from: 'lib/a.ts', to: 'docs/a.ts', run_id: runId, lease_id: lease }))
      .text,
    /refused by --require-lease: .*does not cover 1 of the written paths, e\.g\. "docs\/a\.ts"/,
  )
  t.notOk((await c.call('run_release', { run_id: runId, outcome: 'abandoned' })).isError)
  t.match(
    (await write('lib/c.ts', { run_id: runId, lease_id: lease })).text,
    /refused by --require-lease: lease "lease-\d+" is not live/,
    "a released run's lease no longer counts",
  )
  const files = (await c.call('workspace_status', { workspace: ws })).structured?.['changes'] as { path: string }[]
  t.same(
    files.map((f) => f.path),
    ['lib/a.ts'],
    'only the covered write reached the workspace',
  )
  t.equal((await p.close()).code, 0)
  p.assertValid(t)
})

t.test(
  'with 64 calls in flight, cancellations sent later still get through; a line that only mentions them is answered',
  async (t) => {
    // The upstream never answers (close() ends its sockets): every call can only end by its
    // cancellation, however slow this machine is, so nothing here depends on timing.
    const slow = await recorder(() => undefined)
    t.teardown(() => slow.close())
    const p = mcp(t, slow.url, tokenFile, ['--timeout-ms', '60000', '--rate-limit', '1000/s'])
    const ids = Array.from({ length: 70 }, (_, i) => `c${i}`)
    let calls = ''
    for (const id of ids) {
      const msg = {
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: 'log', arguments: { repo: 'demo' }, _meta: modernMeta() },
      }
      p.expect(msg)
      calls += `${JSON.stringify(msg)}\n`
    }
    p.writeRaw(calls)
    // 16 calls running upstream (48 more queued, 6 not yet dispatched)
    await slow.until(() => slow.requests.length === 16)
    // Sent after ag-mcp stopped dispatching: a ping that merely mentions the method, then the cancels.
    p.send({
      jsonrpc: '2.0',
      id: 'p1',
      method: 'ping',
      params: { _meta: modernMeta({ note: 'not a notifications/cancelled' }) },
    })
    for (const id of ids) p.notify('notifications/cancelled', { requestId: id })
    const pong = await p.waitFor('p1', 60_000)
    t.ok(pong.result, 'the ping is answered while every call still waits upstream')
    // A positive barrier: this ping follows every cancel, so its answer comes after whatever they let through.
    t.ok((await p.request('ping', {}, { id: 'p2' })).result, 'a ping after the cancels is answered')
    t.same(
      p.responses.filter((r) => typeof r.id === 'string' && r.id.startsWith('c')).map((r) => r.id),
      [],
      'no cancelled call is answered',
    )
    // A queued call can start in the moment between a running call's cancel and its own.
    t.ok(slow.requests.length < ids.length, `${slow.requests.length} of ${ids.length} calls reached the upstream`)
    t.equal((await p.close()).code, 0)
    t.same(
      p.responses.filter((r) => typeof r.id === 'string' && r.id.startsWith('c')).map((r) => r.id),
      [],
      'not even at exit',
    )
    p.assertValid(t)
  },
)
