// A host that never reads stderr: answers keep flowing, the log drops lines rather than
// blocking or growing without bound, and says how many once stderr is read again.
import t from 'tap'
import { modernMeta, startMcp } from '../helpers/mcp-process.ts'
import type { McpProcess } from '../helpers/mcp-process.ts'

/** Writes `n` tools/call server_info at once (ids from `first`), each expected to be answered. */
function sendCalls(p: McpProcess, n: number, first: number): void {
  let batch = ''
  for (let i = 0; i < n; i++) {
    const msg = {
      jsonrpc: '2.0',
      id: first + i,
      method: 'tools/call',
      params: { name: 'server_info', arguments: {}, _meta: modernMeta() },
    }
    p.expect(msg)
    batch += `${JSON.stringify(msg)}\n`
  }
  p.writeRaw(batch)
}

t.test('an unread stderr never holds up answers; dropped log lines are counted, none lost silently', async (t) => {
  const p = startMcp(t, { args: ['--rate-limit=1000000/s'] })
  p.child.stderr.pause() // nobody reads: the pipe fills, then ag-mcp's own stderr backlog
  const N = 6000
  sendCalls(p, N, 1000)
  await p.waitForLines(N, 60_000)
  t.equal(
    p.responses.filter((r) => 'result' in r && !(r.result as { isError?: boolean }).isError).length,
    N,
    `all ${N} calls answered while stderr was unread`,
  )

  p.child.stderr.resume()
  // Once stderr drains, the next line logged is preceded by the count of those dropped.
  const notice = /warn (\d+) log line\(s\) dropped: stderr was not being read/
  // Each call's line is either dropped (the backlog is still draining, so more of it arrives) or
  // written: either way stderr brings something new, which is what each round waits for.
  for (let i = 0; i < 50 && !notice.test(p.stderr); i++) {
    const more = new Promise((r) => p.child.stderr.once('data', r))
    await p.request('tools/call', { name: 'server_info', arguments: {} })
    await more
  }
  const m = notice.exec(p.stderr)
  t.ok(m, 'the drop is reported')
  const dropped = Number(m?.[1] ?? 0)
  t.ok(dropped > 0, `${dropped} lines dropped`)
  const { code } = await p.close()
  t.equal(code, 0)
  const logged = p.stderr.split('\n').filter((l) => / info tool call /.test(l)).length
  const calls = p.responses.length
  t.equal(logged + dropped, calls, 'every call was either logged or counted as dropped')
  t.ok(
    p.stderr.split('\n').every((l) => l === '' || /^\d{4}-\d\d-\d\dT\S+Z (debug|info|warn|error) /.test(l)),
    'only whole log lines on stderr',
  )
  p.assertValid(t)
})

t.test('stdin EOF with stderr never read: every answer is delivered and the process still exits', async (t) => {
  const p = startMcp(t, { args: ['--rate-limit=1000000/s'] })
  p.child.stderr.pause()
  const exited = new Promise<number | null>((resolve) => p.child.once('exit', (code) => resolve(code)))
  const N = 4000
  sendCalls(p, N, 1)
  p.child.stdin.end()
  // An exit that never comes fails the test by its timeout.
  const code = await exited
  t.equal(code, 0, 'exit 0')
  await p.waitForLines(N)
  t.equal(p.responses.length, N, 'every call answered before the exit')
  p.assertValid(t)
})

t.test('a drop count still pending at exit is reported before the process ends', async (t) => {
  const p = startMcp(t, { args: ['--rate-limit=1000000/s'] })
  p.child.stderr.pause()
  const N = 6000
  sendCalls(p, N, 1)
  await p.waitForLines(N, 60_000)
  // stderr is read again, and stdin ends at once: no later line would carry the count.
  p.child.stderr.resume()
  const { code } = await p.close()
  t.equal(code, 0)
  const m = /warn (\d+) log line\(s\) dropped: stderr was not being read/.exec(p.stderr)
  t.ok(m, 'the count is said at exit')
  const logged = p.stderr.split('\n').filter((l) => / info tool call /.test(l)).length
  t.equal(logged + Number(m?.[1] ?? 0), N, 'every call logged or counted')
})
