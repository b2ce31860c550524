#!/usr/bin/env node
// The per-call overhead of ag-mcp (issue 5): the same AGWP operation timed through ag-mcp over
// stdio and directly with HTTP on loopback, in one run, against a real ag-server. A benchmark,
// not a test: it prints PASS/FAIL against "< 1 ms added at p50" and exits non-zero only when a
// step breaks (set-up, a child dying, a wrong or error answer).
//
//   a temporary git repository (a ~4 KB text file, 25 commits), an ag-server data dir made with
//   its CLI, `ag-server serve` on 127.0.0.1:0 (--rate 0), ONE `ag-mcp --upstream … --token-file …`
//   spoken to in the modern era (2026-07-28, `_meta` on every request); then, for file_read (the
//   4 KB file) and log (limit 20), interleaved in rotating order, N sequential samples of:
//     direct   GET with a keep-alive http.Agent, full body read and JSON-parsed
//     relay    the floor of any stdio hop: a minimal stdio process doing that same GET and
//              answering one JSON-RPC line (no MCP pipeline): what a second process costs
//     ag-mcp   tools/call through ag-mcp, from the request write to its answer line JSON-parsed
//   added = ag-mcp − direct (p50, p99). CPU per call of ag-mcp and ag-server comes from /proc.
//   ag-server counts the requests it serves per User-Agent (a preload subscribed to the
//   http.server.request.start diagnostics channel), so one tools/call = one upstream GET is
//   checked, not assumed.
//
// Environment: BENCH_AGWP_N samples per path per operation (default 2000, at most 20000);
// BENCH_AGWP_OPS=log (or file_read) measures only that operation;
// BENCH_AGWP_CPU_PROF=DIR runs ag-mcp with --cpu-prof into DIR (figures then include the profiler).
import { agwpWorld } from './agwp-world.mjs'
import { cpuMs, endAndWait, gitEnv, run, scratch } from './proc.mjs'
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import { cpus, loadavg, release, totalmem } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const AG_MCP = join(root, 'dist', 'ag-mcp.mjs')
const AG_SERVER = join(root, 'dist', 'ag-server.mjs')
const N = Math.min(20_000, Math.max(10, Number(process.env['BENCH_AGWP_N'] ?? 2000) || 2000))
const WARMUP = Math.min(500, Math.max(50, Math.floor(N / 4)))
const TIMEOUT_MS = 10_000
const TARGET_US = 1000
const OPS = (process.env['BENCH_AGWP_OPS'] ?? 'file_read,log').split(',').map((s) => s.trim())
const CPU_PROF = process.env['BENCH_AGWP_CPU_PROF'] ? resolve(process.env['BENCH_AGWP_CPU_PROF']) : undefined

const MODERN = '2026-07-28'
const META = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} }

for (const f of [AG_MCP, AG_SERVER]) {
  if (!existsSync(f)) {
    console.error(`agwp.bench: ${f} is missing; run \`npm run build\` first (npm run bench does)`)
    process.exit(1)
  }
}

const { tmp, children, cleanup } = scratch('ag-mcp-agwp-bench-')

const now = () => performance.now()

// ---------------------------------------------------------------------------------------------
// Set-up: repository, data dir, token, server

function makeRepo() {
  const src = join(tmp, 'src')
  mkdirSync(join(src, 'docs'), { recursive: true })
  mkdirSync(join(src, 'src'), { recursive: true })
  run('git', ['init', '-q', '-b', 'main', src])
  writeFileSync(join(src, 'README.md'), '# bench\n\nA repository for the ag-mcp overhead benchmark.\n')
  writeFileSync(join(src, 'src', 'main.txt'), 'main\n')
  // ~4 KB of plain text: lines of prose and code-ish text, no control characters.
  let big = ''
  for (let i = 0; big.length < 4000; i++)
    big += `line ${String(i).padStart(3, '0')}: the quick brown fox jumps over the lazy dog; const x${i} = f(${i});\n`
  writeFileSync(join(src, 'docs', 'big.txt'), big)
  run('git', ['add', '.'], src)
  run('git', ['commit', '-qm', 'initial: README, src/main.txt, docs/big.txt'], src)
  for (let c = 2; c <= 25; c++) {
    writeFileSync(join(src, 'src', 'main.txt'), `main revision ${c}\n`)
    run('git', ['commit', '-qam', `change ${c}: revise src/main.txt`], src)
  }
  return { src, bigBytes: Buffer.byteLength(big) }
}

