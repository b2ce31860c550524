// task_handoff includes the notes of the AGWP run its passport names, from outside the process:
// the real bundled ag-mcp over stdio with the continuity group, against the real ag-server on
// loopback. The notes come through the core (task_handoff's ask `run_notes`, answered by the
// read group's attachment), so: read enabled → the notes, fenced and scrubbed with the rest;
// read disabled → none and no error; the upstream failing → the handoff without them, logged.
import t from 'tap'
import type { Test } from 'tap'
import { startMcp } from '../helpers/mcp-process.ts'
import type { McpProcess } from '../helpers/mcp-process.ts'
import { GIT_ENV, repo } from '../plugins/continuity/_pack.ts'
import { agwpFixture, FAKE_TOKEN, recorder, toCallResult } from './agwp-fixture.ts'

const f = await agwpFixture()
t.teardown(() => f.close())

const taskId = await f.task('Hand over the parser work')
const claim = await f.api('alice', 'POST', `/tasks/${taskId}/claim`, { ttl_s: 600 })
const runId = String(claim.body['run_id'])
for (const body of ['Tried the recursive parser: stack overflow on deep input', `Next: iterative; key ${FAKE_TOKEN}`])
  if ((await f.api('alice', 'POST', `/runs/${runId}/notes`, { body })).status !== 201) throw new Error('note refused')

async function call(p: McpProcess, name: string, args: Record<string, unknown> = {}) {
  return toCallResult(await p.request('tools/call', { name, arguments: args }))
}

async function handoff(t: Test, allow: string, upstream = f.upstream, run = runId) {
  const root = await repo(t)
  const p = startMcp(t, {
    cwd: root,
    env: GIT_ENV,
    args: [
      ...['--upstream', upstream, '--token-file', f.tokenFile('alice'), '--log-level', 'warn'],
      ...['--allow', allow, '--continuity-root', root],
    ],
  })
  const s = await call(p, 'task_start', { title: 'Parser', agwpTask: taskId, agwpRun: run })
  t.notOk(s.isError, s.text)
  return { p, r: await call(p, 'task_handoff') }
}

t.test('read enabled: the run notes are in the handoff, sanitized and scrubbed', async (t) => {
  const { r } = await handoff(t, 'continuity,read')
  t.notOk(r.isError, r.text)
  t.match(r.text, /Linked: agwpTask task-\d+, agwpRun /)
  t.match(r.text, /Run notes:\n- \S+ agent:alice#\S+: Tried the recursive parser: stack overflow on deep input\n- /)
  t.match(r.text, 'Next: iterative; key ')
  t.notMatch(r.text, FAKE_TOKEN, 'a token in a note is scrubbed like any other result')
  t.match(
    r.text,
    /^Task handoff\n[\s\S]*Run notes:[\s\S]*\ntask_handoff: ok; the text above is \d+ bytes of continuity\.handoff data/,
    "the notes are in the handoff's text, the trusted line after it",
  )
})

t.test('read disabled: no notes and no error', async (t) => {
  const { p, r } = await handoff(t, 'continuity')
  t.notOk(r.isError, r.text)
  t.match(r.text, /Linked: agwpTask task-\d+, agwpRun /, 'the link is still shown')
  t.notMatch(r.text, 'Run notes', 'nothing asked of a group that is not enabled')
  t.notMatch(p.stderr, 'attachment', 'nor logged')
})

t.test('the upstream failing: the handoff without notes, the failure logged', async (t) => {
  const broken = await recorder((_req, res) => {
    res.writeHead(500, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ error: { code: 'internal', message: 'boom' } }))
  })
  t.teardown(() => broken.close())
  const { p, r } = await handoff(t, 'continuity,read', broken.url)
  t.notOk(r.isError, r.text)
  t.match(r.text, 'Task handoff')
  t.notMatch(r.text, 'Run notes')
  t.ok(
    broken.requests.some((x) => x.method === 'GET' && x.url.endsWith(`/runs/${runId}`)),
    'the run was asked for',
  )
  t.match(p.stderr, /attachment left out[\s\S]*run_notes/, 'the failure is logged')
})

t.test('a run the server does not know: the handoff without notes', async (t) => {
  const { p, r } = await handoff(t, 'continuity,read', f.upstream, 'run-404')
  t.notOk(r.isError, r.text)
  t.notMatch(r.text, 'Run notes')
  t.match(p.stderr, /attachment left out[\s\S]*run_notes/)
})
