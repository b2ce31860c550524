#!/usr/bin/env node
// Many agents at once (issue 16): one ag-server and N ag-mcp processes (the bundled
// dist/ag-mcp.mjs, each spoken to over stdio, each with its own principal and token), every one
// running a whole agent session at the same moment:
//   task_claim → file_read → workspace_create → lease_acquire → file_write ×3 →
//   workspace_status (diff) → propose → run_release (lease_release for an agent without a run)
// Half of the agents race for a few shared tasks (5 per task), the other half each claim their own.
// A benchmark, not a test: it prints per-tool p50/p99, throughput, memory of the server and of
// the ag-mcp processes, connection errors, and a verification read back from the server as the
// operator: every acknowledged proposal exists, is open, holds exactly the agent's three files
// with the written content; every task has exactly one run; no lease is left live; git fsck is
// clean. It prints PASS/FAIL per round and exits non-zero only when a step breaks (set-up, a
// process dying, no answer).
//
//   node bench/scale.bench.mjs            N = 10, 50, 100 (one fresh server per round)
//   node bench/scale.bench.mjs 100        one round with N = 100 (any number of N values)
//   npm run bench -- scale -- 100    the same through `npm run bench` (or BENCH_SCALE_N=10,50)
//   node bench/scale.bench.mjs 100 --stores journal,pg1,pg3
//                                    each round run on several store set-ups, one after the other
//                                    (or BENCH_SCALE_STORES=journal,pg1,pg3; default: journal):
//     journal  one ag-server on its embedded journal (today's default)
//     pg1      one ag-server on PostgreSQL
//     pg3      three ag-server instances on one PostgreSQL and one data directory; the agents
//              spread round-robin over the three URLs, so most requests are forwarded to the
//              repository's owner
//   The PostgreSQL set-ups get a fresh database each, on AG_TEST_POSTGRES if set, else on a
//   private throwaway cluster (test/setup/postgres.mjs, the PostgreSQL binaries on the machine).
//   After each round a side-by-side table: errors and lost or duplicated work (both must be 0),
//   p50/p99 per tool, sessions/s and tool calls/s with their ratio to journal, and CPU ms per
//   tool call summed over every ag-server process (and, apart, PostgreSQL's): core-milliseconds,
//   so on a machine with few cores three instances measure the overhead, not a gain.
import { agwpWorld } from './agwp-world.mjs'
import { cpuMs, endAndWait, gitEnv, run, scratch, treeCpu, treeCpuMsSince } from './proc.mjs'
import { freePort, startPostgres } from '../test/setup/postgres.mjs'
import { spawn } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs'
import http from 'node:http'
import { cpus, loadavg, release, totalmem } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const AG_MCP = join(root, 'dist', 'ag-mcp.mjs')
const AG_SERVER = join(root, 'dist', 'ag-server.mjs')
const fromArgs = process.argv.slice(2).filter((a) => /^\d+$/.test(a))
const fromEnv = (process.env['BENCH_SCALE_N'] ?? '').split(',').filter((a) => /^\d+$/.test(a.trim()))
const ROUNDS = (fromArgs.length > 0 ? fromArgs : fromEnv.length > 0 ? fromEnv : ['10', '50', '100']).map((n) =>
  Math.min(500, Math.max(2, Number(n))),
)
/** The store set-ups a round can run on: how many ag-server instances, on PostgreSQL or not. */
const SETUPS = {
  journal: { instances: 1, postgres: false },
  pg1: { instances: 1, postgres: true },
  pg3: { instances: 3, postgres: true },
}
const storesArg = (() => {
  const argv = process.argv.slice(2)
  const i = argv.findIndex((a) => a === '--stores' || a.startsWith('--stores='))
  if (i < 0) return process.env['BENCH_SCALE_STORES'] || 'journal'
  const a = /** @type {string} */ (argv[i])
  return a.startsWith('--stores=') ? a.slice('--stores='.length) : (argv[i + 1] ?? '')
})()
const STORES = storesArg.split(',').map((x) => x.trim())
for (const s of STORES)
  if (!Object.hasOwn(SETUPS, s) || STORES.indexOf(s) !== STORES.lastIndexOf(s)) {
    console.error(
      `scale.bench: --stores: '${s}' is ${Object.hasOwn(SETUPS, s) ? 'named twice' : 'unknown'}; choose from ${Object.keys(SETUPS).join(', ')}`,
    )
    process.exit(2)
  }
const RACERS_PER_TASK = 5
const READY_TIMEOUT_MS = 120_000
const CALL_TIMEOUT_MS = 120_000
const MODERN = '2026-07-28'
const META = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} }
const SESSION_TOOLS = [
  'whoami',
  'task_claim',
  'file_read',
  'workspace_create',
  'lease_acquire',
  'file_write',
  'workspace_status',
  'propose',
  'run_release',
  'lease_release',
]

