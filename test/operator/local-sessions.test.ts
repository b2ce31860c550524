// Several `ag-mcp --local` sessions on one repository (issue 26, item 2; friction 2: a second
// session failed with "data directory is in use by pid N"). They share one private server, each
// with a principal and a token of its own; the server lives while any session does and exits
// after the last; a session killed mid-call leaves nothing that blocks the others or the next
// one; a server that dies under its sessions is started again where they expect it.
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import {
  call,
  git,
  gone,
  localSession,
  makeRepo,
  manyFiles,
  propose,
  refAppears,
  serverPid,
} from '../helpers/local-mode.ts'
import { REPO_ROOT } from '../helpers/mcp-process.ts'
import type { McpProcess } from '../helpers/mcp-process.ts'

const AG_SERVER = join(REPO_ROOT, 'dist', 'ag-server.mjs')

/** The principal a session acts as (whoami). */
async function principalOf(p: McpProcess): Promise<string> {
  const me = await call(p, 'whoami', {})
  if (me.isError) throw new Error(`whoami: ${me.text}`)
  return me.structured['principal'] as string
}

/** Tokens the private server holds, as `ag-server token list` shows them (it asks the running server). */
function tokens(top: string): { principal: string; label?: string; revoked: boolean }[] {
  const out = execFileSync(process.execPath, [AG_SERVER, 'token', 'list', '--data', join(top, '.ag', 'server')], {
    encoding: 'utf8',
  })
  return (JSON.parse(out) as { tokens: { principal: string; label?: string; revoked: boolean }[] }).tokens
}

/** Resolves with the pid of a server other than `old` once one listens (a bounded wait for the event). */
async function nextServer(top: string, old: number): Promise<number | undefined> {
  for (let i = 0; i < 400; i++) {
    const pid = serverPid(top)
    if (pid !== undefined && pid !== old) return pid
    await new Promise((r) => setTimeout(r, 25))
  }
  return undefined
}

t.test('three sessions side by side, one killed mid-call, the next start clean', async (t) => {
  const home = t.testdir({})
  const top = makeRepo(join(home, 'proj'), { ...manyFiles(50), 'README.md': '# p\n' })
  // Three at the same moment: one of them starts the server, the others find it.
  const sessions = [0, 1, 2].map(() => localSession(t, home, top))
  const principals = await Promise.all(sessions.map(principalOf))
  t.same([...principals].sort(), ['agent:local', 'agent:local-2', 'agent:local-3'], 'each session is its own principal')
  const server = serverPid(top) as number
  t.ok(server, 'one private server runs')
  const ids = await Promise.all(
    sessions.map((p, i) => propose(p, 'proj', { [`docs/s${i}.md`]: `session ${i}\n` }, { title: `from ${i}` })),
  )
  t.equal(new Set(ids).size, 3, 'three proposals')
  for (const id of ids) t.ok(await refAppears(top, `refs/proposals/${id}`), `${id} reached your repository`)
  const live = tokens(top).filter((x) => !x.revoked && x.principal.startsWith('agent:'))
  t.equal(live.length, 3, 'three live agent tokens, one per session')

  // kill -9 in the middle of a call: the request is on its way when the process dies.
  const [a, b, c] = sessions as [McpProcess, McpProcess, McpProcess]
  const victim = principals[2]
  c.send({
    jsonrpc: '2.0',
    id: 99,
    method: 'tools/call',
    params: {
      name: 'workspace_create',
      arguments: { repo: 'proj' },
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': {},
      },
    },
  })
  c.kill()
  await c.exited
  t.equal(serverPid(top), server, 'the server outlives a killed session while others hold it')
  t.notOk((await call(a, 'file_read', { repo: 'proj', path: 'README.md' })).isError, 'the first session still works')
  t.notOk((await call(b, 'proposal_list', { repo: 'proj' })).isError, 'the second too')

  // The next session starts as if nothing happened, takes the free slot, and revokes the dead one's token.
  const d = localSession(t, home, top)
  t.equal(await principalOf(d), victim, "the next session takes the killed one's free slot")
  const after = tokens(top).filter((x) => !x.revoked && x.principal.startsWith('agent:'))
  t.equal(after.length, 3, "the killed session's token was revoked by the next start")
  t.ok(await propose(d, 'proj', { 'docs/d.md': 'd\n' }), 'and it proposes')

  // The server dies under its sessions: it is started again on the same port, and they carry on.
  process.kill(server, 'SIGKILL')
  const second = await nextServer(top, server)
  t.ok(second, 'a session started the next server')
  t.notOk((await call(a, 'whoami', {})).isError, 'the sessions carry on against it')
  t.notOk((await call(d, 'whoami', {})).isError)

  // The last sessions leave while a new one starts: the newcomer gets a working server either way.
  const leaving = Promise.all([a.close(), b.close(), d.close()])
  const e = localSession(t, home, top)
  await leaving
  t.notOk((await call(e, 'whoami', {})).isError, 'a session starting as the last ones leave works')
  const last = serverPid(top) as number
  t.equal((await e.close()).code, 0)
  t.ok(await gone(last), 'no session left: the private server is gone')
  t.equal(git(top, ['status', '--porcelain']), '', 'your work tree never changed')
})