// Loaded into ag-server with --import: counts the requests it serves per User-Agent and prints
// the counts on stderr at SIGUSR2. Costs both paths the same.
const COUNTER = `import dc from 'node:diagnostics_channel'
const counts = new Map()
dc.subscribe('http.server.request.start', ({ request }) => {
  const ua = String(request.headers['user-agent'] ?? '-')
  counts.set(ua, (counts.get(ua) ?? 0) + 1)
})
process.on('SIGUSR2', () => process.stderr.write('bench-counts ' + JSON.stringify(Object.fromEntries(counts)) + '\\n'))
`

// The floor of a stdio hop: reads JSON-RPC lines, does the GET named in params.path with a
// keep-alive agent, answers with the body as text and as structured content.
const RELAY = `import http from 'node:http'
const base = process.env.RELAY_BASE
const auth = 'Bearer ' + process.env.RELAY_TOKEN
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
let buf = ''
process.stdin.setEncoding('utf8').on('data', (c) => {
  buf += c
  for (let i = buf.indexOf('\\n'); i >= 0; buf = buf.slice(i + 1), i = buf.indexOf('\\n')) {
    const msg = JSON.parse(buf.slice(0, i))
    http.get(base + msg.params.path, { agent, headers: { authorization: auth, 'user-agent': 'relay' } }, (res) => {
      const chunks = []
      res.on('data', (d) => chunks.push(d))
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        const structured = JSON.parse(text)
        process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: msg.id, result: { content: [{ type: 'text', text }], structuredContent: structured } }) + '\\n')
      })
    }).on('error', (e) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: msg.id, error: { code: -32000, message: e.message } }) + '\\n'))
  }
})
`

/**
 * Starts ag-server and resolves with its base URL (…/agwp/v1) once it listens.
 * @param {string} data
 */
function startServer(data) {
  const counter = join(tmp, 'counter.mjs')
  writeFileSync(counter, COUNTER)
  const child = spawn(
    process.execPath,
    ['--import', counter, AG_SERVER, 'serve', '--data', data, '--listen', '127.0.0.1:0', '--rate', '0'],
    { stdio: ['ignore', 'pipe', 'pipe'], env: gitEnv },
  )
  children.push(child)
  const server = {
    child,
    stderr: '',
    url: '',
    pid: /** @type {number} */ (child.pid),
    onErr: /** @type {(line: string) => void} */ (() => {}),
  }
  child.stderr.setEncoding('utf8')
  let rest = ''
  child.stderr.on('data', (s) => {
    if (server.stderr.length < 8000) server.stderr += s
    rest += s
    for (let nl = rest.indexOf('\n'); nl >= 0; nl = rest.indexOf('\n')) {
      server.onErr(rest.slice(0, nl))
      rest = rest.slice(nl + 1)
    }
  })
  return new Promise((resolve, reject) => {
    let out = ''
    const timer = setTimeout(
      () =>
        reject(new Error(`ag-server did not listen within ${TIMEOUT_MS} ms: ${server.stderr.trim().slice(0, 500)}`)),
      TIMEOUT_MS,
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
      reject(new Error(`ag-server exited (${signal ?? code}): ${server.stderr.trim().slice(0, 500)}`))
    })
  })
}

/**
 * The requests ag-server has served so far, per User-Agent.
 * @param {{ child: import('node:child_process').ChildProcess, onErr: (line: string) => void }} server
 * @returns {Promise<Record<string, number>>}
 */
function serverCounts(server) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('ag-server did not report its request counts')), TIMEOUT_MS)
    server.onErr = (line) => {
      if (!line.startsWith('bench-counts ')) return
      clearTimeout(timer)
      server.onErr = () => {}
      resolve(JSON.parse(line.slice('bench-counts '.length)))
    }
    server.child.kill('SIGUSR2')
  })
}

// ---------------------------------------------------------------------------------------------
// The stdio side: one child, one request in flight at a time