for (const f of [AG_MCP, AG_SERVER]) {
  if (!existsSync(f)) {
    console.error(`scale.bench: ${f} is missing; run \`npm run build\` first (npm run bench does)`)
    process.exit(1)
  }
}

const { tmp, children } = scratch('ag-mcp-scale-bench-')

const now = () => performance.now()

function makeRepo() {
  const src = join(tmp, 'src')
  mkdirSync(join(src, 'src'), { recursive: true })
  run('git', ['init', '-q', '-b', 'main', src])
  writeFileSync(join(src, 'README.md'), '# scale\n\nA repository many agents work on at once.\n')
  writeFileSync(join(src, 'src', 'main.txt'), 'main\n')
  run('git', ['add', '.'], src)
  run('git', ['commit', '-qm', 'initial'], src)
  return src
}

/** Peak and current resident memory of a process in MiB (/proc/<pid>/status). */
function memMiB(pid) {
  try {
    const s = readFileSync(`/proc/${pid}/status`, 'utf8')
    const kb = (k) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(s)?.[1] ?? NaN)
    return { peak: kb('VmHWM') / 1024, rss: kb('VmRSS') / 1024 }
  } catch {
    return { peak: NaN, rss: NaN }
  }
}

// ---------------------------------------------------------------------------------------------
// ag-server, and the operator's HTTP client (set-up and verification)

/**
 * One ag-server on the data directory: on its journal, or one instance on a PostgreSQL store
 * (on a port chosen here, so that it can advertise it to the other instances).
 * @param {string} data @param {{ store: string, instance: string }} [pg]
 */
async function startServer(data, pg) {
  const listen = pg ? ['--listen', `127.0.0.1:${await freePort()}`] : ['--listen', '127.0.0.1:0']
  const instance = pg ? ['--store', pg.store, '--instance', pg.instance, '--advertise', `http://${listen[1]}`] : []
  const child = spawn(process.execPath, [AG_SERVER, 'serve', '--data', data, ...listen, ...instance], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: gitEnv,
  })
  children.push(child)
  const server = { child, pid: /** @type {number} */ (child.pid), stderr: '', url: '' }
  child.stderr.setEncoding('utf8').on('data', (s) => {
    if (server.stderr.length < 20_000) server.stderr += s
  })
  return new Promise((resolve, reject) => {
    let out = ''
    const timer = setTimeout(
      () => reject(new Error(`ag-server did not listen: ${server.stderr.slice(0, 500)}`)),
      30_000,
    )
    child.stdout.setEncoding('utf8').on('data', (d) => {
      out += d
      const m = /listening on (http:\/\/\S+\/agwp\/v1)/.exec(out)
      if (m?.[1]) {
        clearTimeout(timer)
        server.url = m[1]
        resolve(server)
      }
    })
    child.on('exit', (code, signal) => {
      clearTimeout(timer)
      reject(new Error(`ag-server exited (${signal ?? code}): ${server.stderr.slice(0, 500)}`))
    })
  })
}

/**
 * The operator's request; a 429 (the per-token rate limit) is waited out and repeated.
 * @param {http.Agent} agent @param {string} base @param {string} token @param {string} method @param {string} path @param {unknown} [body]
 * @returns {Promise<{ status: number, body: any }>}
 */
async function api(agent, base, token, method, path, body) {
  for (;;) {
    const r = await api1(agent, base, token, method, path, body)
    if (r.status !== 429) return r
    await new Promise((ok) => setTimeout(ok, 1000 * Number(r.body?.error?.details?.retry_after_s ?? 1)))
  }
}

/**
 * @param {http.Agent} agent @param {string} base @param {string} token @param {string} method @param {string} path @param {unknown} [body]
 * @returns {Promise<{ status: number, body: any }>}
 */
function api1(agent, base, token, method, path, body) {
  return new Promise((resolve, reject) => {
    const text = body === undefined ? undefined : JSON.stringify(body)
    const req = http.request(
      base + path,
      {
        method,
        agent,
        headers: {
          authorization: `Bearer ${token}`,
          accept: 'application/json',
          ...(text !== undefined
            ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }
            : {}),
        },
      },
      (res) => {
        const chunks = []
        res.on('data', (c) => chunks.push(c))
        res.on('end', () => {
          try {
            resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) })
          } catch (e) {
            reject(e)
          }
        })
      },
    )
    req.on('error', reject)
    req.end(text)
  })
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL for the pg set-ups: one server for the whole run, a fresh database per set-up

/** @type {Promise<{ url: string, postmaster: number | undefined, stop: () => Promise<void> }> | undefined} */
let postgres

