// A claim whose connection dies is retried safely (issue 16): the real ag-mcp, through a
// loopback proxy in front of the real ag-server, claims a task; the proxy kills the connection
// once, either after the server applied the claim (the answer is lost) or before the request
// reached it. ag-mcp repeats the request with the same Idempotency-Key, the agent gets its run,
// and the server holds exactly one run for the task.
import type http from 'node:http'
import t from 'tap'
import { journalStore } from '../server/helpers.ts'
import { forwardingProxy } from '../helpers/recording-server.ts'
import { agwpFixture, client, mcp } from './agwp-fixture.ts'

const fx = await agwpFixture()
t.teardown(fx.close)

const CASES = {
  'the answer is lost after the server applied the claim': 'after',
  'the request is lost before the server saw it': 'before',
} as const

for (const [name, when] of Object.entries(CASES)) {
  t.test(name, async (t) => {
    const task = await fx.task(`retry ${when}`)
    let cut = false
    /** Status and Idempotent-Replayed of each answer the server gave to a claim. */
    const answers: string[] = []
    const isClaim = (req: http.IncomingMessage): boolean =>
      req.method === 'POST' && req.url?.endsWith('/claim') === true
    const proxy = await forwardingProxy(fx.upstream, {
      request: (req) => {
        if (!isClaim(req) || cut || when !== 'before') return false
        cut = true
        req.socket.destroy()
        return true
      },
      answer: (req, _res, answer) => {
        if (!isClaim(req)) return false
        answers.push(`${answer.statusCode} ${answer.headers['idempotent-replayed'] ?? '-'}`)
        if (cut) return false
        cut = true
        // Read the whole answer (the claim is applied and journaled), then hang up without it.
        answer.resume()
        answer.on('end', () => req.socket.destroy())
        return true
      },
    })
    t.teardown(() => proxy.close())

    const p = mcp(t, proxy.url, fx.tokenFile('alice'))
    const c = await client(p, '2026-07-28')
    const r = await c.call('task_claim', { repo: 'demo', task })
    t.notOk(r.isError, `task_claim succeeds: ${r.text.slice(0, 200)}`)
    const runId = r.structured?.['run_id']
    t.match(runId, /^run-\d+$/, 'the agent gets its run')

    const claims = proxy.requests.filter((s) => s.method === 'POST' && s.url.endsWith(`/tasks/${task}/claim`))
    t.equal(claims.length, 2, 'the claim was sent twice')
    const keys = claims.map((s) => s.headers['idempotency-key'])
    t.match(keys[0], /^[0-9a-f-]{36}$/)
    t.equal(keys[1], keys[0], 'with the same Idempotency-Key')
    t.same(answers, when === 'after' ? ['201 -', '201 true'] : ['201 -'], 'the repeat was answered from the key')

    const runs = journalStore(fx.server.ctx)
      .all('runs')
      .filter((x) => x.task === task)
    t.same(
      runs.map((x) => x.run_id),
      [runId],
      'the server holds exactly one run for the task, the one the agent got',
    )
    const seen = await fx.api('alice', 'GET', `/tasks/${task}`)
    t.match(seen.body, { state: 'claimed', run_id: runId })
    p.assertValid(t)
    await p.close()
  })
}