class StdioChild {
  /** @param {string[]} args @param {NodeJS.ProcessEnv} [env] */
  constructor(args, env = process.env) {
    this.proc = spawn(process.execPath, args, { cwd: root, stdio: ['pipe', 'pipe', 'pipe'], env })
    children.push(this.proc)
    this.pid = /** @type {number} */ (this.proc.pid)
    this.stderr = ''
    this.rest = ''
    /** @type {((line: string) => void) | undefined} */
    this.waiter = undefined
    /** @type {string | undefined} */
    this.died = undefined
    this.exited = new Promise((resolve) =>
      this.proc.on('exit', (code, signal) => {
        this.died = `exited (${signal ?? code})`
        resolve({ code, signal })
      }),
    )
    this.proc.stdin.on('error', () => {})
    this.proc.stderr.setEncoding('utf8').on('data', (s) => {
      if (this.stderr.length < 8000) this.stderr += s
    })
    this.proc.stdout.setEncoding('utf8').on('data', (s) => {
      let start = 0
      for (let nl = s.indexOf('\n'); nl >= 0; nl = s.indexOf('\n', start)) {
        const line = this.rest + s.slice(start, nl)
        this.rest = ''
        start = nl + 1
        const w = this.waiter
        this.waiter = undefined
        if (w) w(line) // else: a line nobody waits for (a notification); ignored
      }
      this.rest += s.slice(start)
    })
  }

  /**
   * Writes one request line and resolves with its answer parsed, and the time it took.
   * @param {string} line @returns {Promise<{ msg: any, us: number, bytes: number }>}
   */
  call(line) {
    return new Promise((resolve, reject) => {
      if (this.died) return reject(new Error(`${this.died}; stderr: ${this.stderr.trim().slice(0, 500)}`))
      const timer = setTimeout(
        () => reject(new Error(`no answer within ${TIMEOUT_MS} ms; stderr: ${this.stderr.trim().slice(0, 500)}`)),
        TIMEOUT_MS,
      )
      const onExit = () =>
        reject(new Error(`${this.died} before answering; stderr: ${this.stderr.trim().slice(0, 500)}`))
      this.exited.then(onExit)
      const id = JSON.parse(line).id
      /** @param {string} answer */
      const waiter = (answer) => {
        const msg = JSON.parse(answer)
        const t1 = now()
        if (msg?.id !== id) {
          this.waiter = waiter // a notification or a stray line: not this answer
          return
        }
        clearTimeout(timer)
        resolve({ msg, us: (t1 - t0) * 1000, bytes: answer.length })
      }
      this.waiter = waiter
      const t0 = now()
      this.proc.stdin.write(line)
    })
  }

  /** CPU time in ms used so far, all threads (see proc.mjs). */
  cpuMs() {
    return cpuMs(this.pid)
  }

  /** Closes stdin and waits for the exit (killed after a deadline). */
  close() {
    return endAndWait(this.proc, this.exited)
  }
}

// ---------------------------------------------------------------------------------------------
// The direct side: keep-alive HTTP, body read in full and parsed

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })

/**
 * @param {string} url @param {string} token
 * @returns {Promise<{ body: any, us: number, bytes: number, status: number }>}
 */
function direct(url, token) {
  return new Promise((resolve, reject) => {
    const t0 = now()
    const req = http.get(
      url,
      {
        agent,
        headers: { authorization: `Bearer ${token}`, accept: 'application/json', 'user-agent': 'bench-direct' },
        timeout: TIMEOUT_MS,
      },
      (res) => {
        /** @type {Buffer[]} */
        const chunks = []
        res.on('data', (c) => chunks.push(c))
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8')
          let body
          try {
            body = JSON.parse(text)
          } catch {
            return reject(new Error(`direct GET: not JSON (${res.statusCode}): ${text.slice(0, 200)}`))
          }
          const t1 = now()
          resolve({ body, us: (t1 - t0) * 1000, bytes: text.length, status: res.statusCode ?? 0 })
        })
        res.on('error', reject)
      },
    )
    req.on('timeout', () => req.destroy(new Error(`direct GET: no answer within ${TIMEOUT_MS} ms`)))
    req.on('error', reject)
  })
}

