import { spawn, type ChildProcess } from 'node:child_process'
import net from 'node:net'
import path from 'node:path'
import t, { type Test } from 'tap'
import { adminMint, adminSetPolicy, adminSetRole, repoAdd } from '../../server/src/admin.ts'
import { initDataDir } from '../../server/src/datadir.ts'
import { PgState } from '../../server/src/pg/pg-state.ts'
import type { Scope } from '../../server/src/types.ts'
import { listening, SERVER } from '../helpers/ag-server-cli.ts'
import type { Json } from '../helpers/json.ts'
import { withPostgres } from '../helpers/postgres.ts'
import { makeSourceRepo, sh, tmpdir } from './helpers.ts'

// Several ag-server processes (dist/ag-server.mjs) on one PostgreSQL database and one data
// directory: each repository owned by one instance, requests forwarded to it, an owner's
// failure taken over after its lease, a stopped owner's late ref update refused by the fence.

const LEASE = '1s'

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const s = net.createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo
      s.close(() => resolve(port))
    })
  })

interface Instance {
  id: string
  url: string
  proc: ChildProcess
  exited: Promise<unknown>
}

interface World {
  db: string
  data: string
  pg: PgState
  tokens: Record<string, string>
  start: (id: string, lease?: string) => Promise<Instance>
  api: (
    at: Instance,
    who: string,
    method: string,
    p: string,
    body?: unknown,
    headers?: Record<string, string>,
  ) => Promise<{ status: number; body: Json; text: string }>
  owner: (repo: string) => Promise<{ instance: string; epoch: number } | undefined>
  until: (what: string, f: () => Promise<boolean>) => Promise<void>
}