/** AG_TEST_POSTGRES, or a private cluster started on first use (stopped at the end of the run). */
function postgresServer() {
  postgres ??= (async () => {
    const given = process.env['AG_TEST_POSTGRES']
    if (given) return { url: given, postmaster: undefined, stop: async () => undefined }
    const pg = await startPostgres().catch((e) => {
      throw new Error(
        `the pg set-ups need PostgreSQL: ${e instanceof Error ? e.message : String(e)}; install its binaries or set AG_TEST_POSTGRES=postgres://USER@HOST:PORT/DB (see docs/scale-out.md)`,
      )
    })
    // postmaster.pid's first line: its CPU, and its backends', are measured beside ag-server's
    const postmaster = Number(readFileSync(join(pg.dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0])
    return { url: pg.url, postmaster, stop: pg.stop }
  })()
  return postgres
}

/**
 * An empty database for one set-up, how to drop it, and who owns each repository in it.
 * @param {string} name
 */
async function freshDatabase(name) {
  const server = await postgresServer()
  // Loaded only for a pg set-up: a journal-only run never needs the client.
  const { default: pg } = await import('pg')
  const sql = async (/** @type {string} */ url, /** @type {string} */ text) => {
    const c = new pg.Client({ connectionString: url })
    await c.connect()
    try {
      return (await c.query(text)).rows
    } finally {
      await c.end()
    }
  }
  const db = `ag_scale_${name}_${process.pid}`
  await sql(server.url, `CREATE DATABASE ${db}`)
  const u = new URL(server.url)
  u.pathname = `/${db}`
  return {
    url: u.href,
    drop: () => sql(server.url, `DROP DATABASE IF EXISTS ${db} WITH (FORCE)`),
    /** @returns {Promise<{ repo: string, instance: string, epoch: string }[]>} */
    owners: () => sql(u.href, 'SELECT repo, instance, epoch FROM repo_owners ORDER BY repo'),
  }
}

// ---------------------------------------------------------------------------------------------
// One ag-mcp process over stdio, several requests may be in flight (answers matched by id)

class Agent {
  /** @param {number} n @param {string} origin @param {string} tokenFile */
  constructor(n, origin, tokenFile) {
    this.n = n
    this.name = `a${n}`
    this.proc = spawn(
      process.execPath,
      [AG_MCP, '--upstream', origin, '--token-file', tokenFile, '--repo', 'demo', '--log-level', 'warn'],
      { cwd: root, stdio: ['pipe', 'pipe', 'pipe'], env: { PATH: process.env['PATH'] ?? '', HOME: tmp } },
    )
    children.push(this.proc)
    this.pid = /** @type {number} */ (this.proc.pid)
    this.stderr = ''
    this.rest = ''
    this.nextId = 1
    /** @type {Map<number, (msg: any) => void>} */
    this.waiting = new Map()
    /** @type {string | undefined} */
    this.died = undefined
    this.exited = new Promise((resolve) =>
      this.proc.on('exit', (code, signal) => {
        this.died = `ag-mcp ${this.name} exited (${signal ?? code})`
        for (const w of this.waiting.values()) w({ error: { code: -1, message: this.died } })
        this.waiting.clear()
        resolve({ code, signal })
      }),
    )
    this.proc.stdin.on('error', () => {})
    this.proc.stderr.setEncoding('utf8').on('data', (s) => {
      if (this.stderr.length < 8000) this.stderr += s
    })
    this.proc.stdout.setEncoding('utf8').on('data', (s) => {
      const lines = (this.rest + s).split('\n')
      this.rest = lines.pop() ?? ''
      for (const line of lines) {
        if (line === '') continue
        const msg = JSON.parse(line)
        const w = this.waiting.get(msg.id)
        if (w) {
          this.waiting.delete(msg.id)
          w(msg)
        }
      }
    })
  }

  /** @param {string} method @param {Record<string, unknown>} params @returns {Promise<any>} */
  request(method, params) {
    const id = this.nextId++
    return new Promise((resolve, reject) => {
      if (this.died) return reject(new Error(this.died))
      const timer = setTimeout(
        () => reject(new Error(`${this.name}: no answer to ${method} within ${CALL_TIMEOUT_MS} ms`)),
        CALL_TIMEOUT_MS,
      )
      this.waiting.set(id, (msg) => {
        clearTimeout(timer)
        resolve(msg)
      })
      this.proc.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta: META } })}\n`)
    })
  }

  close() {
    return endAndWait(this.proc, this.exited)
  }
}

/**
 * What a tools/call answered: ok with its structured content, or the error code the trusted
 * summary names ("failed: the upstream answered 409 conflict. …", "… plugin reported timeout. …").
 * @param {any} msg
 */
function outcome(msg) {
  if (msg.error) return { ok: false, code: `jsonrpc ${msg.error.code}`, text: String(msg.error.message) }
  const r = msg.result ?? {}
  const text = (r.content ?? []).map((c) => c.text).join('\n')
  if (r.isError !== true) return { ok: true, structured: r.structuredContent ?? {}, text }
  // "the upstream answered 409 conflict." or, for what never reached an answer, "the agwp plugin reported timeout."
  const m = /(?:the upstream answered(?: (\d{3}))?|the [a-z]+ plugin reported) ([a-z_]+)\./.exec(text)
  return { ok: false, code: m ? `${m[1] ? `${m[1]} ` : ''}${m[2]}` : 'refused', text: text.slice(0, 400) }
}

const CONNECTION_CODES = new Set(['unreachable', 'bad_response'])

// ---------------------------------------------------------------------------------------------
// One agent session

/**
 * @param {Agent} a @param {string} task @param {(tool: string, ms: number, o: any) => void} record
 */
async function session(a, task, record) {
  const call = async (name, args) => {
    const t0 = now()
    const msg = await a.request('tools/call', { name, arguments: args })
    const o = outcome(msg)
    record(name, now() - t0, o)
    return o
  }
  const repo = 'demo'
  const out = {
    name: a.name,
    task,
    runId: /** @type {string | undefined} */ (undefined),
    proposal: /** @type {string | undefined} */ (undefined),
    files: /** @type {Record<string,string>} */ ({}),
  }
  const claim = await call('task_claim', { repo, task, ttl_s: 600 })
  const runId = claim.ok ? String(claim.structured.run_id) : undefined
  out.runId = runId
  const inRun = runId ? { run_id: runId } : {}
  await call('file_read', { repo, path: 'README.md' })
  const ws = await call('workspace_create', { repo, ...inRun })
  if (!ws.ok) return out
  const workspace = String(ws.structured.id)
  const lease = await call('lease_acquire', { repo, paths: [`agents/${a.name}/**`], ttl_s: 600, ...inRun })
  const leaseId = lease.ok ? String(lease.structured.id) : undefined
  for (const k of [1, 2, 3]) {
    const path = `agents/${a.name}/${k}.txt`
    const content = `agent ${a.name}, file ${k}, task ${task}${runId ? `, ${runId}` : ''}\n${'x'.repeat(64 * k)}\n`
    const w = await call('file_write', {
      repo,
      workspace,
      path,
      content,
      ...inRun,
      ...(leaseId ? { lease_id: leaseId } : {}),
    })
    if (w.ok) out.files[path] = content
  }
  await call('workspace_status', { repo, workspace, diff: true })
  const p = await call('propose', {
    repo,
    workspace,
    title: `work of ${a.name}`,
    description: `three files by ${a.name}`,
    reasoning: 'the bench asks for three files',
    ...(runId ? { task } : {}),
    ...inRun,
  })
  if (p.ok) out.proposal = String(p.structured.id)
  if (runId) await call('run_release', { repo, run_id: runId, outcome: 'done', note: `proposal ${out.proposal}` })
  else if (leaseId) await call('lease_release', { repo, lease_id: leaseId })
  return out
}

// ---------------------------------------------------------------------------------------------
// Statistics

/** @param {number[]} xs @param {number} q */
function quantile(xs, q) {
  const s = [...xs].sort((a, b) => a - b)
  if (s.length === 0) return NaN
  return /** @type {number} */ (s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))])
}
const fmt = (x, d = 0) => (Number.isFinite(x) ? x.toFixed(d) : '-')
const pad = (s, n) => String(s).padStart(n)