// ---------------------------------------------------------------------------------------------
// Statistics

/** @param {number[]} xs @param {number} q */
function quantile(xs, q) {
  const s = [...xs].sort((a, b) => a - b)
  if (s.length === 0) return NaN
  const i = Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))
  return /** @type {number} */ (s[i])
}
const mean = (/** @type {number[]} */ xs) => xs.reduce((a, b) => a + b, 0) / xs.length

// ---------------------------------------------------------------------------------------------
// Run

/**
 * @typedef {{ name: string, label: string, path: string, tool: string, args: Record<string, unknown>,
 *   check: (structured: any, directBody: any) => string | undefined }} Op
 */

async function main() {
  const cpuList = cpus()
  console.log(
    `machine: node ${process.version}, ${cpuList.length} × ${cpuList[0]?.model ?? 'unknown cpu'}, Linux ${release()}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB`,
  )
  const load0 = loadavg()[0] ?? NaN

  const t0 = now()
  const { src, bigBytes } = makeRepo()
  const data = join(tmp, 'data')
  const { tokenFile, token } = agwpWorld({ agServer: AG_SERVER, data, repos: { demo: src } }).member({
    principal: 'agent:alice',
    scopes: 'read,workspace,propose,coordinate',
    role: 'contributor',
    ttl: '1h',
  })
  const server = await startServer(data)
  const origin = new URL(server.url).origin

  const mcpArgs = [
    AG_MCP,
    '--upstream',
    origin,
    '--token-file',
    tokenFile,
    '--log-level',
    'warn',
    '--rate-limit',
    '100000/s',
  ]
  if (CPU_PROF) {
    mkdirSync(CPU_PROF, { recursive: true })
    mcpArgs.unshift('--cpu-prof', '--cpu-prof-dir', CPU_PROF)
  }
  const mcp = new StdioChild(mcpArgs)
  const relayFile = join(tmp, 'relay.mjs')
  writeFileSync(relayFile, RELAY)
  const relay = new StdioChild([relayFile], { ...process.env, RELAY_BASE: server.url, RELAY_TOKEN: token })
  console.log(
    `set-up: repository (25 commits, docs/big.txt ${bigBytes} B), ag-server on ${origin} (--rate 0), one ag-mcp (2026-07-28, --rate-limit 100000/s) in ${(now() - t0).toFixed(0)} ms; load average ${load0.toFixed(1)} at start`,
  )

  let id = 0
  /** @param {string} method @param {Record<string, unknown>} params */
  const modern = (method, params) =>
    `${JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params: { ...params, _meta: META } })}\n`

  const discover = await mcp.call(modern('server/discover', {}))
  if (!discover.msg.result) throw new Error(`server/discover: ${JSON.stringify(discover.msg).slice(0, 300)}`)
  const listed = await mcp.call(modern('tools/list', {}))
  const names = (listed.msg.result?.tools ?? []).map((/** @type {{ name: string }} */ t) => t.name)
  for (const t of ['file_read', 'log'])
    if (!names.includes(t)) throw new Error(`tools/list has no ${t}: ${names.join(', ')}`)

  /** @type {Op[]} */
  const ops = [
    {
      name: 'file_read',
      label: `file_read (${(bigBytes / 1024).toFixed(1)} KB file)`,
      path: `/repos/demo/file?path=${encodeURIComponent('docs/big.txt')}`,
      tool: 'file_read',
      args: { repo: 'demo', path: 'docs/big.txt' },
      check: (s, d) =>
        s?.blob === d?.blob && typeof s?.content === 'string'
          ? undefined
          : `structuredContent differs from the direct answer (blob ${s?.blob} vs ${d?.blob})`,
    },
    {
      name: 'log',
      label: 'log (limit 20)',
      path: '/repos/demo/log?limit=20',
      tool: 'log',
      args: { repo: 'demo', limit: 20 },
      check: (s, d) =>
        Array.isArray(s?.commits) && s.commits.length === 20 && Array.isArray(d?.commits) && d.commits.length === 20
          ? undefined
          : `expected 20 commits, got ${s?.commits?.length} via ag-mcp and ${d?.commits?.length} direct`,
    },
  ]

  const results = []
  for (const op of ops.filter((o) => OPS.includes(o.name))) {
    const url = server.url + op.path
    /** @param {any} msg */
    const toolResult = (msg) => {
      const r = msg.result
      if (!r || r.isError) throw new Error(`${op.tool}: ${JSON.stringify(msg).slice(0, 400)}`)
      return r
    }
    // One checked exchange on each path first: same data both ways.
    const d0 = await direct(url, token)
    if (d0.status !== 200) throw new Error(`direct ${op.path}: ${d0.status} ${JSON.stringify(d0.body).slice(0, 300)}`)
    const m0 = toolResult((await mcp.call(modern('tools/call', { name: op.tool, arguments: op.args }))).msg)
    const bad = op.check(m0.structuredContent, d0.body)
    if (bad) throw new Error(`${op.name}: ${bad}`)
    const r0 = await relay.call(modern('tools/call', { path: op.path }))
    if (!r0.msg.result) throw new Error(`relay ${op.path}: ${JSON.stringify(r0.msg).slice(0, 300)}`)

    /** @type {Record<'direct' | 'relay' | 'mcp', number[]>} */
    const lat = { direct: [], relay: [], mcp: [] }
    const bytes = { direct: d0.bytes, relay: r0.bytes, mcp: 0 }
    /** @type {Record<'direct' | 'relay' | 'mcp', () => Promise<number>>} */
    const paths = {
      direct: async () => {
        const r = await direct(url, token)
        if (r.status !== 200) throw new Error(`direct ${op.path}: ${r.status}`)
        return r.us
      },
      relay: async () => {
        const r = await relay.call(modern('tools/call', { path: op.path }))
        if (!r.msg.result) throw new Error(`relay ${op.path}: ${JSON.stringify(r.msg).slice(0, 300)}`)
        return r.us
      },
      mcp: async () => {
        const r = await mcp.call(modern('tools/call', { name: op.tool, arguments: op.args }))
        toolResult(r.msg)
        bytes.mcp = r.bytes
        return r.us
      },
    }
    const order = /** @type {const} */ (['direct', 'relay', 'mcp'])
    const countsBefore = await serverCounts(server)
    let cpuMcp0 = 0
    let cpuRelay0 = 0
    let cpuSrv0 = 0
    for (let i = -WARMUP; i < N; i++) {
      if (i === 0) {
        cpuMcp0 = mcp.cpuMs()
        cpuRelay0 = relay.cpuMs()
        cpuSrv0 = cpuMs(server.pid)
      }
      // Rotate the order every round: no path always runs first or right after another.
      const k = ((i % 3) + 3) % 3
      for (const p of [...order.slice(k), ...order.slice(0, k)]) {
        const us = await paths[p]()
        if (i >= 0) lat[p].push(us)
      }
    }
    const cpuMcp = (mcp.cpuMs() - cpuMcp0) / N
    const cpuRelay = (relay.cpuMs() - cpuRelay0) / N
    const cpuSrv = (cpuMs(server.pid) - cpuSrv0) / (3 * N)
    const countsAfter = await serverCounts(server)
    const delta = (/** @type {string} */ ua) => (countsAfter[ua] ?? 0) - (countsBefore[ua] ?? 0)
    results.push({
      op,
      lat,
      bytes,
      cpuMcp,
      cpuRelay,
      cpuSrv,
      added50: NaN,
      countMismatch: false,
      upstream: { mcp: delta('ag-mcp'), direct: delta('bench-direct'), relay: delta('relay'), calls: N + WARMUP },
    })
  }

  // Report
  const pad = (/** @type {string} */ s, /** @type {number} */ n) => s.padEnd(n)
  const lpad = (/** @type {string} */ s, /** @type {number} */ n) => s.padStart(n)
  const us = (/** @type {number} */ v) => `${Math.round(v)} µs`
  const signed = (/** @type {number} */ v) => `${v >= 0 ? '+' : ''}${Math.round(v)} µs`
  console.log(
    `\n${N} sequential samples per path per operation (+${WARMUP} discarded), interleaved in rotating order\n`,
  )
  console.log(
    `${pad('latency (request → answer parsed)', 44)}${lpad('p50', 10)}${lpad('p99', 10)}${lpad('mean', 10)}${lpad('answer', 10)}`,
  )
  const labels = {
    direct: 'direct HTTP, keep-alive',
    relay: 'floor: minimal stdio relay + HTTP',
    mcp: 'ag-mcp tools/call over stdio',
  }
  for (const r of results) {
    console.log(`   ${r.op.label}`)
    for (const p of /** @type {const} */ (['direct', 'relay', 'mcp'])) {
      const xs = r.lat[p]
      console.log(
        `${pad(`     ${labels[p]}`, 44)}${lpad(us(quantile(xs, 0.5)), 10)}${lpad(us(quantile(xs, 0.99)), 10)}${lpad(us(mean(xs)), 10)}${lpad(`${(r.bytes[p] / 1024).toFixed(1)} KB`, 10)}`,
      )
    }
    const added50 = quantile(r.lat.mcp, 0.5) - quantile(r.lat.direct, 0.5)
    const added99 = quantile(r.lat.mcp, 0.99) - quantile(r.lat.direct, 0.99)
    const floor50 = quantile(r.lat.relay, 0.5) - quantile(r.lat.direct, 0.5)
    r.added50 = added50
    console.log(
      `${pad('     added by ag-mcp (ag-mcp − direct)', 44)}${lpad(signed(added50), 10)}${lpad(signed(added99), 10)}${lpad(signed(mean(r.lat.mcp) - mean(r.lat.direct)), 10)}` +
        `\n${pad('     of which any stdio hop (relay − direct)', 44)}${lpad(signed(floor50), 10)}`,
    )
    console.log(
      `     CPU per call (all threads, /proc): ag-mcp ${us(r.cpuMcp * 1000)}, relay ${us(r.cpuRelay * 1000)}; ag-server ${us(r.cpuSrv * 1000)} per request (mean of the three paths)`,
    )
    const u = r.upstream
    const one = u.mcp === u.calls
    console.log(
      `     upstream requests seen by ag-server: ag-mcp ${u.mcp} for ${u.calls} tools/call (${one ? 'exactly one GET per call' : 'NOT one per call'}), direct ${u.direct}, relay ${u.relay}`,
    )
    if (!one) r.countMismatch = true
  }

  console.log(`\n${pad('target (ag-mcp)', 44)}${lpad('measured', 14)}  result`)
  for (const r of results) {
    console.log(
      `${pad(`   ${r.op.name}: added p50 < 1 ms`, 44)}${lpad(signed(r.added50), 14)}  ${r.added50 < TARGET_US ? 'PASS' : 'FAIL'}`,
    )
  }
  const load1 = loadavg()[0] ?? NaN
  const busy = Math.max(load0, load1) > cpuList.length * 0.75
  console.log(
    `   load average ${load0.toFixed(1)} at start, ${load1.toFixed(1)} at end on ${cpuList.length} cpus` +
      (busy
        ? ': the machine was busy, so wall-clock figures are inflated and noisy (each sample crosses two or three processes); CPU per call is the steadier figure'
        : ''),
  )
  if (CPU_PROF) console.log(`   ag-mcp ran with --cpu-prof (figures include the profiler); profile in ${CPU_PROF}`)

  const closed = /** @type {{ code: number | null, signal: string | null }} */ (await mcp.close())
  await relay.close()
  server.child.kill('SIGTERM')
  await new Promise((resolve) => {
    if (server.child.exitCode !== null || server.child.signalCode !== null) return resolve(undefined)
    const timer = setTimeout(resolve, 5000) // then killed by cleanup()
    server.child.once('exit', () => resolve(clearTimeout(timer)))
  })
  if (closed.code !== 0)
    throw new Error(
      `ag-mcp exited (${closed.signal ?? closed.code}) at stdin EOF; stderr: ${mcp.stderr.trim().slice(0, 500)}`,
    )
  if (results.some((r) => r.countMismatch))
    throw new Error('ag-mcp did not make exactly one upstream request per tools/call')
}

try {
  await main()
} catch (e) {
  console.error(`agwp.bench failed: ${/** @type {Error} */ (e).message}`)
  process.exitCode = 1
} finally {
  cleanup()
}