async function world(t: Test, db: string): Promise<World> {
  const root = tmpdir('multi')
  const src = makeSourceRepo(root, 3)
  const data = path.join(root, 'data')
  await initDataDir(data, { store: db })
  repoAdd(data, 'demo', src)
  const { state: pg } = await PgState.open(db)
  t.teardown(() => pg.close())
  const tokens: Record<string, string> = {}
  const people: Record<string, { principal: string; scopes: Scope[]; role: 'contributor' | 'maintainer' | 'admin' }> = {
    alice: { principal: 'agent:alice', scopes: ['read', 'workspace', 'propose', 'coordinate'], role: 'contributor' },
    mona: {
      principal: 'human:mona',
      scopes: ['read', 'review', 'integrate', 'workspace', 'propose'],
      role: 'maintainer',
    },
    admin: { principal: 'human:root', scopes: ['read', 'admin'], role: 'admin' },
  }
  for (let i = 0; i < 50; i++)
    people[`c${i}`] = { principal: `agent:c${i}`, scopes: ['read', 'coordinate'], role: 'contributor' }
  for (const [name, p] of Object.entries(people)) {
    tokens[name] = (
      await adminMint(pg, { principal: p.principal, scopes: p.scopes, repos: ['demo'], ttl_s: 3600 })
    ).token
    await adminSetRole(pg, 'demo', p.principal, p.role)
  }
  await adminSetPolicy(pg, 'demo', { required_approvals: 0 })

  const start = async (id: string, lease = LEASE): Promise<Instance> => {
    const port = await freePort()
    const proc = spawn(
      process.execPath,
      [
        SERVER,
        'serve',
        '--data',
        data,
        '--store',
        db,
        '--listen',
        `127.0.0.1:${port}`,
        '--instance',
        id,
        '--owner-lease',
        lease,
        '--rate',
        '0',
      ],
      { env: { PATH: process.env['PATH'] ?? '' }, stdio: ['ignore', 'pipe', 'pipe'] },
    )
    let err = ''
    proc.stderr?.on('data', (b: Buffer) => {
      err += b.toString()
    })
    const exited = new Promise((r) => proc.once('exit', r))
    t.teardown(async () => {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill('SIGCONT')
        proc.kill('SIGKILL')
      }
      await exited
    })
    await listening(proc).catch((e: unknown) => Promise.reject(new Error(`${String(e)}\n${err}`)))
    return { id, url: `http://127.0.0.1:${port}/agwp/v1`, proc, exited }
  }

  const api: World['api'] = async (at, who, method, p, body, headers = {}) => {
    const res = await fetch(at.url + p, {
      method,
      headers: {
        authorization: `Bearer ${tokens[who] ?? who}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    })
    const text = await res.text()
    let parsed: unknown = text
    try {
      parsed = JSON.parse(text)
    } catch {
      // not JSON: kept as text
    }
    return { status: res.status, body: parsed as Json, text }
  }

  const owner: World['owner'] = async (repo) => {
    const { rows } = await pg.sql('SELECT instance, epoch FROM repo_owners WHERE repo = $1', [repo])
    return rows[0] ? { instance: rows[0].instance as string, epoch: Number(rows[0].epoch) } : undefined
  }

  /** Wait on an event by polling it; never a fixed sleep standing for "it happened". */
  const until: World['until'] = async (what, f) => {
    for (let n = 0; n < 1500; n++) {
      if (await f()) return
      await new Promise((r) => setTimeout(r, 20))
    }
    throw new Error(`gave up waiting: ${what}`)
  }
  return { db, data, pg, tokens, start, api, owner, until }
}

const repoDir = (w: World): string => path.join(w.data, 'repos', 'demo.git')

await withPostgres(t, async (dbs) => {
  t.test('three instances: one owner, forwarding, claim and integrate races', async (t) => {
    const w = await world(t, dbs.url)
    const all = await Promise.all(['i1', 'i2', 'i3'].map((id) => w.start(id)))
    const at = (n: number): Instance => all[n % 3] as Instance

    // 20 concurrent first requests at 3 instances: one owner, taken once.
    const first = await Promise.all(Array.from({ length: 20 }, (_, n) => w.api(at(n), 'alice', 'GET', '/repos/demo')))
    t.same(
      first.map((r) => r.status),
      first.map(() => 200),
    )
    t.equal(new Set(first.map((r) => r.text)).size, 1, 'every instance answered the same')
    const own = await w.owner('demo')
    t.equal(own?.epoch, 1, 'taken once: epoch 1')
    const { rows } = await w.pg.sql('SELECT count(*)::int AS n FROM repo_owners')
    t.equal(rows[0].n, 1, 'exactly one owner row')
    const ownerAt = all.find((i) => i.id === own?.instance) as Instance
    const others = all.filter((i) => i !== ownerAt)

    // A request at a non-owner is forwarded and answered identically.
    const direct = await w.api(ownerAt, 'alice', 'GET', '/repos/demo/log')
    for (const i of others) {
      const via = await w.api(i, 'alice', 'GET', '/repos/demo/log')
      t.equal(via.status, 200)
      t.equal(via.text, direct.text, `forwarded by ${i.id}: the same body`)
    }
    const ws = await w.api(others[0] as Instance, 'alice', 'POST', '/repos/demo/workspaces', {})
    t.equal(ws.status, 201, 'a write forwarded too')
    t.equal((await w.api(others[1] as Instance, 'alice', 'GET', `/workspaces/${ws.body.id}`)).body.id, ws.body.id)

    // 50-way claim race over 3 instances, 3 rounds: exactly one run each.
    for (let round = 0; round < 3; round++) {
      const task = await w.api(at(round), 'admin', 'POST', '/admin/repos/demo/tasks', { title: `race ${round}` })
      t.equal(task.status, 201)
      const claims = await Promise.all(
        Array.from({ length: 50 }, (_, n) => w.api(at(n), `c${n}`, 'POST', `/tasks/${task.body.id}/claim`, {})),
      )
      const codes = claims.map((r) => r.status)
      t.equal(codes.filter((c) => c === 201).length, 1, `round ${round}: one winner`)
      t.equal(codes.filter((c) => c === 409).length, 49, `round ${round}: 49 conflicts`)
      const runs = await w.pg.sql("SELECT count(*)::int AS n FROM runs WHERE doc->>'task' = $1", [task.body.id])
      t.equal(runs.rows[0].n, 1, `round ${round}: one run recorded`)
    }

    // 50-way lease race over 3 instances, 3 rounds: 50 agents ask for overlapping leases on one
    // path at once (each a glob of its own that matches it); exactly one is granted.
    for (let round = 0; round < 3; round++) {
      const leases = await Promise.all(
        Array.from({ length: 50 }, (_, n) =>
          w.api(at(n), `c${n}`, 'POST', '/repos/demo/leases', {
            paths: [n % 2 === 0 ? `lease-race-${round}/**` : `lease-race-${round}/file.txt`],
          }),
        ),
      )
      const codes = leases.map((r) => r.status)
      t.equal(codes.filter((c) => c === 201).length, 1, `lease round ${round}: one granted`)
      t.equal(codes.filter((c) => c === 409).length, 49, `lease round ${round}: 49 conflicts`)
      const live = await w.pg.sql(
        "SELECT count(*)::int AS n FROM leases WHERE doc->>'released' IS DISTINCT FROM 'true' AND doc->'paths'->>0 LIKE $1",
        [`lease-race-${round}/%`],
      )
      t.equal(live.rows[0].n, 1, `lease round ${round}: one live lease recorded`)
    }

    // Integrate against withdraw, at two instances: exactly one wins.
    for (let round = 0; round < 3; round++) {
      const wsid = (await w.api(at(round), 'alice', 'POST', '/repos/demo/workspaces', {})).body.id
      await w.api(at(round + 1), 'alice', 'PUT', `/workspaces/${wsid}/files`, {
        path: `race-${round}.txt`,
        content: `${round}\n`,
      })
      const pid = (await w.api(at(round + 2), 'alice', 'POST', `/workspaces/${wsid}/proposals`, { title: `r${round}` }))
        .body.id
      // With Idempotency-Keys, as ag-mcp sends them: the fence runs in the keyed request's transaction too.
      const [integ, withdraw] = await Promise.all([
        w.api(at(round), 'mona', 'POST', `/proposals/${pid}/integrate`, {}, { 'idempotency-key': `i-${round}` }),
        w.api(at(round + 1), 'alice', 'POST', `/proposals/${pid}/withdraw`, {}, { 'idempotency-key': `w-${round}` }),
      ])
      t.same(
        [integ.status, withdraw.status].sort(),
        [200, 409],
        `round ${round}: one of integrate (${integ.status}) and withdraw (${withdraw.status}) wins, the other is a conflict`,
      )
      const state = (await w.api(at(round + 2), 'alice', 'GET', `/proposals/${pid}`)).body.state
      t.equal(state, integ.status === 200 ? 'integrated' : 'withdrawn')
      const onMain = sh(repoDir(w), 'ls-tree', '--name-only', 'main').split('\n').includes(`race-${round}.txt`)
      t.equal(onMain, integ.status === 200, 'main holds the file exactly when integrate won')
    }
    t.equal((await w.owner('demo'))?.epoch, 1, 'no takeover while the owner lived')
  })

  t.test('kill -9 of the owner: another instance takes over after the lease, nothing acknowledged lost', async (t) => {
    const w = await world(t, await dbs.fresh())
    const [a, b] = await Promise.all([w.start('k1'), w.start('k2')])
    const A = a as Instance
    const B = b as Instance
    t.equal((await w.api(A, 'alice', 'GET', '/repos/demo')).status, 200)
    t.same(await w.owner('demo'), { instance: 'k1', epoch: 1 })
    // Writes in flight at the owner when it dies: each acknowledged one must survive.
    const proposals: string[] = []
    for (let n = 0; n < 4; n++) {
      const wsid = (await w.api(B, 'alice', 'POST', '/repos/demo/workspaces', {})).body.id
      await w.api(B, 'alice', 'PUT', `/workspaces/${wsid}/files`, { path: `k-${n}.txt`, content: `${n}\n` })
      proposals.push((await w.api(B, 'alice', 'POST', `/workspaces/${wsid}/proposals`, { title: `k${n}` })).body.id)
    }
    // Two acknowledged before the kill, two in flight when it comes.
    const before = []
    for (const pid of proposals.slice(0, 2))
      before.push(await w.api(B, 'mona', 'POST', `/proposals/${pid}/integrate`, {}, { 'idempotency-key': `k-${pid}` }))
    t.same(
      before.map((r) => r.status),
      [200, 200],
      'acknowledged before the kill',
    )
    const integrating = proposals
      .slice(2)
      .map((pid) =>
        w.api(B, 'mona', 'POST', `/proposals/${pid}/integrate`, {}).catch(() => ({ status: 0, body: null, text: '' })),
      )
    // Killed while the integrations, forwarded by B, are under way at A.
    await w.until(
      'an integration in flight reached the owner',
      async () =>
        (
          await w.pg.sql(
            "SELECT 1 FROM proposals WHERE doc->>'state' = 'integrated' AND k = ANY($1) UNION ALL SELECT 1 FROM intents",
            [proposals.slice(2)],
          )
        ).rowCount !== 0,
    )
    A.proc.kill('SIGKILL')
    await A.exited
    const results = [...before, ...(await Promise.all(integrating))]
    const acked = proposals.filter((_, n) => results[n]?.status === 200)
    t.ok(
      results.every((r) => [0, 200, 409, 503].includes(r.status)),
      `each answered 200, 409 (moved) or 503, or cut: ${results.map((r) => r.status)}`,
    )
    // The next requests at B take the repository over once A's lease is out.
    await w.until('B takes demo over', async () => (await w.api(B, 'alice', 'GET', '/repos/demo')).status === 200)
    t.same(await w.owner('demo'), { instance: 'k2', epoch: 2 })
    t.equal((await w.pg.sql('SELECT 1 FROM intents')).rowCount, 0, "the dead owner's intents were settled")
    for (const pid of acked) {
      const p = await w.api(B, 'alice', 'GET', `/proposals/${pid}`)
      t.equal(p.body.state, 'integrated', `acknowledged integration of ${pid} kept`)
    }
    // Every proposal the records call integrated is on main, and only those.
    const files = sh(repoDir(w), 'ls-tree', '--name-only', 'main').split('\n')
    for (const [n, pid] of proposals.entries()) {
      const state = (await w.api(B, 'alice', 'GET', `/proposals/${pid}`)).body.state
      t.equal(
        files.includes(`k-${n}.txt`),
        state === 'integrated',
        `${pid}: ${state}, on main: ${files.includes(`k-${n}.txt`)}`,
      )
    }
    sh(repoDir(w), 'fsck', '--no-progress', '--strict')
    t.pass('git fsck clean')
    // And the new owner serves writes.
    const again = await w.api(B, 'alice', 'POST', '/repos/demo/workspaces', {})
    t.equal(again.status, 201)
  })

  t.test("a stopped owner's late ref update is refused by the fence", async (t) => {
    const w = await world(t, await dbs.fresh())
    // s1 heartbeats rarely (its lease is long), so it still believes it owns demo when it
    // resumes: the fence, not its heartbeat, is what refuses its update. s2 judges s1 by 1s.
    const s1 = await w.start('s1', '10m')
    const s2 = await w.start('s2')
    const wsid = (await w.api(s1, 'alice', 'POST', '/repos/demo/workspaces', {})).body.id
    await w.api(s1, 'alice', 'PUT', `/workspaces/${wsid}/files`, { path: 'late.txt', content: 'late\n' })
    const pid = (await w.api(s1, 'alice', 'POST', `/workspaces/${wsid}/proposals`, { title: 'late' })).body.id
    t.same(await w.owner('demo'), { instance: 's1', epoch: 1 })
    const head = sh(repoDir(w), 'rev-parse', 'main').trim()
    s1.proc.kill('SIGSTOP')
    await w.until('s2 takes demo over', async () => (await w.api(s2, 'alice', 'GET', '/repos/demo')).status === 200)
    t.same(await w.owner('demo'), { instance: 's2', epoch: 2 })
    s1.proc.kill('SIGCONT')
    const late = await w.api(s1, 'mona', 'POST', `/proposals/${pid}/integrate`, {})
    t.equal(late.status, 503, 'refused')
    t.equal(late.body.error.code, 'not_owner')
    t.equal(sh(repoDir(w), 'rev-parse', 'main').trim(), head, 'main did not move')
    t.equal((await w.api(s2, 'alice', 'GET', `/proposals/${pid}`)).body.state, 'open', 'nothing recorded')
    t.equal((await w.pg.sql('SELECT 1 FROM intents')).rowCount, 0, 'not even an intent')
    // Its next request for demo goes to the owner.
    const retried = await w.api(s1, 'mona', 'POST', `/proposals/${pid}/integrate`, {})
    t.equal(retried.status, 200, 'the retry, forwarded to s2, integrates')
    t.not(sh(repoDir(w), 'rev-parse', 'main').trim(), head)
  })
})