// ---------------------------------------------------------------------------------------------
// One round on one set-up

/**
 * @param {number} N @param {string} src @param {keyof typeof SETUPS} name
 */
async function measure(N, src, name) {
  const t0 = now()
  const setup = SETUPS[name]
  const data = join(tmp, `data-${name}-${N}`)
  const db = setup.postgres ? await freshDatabase(`${name}_${N}`) : undefined
  agwpWorld({ agServer: AG_SERVER, data, repos: { demo: src }, ...(db ? { initFlags: ['--store', db.url] } : {}) })
  const servers = []
  for (let i = 1; i <= setup.instances; i++)
    servers.push(await startServer(data, db ? { store: db.url, instance: `i${i}` } : undefined))
  // The operator speaks to the first instance: the repository's first request makes it the owner.
  const server = /** @type {any} */ (servers[0])
  const origins = servers.map((s) => new URL(s.url).origin)
  const adminToken = readFileSync(join(data, 'admin.token'), 'utf8').trim()
  const operatorAgent = new http.Agent({ keepAlive: true, maxSockets: 8 })
  const op = (method, path, body) => api(operatorAgent, server.url, adminToken, method, path, body)
  const must = async (method, path, body) => {
    const r = await op(method, path, body)
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`)
    return r.body
  }
  await must('PUT', '/admin/repos/demo/roles', { principal: 'human:admin', role: 'admin' })

  // Half the agents race: RACERS_PER_TASK for each shared task. The others have one task each.
  const racers = Math.floor(N / 2)
  const shared = Math.max(1, Math.ceil(racers / RACERS_PER_TASK))
  const sharedTasks = []
  for (let i = 0; i < shared; i++)
    sharedTasks.push((await must('POST', '/admin/repos/demo/tasks', { title: `shared ${i}` })).id)
  /** @type {{ n: number, task: string, tokenFile: string }[]} */
  const plan = []
  for (let n = 1; n <= N; n++) {
    const principal = `agent:a${n}`
    const minted = await must('POST', '/admin/tokens', {
      principal,
      scopes: ['read', 'workspace', 'propose', 'coordinate'],
      repos: ['demo'],
      ttl_s: 3600,
    })
    await must('PUT', '/admin/repos/demo/roles', { principal, role: 'contributor' })
    const tokenFile = join(tmp, `a${n}-${N}.token`)
    writeFileSync(tokenFile, `${minted.token}\n`, { mode: 0o600 })
    const task =
      n <= racers
        ? /** @type {string} */ (sharedTasks[(n - 1) % shared])
        : (await must('POST', '/admin/repos/demo/tasks', { title: `own ${n}` })).id
    plan.push({ n, task, tokenFile })
  }

  const tSpawn = now()
  // Round-robin over the instances: with three, two agents in three reach one that forwards.
  const agents = plan.map(
    (p) => new Agent(p.n, /** @type {string} */ (origins[(p.n - 1) % origins.length]), p.tokenFile),
  )
  const ready = await Promise.all(
    agents.map((a) =>
      Promise.race([
        a.request('server/discover', {}),
        new Promise((_, reject) => setTimeout(() => reject(new Error(`${a.name} not ready`)), READY_TIMEOUT_MS)),
      ]),
    ),
  )
  for (const [i, r] of ready.entries())
    if (!r.result) throw new Error(`${agents[i]?.name} server/discover: ${JSON.stringify(r).slice(0, 300)}`)
  const spawnMs = now() - tSpawn
  console.log(
    `N=${N} ${name} (${setup.instances} ag-server${setup.instances > 1 ? ' instances' : ''} on ${setup.postgres ? 'PostgreSQL' : 'the journal'}): set-up ${fmt(now() - t0)} ms (${N} principals and tokens, ${shared} shared tasks raced by ${racers} agents, ${N - racers} own tasks); ${N} ag-mcp ready in ${fmt(spawnMs)} ms; load average ${fmt(loadavg()[0] ?? NaN, 1)}`,
  )

  /** @type {Map<string, number[]>} */
  const times = new Map()
  /** @type {Map<string, Map<string, number>>} */
  const errors = new Map()
  let connectionErrors = 0
  let timeouts = 0
  /** @type {string[]} */
  const connectionSamples = []
  /** @type {string[]} */
  const otherSamples = []
  const record = (tool, ms, o) => {
    if (!times.has(tool)) times.set(tool, [])
    times.get(tool)?.push(ms)
    if (o.ok) return
    const e = errors.get(tool) ?? new Map()
    e.set(o.code, (e.get(o.code) ?? 0) + 1)
    errors.set(tool, e)
    const code = String(o.code).replace(/^\d+ /, '')
    if (code === 'timeout') timeouts++
    else if (CONNECTION_CODES.has(code) || /^5\d\d /.test(String(o.code)) || String(o.code).startsWith('jsonrpc')) {
      connectionErrors++
      if (connectionSamples.length < 3) connectionSamples.push(`${tool}: ${o.text.replace(/\s+/g, ' ').slice(0, 240)}`)
    } else if (!(tool === 'task_claim' && code === 'conflict') && otherSamples.length < 3)
      // a refusal the sessions should not meet: its text says why (a code the summary names, or not)
      otherSamples.push(`${tool}: ${o.text.replace(/\s+/g, ' ').slice(0, 240)}`)
  }

  // Every session opens with whoami, as an agent's does: it loads ag-mcp's upstream plugin and
  // opens its pooled connection, which then sits idle while the slowest agents catch up. Then
  // all sessions start at the same moment.
  const tWarm = now()
  const warm = await Promise.all(
    agents.map(async (a) => {
      const t0 = now()
      const o = outcome(await a.request('tools/call', { name: 'whoami', arguments: {} }))
      record('whoami', now() - t0, o)
      return o
    }),
  )
  if (!warm.every((o) => o.ok)) console.log(`  whoami failed for ${warm.filter((o) => !o.ok).length} agents`)
  const warmMs = now() - tWarm

  const serversCpu = () => servers.reduce((s, x) => s + cpuMs(x.pid), 0)
  const serverCpu0 = serversCpu()
  const postmaster = db ? (await postgresServer()).postmaster : undefined
  const pgCpu0 = postmaster === undefined ? undefined : treeCpu(postmaster)
  const agentCpu0 = agents.reduce((s, a) => s + cpuMs(a.pid), 0)
  const tRun = now()
  const outs = await Promise.all(agents.map((a, i) => session(a, /** @type {any} */ (plan[i]).task, record)))
  const wallMs = now() - tRun
  const serverCpu = serversCpu() - serverCpu0
  const pgCpu = pgCpu0 === undefined ? NaN : treeCpuMsSince(pgCpu0)
  const agentCpu = agents.reduce((s, a) => s + cpuMs(a.pid), 0) - agentCpu0
  const serverPeak = servers.reduce((s, x) => s + memMiB(x.pid).peak, 0)
  const agentMem = agents.map((a) => memMiB(a.pid))
  await Promise.all(agents.map((a) => a.close()))

  // Verification, as the operator, from the server's own answers.
  const problems = []
  const acknowledged = outs.filter((o) => o.proposal !== undefined)
  for (const o of acknowledged) {
    const p = await op('GET', `/proposals/${encodeURIComponent(String(o.proposal))}`)
    if (p.status !== 200) {
      problems.push(`${o.name}: acknowledged proposal ${o.proposal} reads ${p.status}`)
      continue
    }
    if (p.body.state !== 'open') problems.push(`${o.name}: proposal ${o.proposal} is ${p.body.state}`)
    if (p.body.author_principal !== undefined && p.body.author_principal !== `agent:${o.name}`)
      problems.push(`${o.name}: proposal ${o.proposal} is by ${p.body.author_principal}`)
    const d = await op('GET', `/proposals/${encodeURIComponent(String(o.proposal))}/diff`)
    const paths = (d.body.files ?? []).map((f) => f.path).sort()
    const want = Object.keys(o.files).sort()
    if (JSON.stringify(paths) !== JSON.stringify(want))
      problems.push(
        `${o.name}: proposal ${o.proposal} changes [${paths.join(', ')}], the agent wrote [${want.join(', ')}]`,
      )
    for (const [path, content] of Object.entries(o.files)) {
      const f = await op(
        'GET',
        `/repos/demo/file?ref=${encodeURIComponent(p.body.head)}&path=${encodeURIComponent(path)}`,
      )
      const got = f.body.encoding === 'base64' ? Buffer.from(f.body.content, 'base64').toString('utf8') : f.body.content
      if (got !== content)
        problems.push(`${o.name}: ${path} at ${String(p.body.head).slice(0, 12)} is not what was written`)
    }
  }
  /** @type {Map<string, number>} */
  const proposalsPerAgent = new Map()
  let listed = 0
  for (let cursor; ; ) {
    const l = await op('GET', `/repos/demo/proposals?limit=500${cursor ? `&cursor=${cursor}` : ''}`)
    for (const p of l.body.proposals ?? []) {
      listed++
      // Each agent proposes once, under its own title ("work of aN").
      proposalsPerAgent.set(p.title, (proposalsPerAgent.get(p.title) ?? 0) + 1)
    }
    if (!l.body.next_cursor) break
    cursor = l.body.next_cursor
  }
  if (listed !== acknowledged.length)
    problems.push(`${listed} proposals on the server, ${acknowledged.length} acknowledged to agents`)
  for (const [t, c] of proposalsPerAgent) if (c > 1) problems.push(`${c} proposals titled "${t}"`)
  // Runs are numbered run-1, run-2, …, a number taken per claim at most (PostgreSQL takes it
  // even for a claim that then loses, so there are gaps): read run-1 to run-N and count per task.
  /** @type {Map<string, string[]>} */
  const runsPerTask = new Map()
  for (let k = 1; k <= N; k++) {
    const r = await op('GET', `/runs/run-${k}`)
    if (r.status === 404) continue
    runsPerTask.set(r.body.task, [...(runsPerTask.get(r.body.task) ?? []), `${r.body.run_id} (${r.body.principal})`])
  }
  const allTasks = new Set(plan.map((p) => p.task))
  for (const t of allTasks) {
    const runs = runsPerTask.get(t) ?? []
    if (runs.length !== 1) problems.push(`task ${t} has ${runs.length} runs: ${runs.join(', ') || 'none'}`)
  }
  const winners = outs.filter((o) => o.runId !== undefined).length
  if (winners !== allTasks.size) problems.push(`${winners} agents got a run for ${allTasks.size} tasks`)
  const live = await op('GET', '/repos/demo/leases?limit=1000')
  if ((live.body.leases ?? []).length !== 0) problems.push(`${live.body.leases.length} leases still live after release`)
  let fsck = 'clean'
  try {
    run('git', ['--git-dir', join(data, 'repos', 'demo.git'), 'fsck', '--no-progress'])
  } catch (e) {
    fsck = String(/** @type {Error} */ (e).message).slice(0, 200)
    problems.push(`git fsck: ${fsck}`)
  }

  // Read before the instances stop: a graceful stop hands the repositories back. An epoch above 1
  // would say the repository changed owner during the round.
  const owners = servers.length > 1 && db ? await db.owners() : []
  for (const x of servers) x.child.kill('SIGTERM')
  await Promise.all(servers.map((x) => (x.child.exitCode === null ? new Promise((r) => x.child.once('exit', r)) : 0)))
  operatorAgent.destroy()
  await db?.drop()

  // Report
  const calls = [...times.entries()].reduce((s, [tool, x]) => s + (tool === 'whoami' ? 0 : x.length), 0)
  console.log(
    `  ${'tool'.padEnd(17)}${pad('calls', 7)}${pad('errors', 8)}${pad('p50 ms', 9)}${pad('p99 ms', 9)}${pad('max ms', 9)}`,
  )
  for (const tool of SESSION_TOOLS) {
    const xs = times.get(tool)
    if (!xs) continue
    const e = errors.get(tool)
    const errs = e ? [...e.values()].reduce((s, x) => s + x, 0) : 0
    const why = e ? `  (${[...e].map(([c, k]) => `${k}× ${c}`).join(', ')})` : ''
    console.log(
      `  ${tool.padEnd(17)}${pad(xs.length, 7)}${pad(errs, 8)}${pad(fmt(quantile(xs, 0.5)), 9)}${pad(fmt(quantile(xs, 0.99)), 9)}${pad(fmt(Math.max(...xs)), 9)}${why}`,
    )
  }
  const mcpPeaks = agentMem.map((m) => m.peak).filter(Number.isFinite)
  console.log(
    `  warm-up: ${N} whoami (cold plugin load, first connection) in ${fmt(warmMs)} ms, then all sessions at once`,
  )
  console.log(
    `  throughput: ${calls} session tool calls in ${fmt(wallMs)} ms = ${fmt(calls / (wallMs / 1000), 1)} calls/s; CPU: ag-server${servers.length > 1 ? ` (${servers.length} instances)` : ''} ${fmt(serverCpu)} ms${db ? `, PostgreSQL ${fmt(pgCpu)} ms` : ''}, ag-mcp all ${fmt(agentCpu)} ms`,
  )
  console.log(
    `  memory: ag-server peak RSS ${fmt(serverPeak, 1)} MiB${servers.length > 1 ? ' (instances summed)' : ''}; ag-mcp peak RSS p50 ${fmt(quantile(mcpPeaks, 0.5), 1)} MiB, max ${fmt(Math.max(...mcpPeaks), 1)} MiB, all ${N} together ${fmt(
      mcpPeaks.reduce((s, x) => s + x, 0),
      0,
    )} MiB`,
  )
  console.log(
    `  connection errors (reset, refused, bad answer, 5xx): ${connectionErrors}; deadline timeouts: ${timeouts}`,
  )
  for (const s of connectionSamples) console.log(`    e.g. ${s}`)
  if (otherSamples.length > 0) console.log('  other refusals (not a lost claim race):')
  for (const s of otherSamples) console.log(`    e.g. ${s}`)
  console.log(
    `  verification: ${acknowledged.length} acknowledged proposals checked (state, author, files, content), ${listed} on the server; ${allTasks.size} tasks (${shared} contended), ${winners} runs won, runs per task: ${[...allTasks].every((t) => (runsPerTask.get(t) ?? []).length === 1) ? 'exactly 1 each' : 'NOT 1 each'}; live leases ${(live.body.leases ?? []).length}; git fsck ${fsck}`,
  )
  for (const o of owners) {
    const at = Number(o.instance.replace(/^i/, ''))
    const elsewhere = plan.filter((p) => (p.n - 1) % servers.length !== at - 1).length
    console.log(
      `  owner of ${o.repo}: instance ${o.instance} (epoch ${o.epoch}); the ${elsewhere} of ${N} agents on the other instances were forwarded to it`,
    )
  }
  for (const p of problems.slice(0, 10)) console.log(`    problem: ${p}`)
  if (problems.length > 10) console.log(`    … and ${problems.length - 10} more problems`)
  const pass = connectionErrors === 0 && timeouts === 0 && problems.length === 0 && acknowledged.length === N
  console.log(
    `  ${pass ? 'PASS' : 'FAIL'}: ${connectionErrors} connection errors, ${timeouts} timeouts, ${problems.length} lost or duplicated, ${N - acknowledged.length} of ${N} agents without an acknowledged proposal`,
  )
  // Errors for the side-by-side table: every refused call but the claims the race must lose.
  const refused = (tool) => [...(errors.get(tool)?.values() ?? [])].reduce((s, x) => s + x, 0)
  const others = [...errors.keys()].filter((t) => t !== 'task_claim').reduce((s, t) => s + refused(t), 0)
  const unexpected = others + Math.abs(refused('task_claim') - (racers - shared))
  return { name, pass, unexpected, problems: problems.length, N, calls, wallMs, serverCpu, pgCpu, times }
}

/** @typedef {Awaited<ReturnType<typeof measure>>} Result */

/** One round: every set-up in turn on the same N, then their figures side by side. @param {number} N @param {string} src */
async function round(N, src) {
  /** @type {Result[]} */
  const results = []
  for (const name of STORES) results.push(await measure(N, src, /** @type {keyof typeof SETUPS} */ (name)))
  if (results.length > 1) sideBySide(N, results)
  return results.every((r) => r.pass)
}

/** @param {number} N @param {Result[]} results */
function sideBySide(N, results) {
  const base = results.find((r) => r.name === 'journal')
  const perS = (r) => r.N / (r.wallMs / 1000)
  const callsPerS = (r) => r.calls / (r.wallMs / 1000)
  const ratio = (f, r) => (base ? `${fmt(f(r) / f(base), 2)}×` : '-')
  console.log(`N=${N} side by side (load average ${fmt(loadavg()[0] ?? NaN, 1)}, ${cpus().length} cores):`)
  console.log(
    `  ${'set-up'.padEnd(9)}${pad('errors', 7)}${pad('lost/dup', 9)}${pad('sess/s', 8)}${pad('vs jnl', 7)}${pad('calls/s', 9)}${pad('vs jnl', 7)}${pad('ag-server', 11)}${pad('postgres', 10)}${pad('total', 8)}`,
  )
  for (const r of results) {
    const perCall = (ms) => ms / r.calls
    const total = perCall(r.serverCpu) + (Number.isFinite(r.pgCpu) ? perCall(r.pgCpu) : 0)
    console.log(
      `  ${r.name.padEnd(9)}${pad(r.unexpected, 7)}${pad(r.problems, 9)}${pad(fmt(perS(r), 1), 8)}${pad(ratio(perS, r), 7)}${pad(fmt(callsPerS(r), 1), 9)}${pad(ratio(callsPerS, r), 7)}${pad(fmt(perCall(r.serverCpu), 2), 11)}${pad(fmt(perCall(r.pgCpu), 2), 10)}${pad(fmt(total, 2), 8)}`,
    )
  }
  console.log(
    `  (errors: refused or unanswered calls but the claims a race must lose; the last three: CPU ms per session tool call, summed over every ag-server process and over PostgreSQL's, i.e. core-ms. On ${cpus().length} cores every instance competes for the same cores with the ${N} ag-mcp processes and PostgreSQL: more instances measure the overhead of forwarding and ownership, not a gain.)`,
  )
  console.log(`  ${'p50 / p99 ms'.padEnd(17)}${results.map((r) => pad(r.name, 14)).join('')}`)
  for (const tool of SESSION_TOOLS) {
    if (!results.some((r) => r.times.has(tool))) continue
    const cell = (r) => {
      const xs = r.times.get(tool) ?? []
      return pad(`${fmt(quantile(xs, 0.5))} / ${fmt(quantile(xs, 0.99))}`, 14)
    }
    console.log(`  ${tool.padEnd(17)}${results.map(cell).join('')}`)
  }
}

async function main() {
  const cpuList = cpus()
  console.log(
    `machine: node ${process.version}, ${cpuList.length} × ${cpuList[0]?.model ?? 'unknown cpu'}, Linux ${release()}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB; load average ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}; rounds N = ${ROUNDS.join(', ')}; set-ups ${STORES.join(', ')}`,
  )
  const src = makeRepo()
  const results = []
  for (const N of ROUNDS) results.push(await round(N, src))
  await postgres?.then((pg) => pg.stop())
  console.log(
    `scale: ${results.filter(Boolean).length} of ${results.length} rounds PASS${STORES.length > 1 ? ` (on every set-up: ${STORES.join(', ')})` : ''}`,
  )
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(`scale.bench: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`)
    process.exit(1)
  },
)
