#!/usr/bin/env node
// Local mode's start-up on a 50,000-file repository (issue 26, item 1), side by side in one run
// with plain ag-mcp against an ag-server that is already running. A benchmark, not a test: it
// prints PASS/FAIL against its targets and exits non-zero only when a step breaks.
//
//   the repository: 50,000 small files in 500 folders, one commit, written with one
//   `git fast-import` and checked out; then, interleaved in rotating order, N samples of each:
//     plain    ag-mcp --upstream URL --token-file F, the ag-server serving a full clone of the
//              repository (`repo add --from`) started once before: the floor for "an ag-mcp start"
//     cold     ag-mcp --local REPO, the first start ever (.ag/ removed before each sample):
//              .ag/ made, the repository added (--shared), the private server spawned
//     warm     ag-mcp --local REPO with .ag/ in place and no session running: the private server
//              spawned, branches mirrored, a token minted
//     joining  ag-mcp --local REPO while another session holds the private server
//   each timed from spawn to the first answer line of a tools/call whoami sent at once (one
//   upstream round trip in every variant), and CPU of that ag-mcp process from /proc (the private
//   server's own CPU is not in it). Disk: what local mode adds (.ag/ and refs/ag/ in .git) beside
//   the repository's .git and beside the plain ag-server's data directory (a full copy).
//
// Environment: BENCH_LOCAL_RUNS samples per variant (default 5); BENCH_LOCAL_FILES (default 50000).
import { agwpWorld, listening } from './agwp-world.mjs'
import { cpuMs, endAndWait, gitEnv, run, scratch } from './proc.mjs'
import { execFileSync, spawn } from 'node:child_process'
import { existsSync, lstatSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const AG_MCP = join(root, 'dist', 'ag-mcp.mjs')
const AG_SERVER = join(root, 'dist', 'ag-server.mjs')
const RUNS = Math.max(1, Number(process.env['BENCH_LOCAL_RUNS'] ?? 5) || 5)
const FILES = Math.max(100, Number(process.env['BENCH_LOCAL_FILES'] ?? 50_000) || 50_000)
const TIMEOUT_MS = 60_000
const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
}
const WHOAMI = `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'whoami', arguments: {}, _meta: META } })}\n`

for (const f of [AG_MCP, AG_SERVER]) {
  if (!existsSync(f)) {
    console.error(`local.bench: ${f} is missing; run \`npm run build\` first (npm run bench does)`)
    process.exit(1)
  }
}

const { tmp, children } = scratch('ag-mcp-local-bench-')
const repo = join(tmp, 'big')
const now = () => performance.now()
const load0 = loadavg()[0] ?? NaN

/** @param {string} dir @returns {number} bytes of the regular files under dir */
function bytesUnder(dir) {
  let n = 0
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name)
    if (e.isDirectory()) n += bytesUnder(p)
    else if (e.isFile()) n += lstatSync(p).size
  }
  return n
}

// ---------------------------------------------------------------------------------------------
// Set-up: the repository, and the plain ag-server serving a full clone of it

const t0 = now()
run('git', ['init', '-q', '-b', 'main', repo])
const parts = ['commit refs/heads/main\ncommitter bench <bench@bench.invalid> 1700000000 +0000\ndata 5\nbig\n\n']
for (let i = 0; i < FILES; i++) {
  const c = `export const v${i} = ${i}\n`
  parts.push(`M 100644 inline src/d${i % 500}/f${i}.js\ndata ${Buffer.byteLength(c)}\n${c}\n`)
}
execFileSync('git', ['fast-import', '--quiet'], { cwd: repo, env: gitEnv, input: `${parts.join('')}\n` })
run('git', ['-C', repo, 'reset', '-q', '--hard'])
const dotGit = bytesUnder(join(repo, '.git'))
console.log(
  `local.bench: ${FILES.toLocaleString('en')} files, .git ${(dotGit / 1024 / 1024).toFixed(1)} MiB, built in ${((now() - t0) / 1000).toFixed(1)} s; ${RUNS} samples per variant, node ${process.version}, ${cpus().length} cpus`,
)

const data = join(tmp, 'plain-data')
const { tokenFile } = agwpWorld({ agServer: AG_SERVER, data, repos: { big: repo } }).member({
  principal: 'agent:bench',
  scopes: 'read,workspace,propose,coordinate',
  role: 'contributor',
})
const server = spawn(process.execPath, [AG_SERVER, 'serve', '--data', data, '--listen', '127.0.0.1:0', '--rate', '0'], {
  stdio: ['pipe', 'pipe', 'inherit'],
})
children.push(server)
const upstream = await listening(server)
const plainData = bytesUnder(data)
// For the baseline "an ag-server start": a data directory of its own, the repository borrowed.
const spare = join(tmp, 'spare-data')
agwpWorld({ agServer: AG_SERVER, data: spare, repos: { big: repo }, repoFlags: ['--shared'] })

// ---------------------------------------------------------------------------------------------
// One sample: spawn → first answer line of whoami

/** @param {string[]} args @returns {Promise<{ wall: number, cpu: number, child: import('node:child_process').ChildProcess, exited: Promise<unknown> }>} */
function firstAnswer(args) {
  const start = now()
  const child = spawn(process.execPath, [AG_MCP, ...args, '--log-level', 'warn'], {
    cwd: repo,
    env: { ...gitEnv, HOME: tmp },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  children.push(child)
  const exited = new Promise((resolve) => child.on('exit', resolve))
  let err = ''
  child.stderr.setEncoding('utf8').on('data', (s) => (err += s))
  child.stdin.write(WHOAMI)
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer in ${TIMEOUT_MS} ms: ${err.slice(0, 400)}`)), TIMEOUT_MS)
    child.on('exit', (code) => reject(new Error(`ag-mcp exited ${code} before answering: ${err.slice(0, 400)}`)))
    child.stdout.setEncoding('utf8').once('data', (line) => {
      const wall = now() - start
      clearTimeout(timer)
      const cpu = cpuMs(/** @type {number} */ (child.pid))
      const msg = JSON.parse(line.split('\n')[0])
      if (!msg.result || msg.result.isError) return reject(new Error(`whoami failed: ${line.slice(0, 300)}`))
      resolve({ wall, cpu, child, exited })
    })
  })
}

/** Waits until no private server holds the repository's lock (each local sample starts from that). */
async function noServer() {
  for (let i = 0; i < 2000; i++) {
    try {
      const { pid } = JSON.parse(readFileSync(join(repo, '.ag', 'server', 'lock'), 'utf8'))
      process.kill(pid, 0)
    } catch {
      return
    }
    await new Promise((r) => setTimeout(r, 10))
  }
  throw new Error('the private server did not exit after its last session')
}

/** @param {string[]} args */
async function sample(args) {
  const r = await firstAnswer(args)
  await endAndWait(r.child, r.exited)
  return r
}

/** spawn → "listening" of an ag-server on the repository: what a private server's start costs at least. */
async function serverStart() {
  const start = now()
  const child = spawn(process.execPath, [AG_SERVER, 'serve', '--data', spare, '--listen', '127.0.0.1:0'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  children.push(child)
  const exited = new Promise((resolve) => child.on('exit', resolve))
  const wall = await new Promise((resolve, reject) => {
    child.on('exit', (code) => reject(new Error(`ag-server exited ${code} before listening`)))
    child.stdout.setEncoding('utf8').once('data', () => resolve(now() - start))
  })
  const cpu = cpuMs(/** @type {number} */ (child.pid))
  child.kill('SIGTERM')
  await exited
  return { wall: /** @type {number} */ (wall), cpu }
}

const variants = {
  server: serverStart,
  plain: () => sample(['--upstream', /** @type {string} */ (upstream), '--token-file', tokenFile]),
  cold: async () => {
    await noServer()
    rmSync(join(repo, '.ag'), { recursive: true, force: true })
    const r = await sample(['--local'])
    await noServer()
    agMax = Math.max(agMax, bytesUnder(join(repo, '.ag')))
    return r
  },
  warm: async () => {
    await noServer()
    return sample(['--local'])
  },
  joining: async () => {
    await noServer()
    const holder = await firstAnswer(['--local'])
    const r = await sample(['--local'])
    await endAndWait(holder.child, holder.exited)
    return r
  },
}
let agMax = 0
const names = /** @type {(keyof typeof variants)[]} */ (Object.keys(variants))
/** @type {Record<string, { wall: number[], cpu: number[] }>} */
const results = Object.fromEntries(names.map((n) => [n, { wall: [], cpu: [] }]))
await variants.warm() // one start not measured: the page cache and the .ag/ the warm runs use
for (let i = 0; i < RUNS; i++) {
  for (let j = 0; j < names.length; j++) {
    const name = /** @type {keyof typeof variants} */ (names[(i + j) % names.length])
    const r = await variants[name]()
    results[name]?.wall.push(r.wall)
    results[name]?.cpu.push(r.cpu)
  }
}
await noServer()
const agBytes = bytesUnder(join(repo, '.ag'))
const pins = run('git', ['-C', repo, 'for-each-ref', 'refs/ag/']).split('\n').filter(Boolean).length

// ---------------------------------------------------------------------------------------------
// Report

const median = (/** @type {number[]} */ xs) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? (s[(s.length - 1) / 2] ?? NaN) : ((s[s.length / 2 - 1] ?? 0) + (s[s.length / 2] ?? 0)) / 2
}
const ms = (/** @type {number} */ v) => `${Math.round(v)} ms`
const labels = {
  server: 'baseline: ag-server alone, spawn → listening',
  plain: 'plain ag-mcp, ag-server already running',
  cold: 'ag-mcp --local, first start (no .ag/)',
  warm: 'ag-mcp --local, .ag/ there, no session',
  joining: 'ag-mcp --local beside a running session',
}
const plainWall = median(results['plain']?.wall ?? [])
console.log(
  `\n${'spawn → first whoami answer (median)'.padEnd(46)}${'wall'.padStart(9)}${'× plain'.padStart(9)}${'ag-mcp CPU'.padStart(12)}`,
)
for (const n of names) {
  const w = median(results[n]?.wall ?? [])
  console.log(
    `   ${labels[n].padEnd(43)}${ms(w).padStart(9)}${`${(w / plainWall).toFixed(2)}×`.padStart(9)}${ms(median(results[n]?.cpu ?? [])).padStart(12)}`,
  )
}
const kib = (/** @type {number} */ n) => `${(n / 1024).toFixed(1)} KiB`
console.log(`\ndisk`)
console.log(`   repository .git                               ${kib(dotGit)}`)
console.log(
  `   plain ag-server data directory (a full copy)  ${kib(plainData)}  (${((100 * plainData) / dotGit).toFixed(1)}% of .git)`,
)
console.log(
  `   .ag/ after a first start (largest of ${RUNS})       ${kib(agMax)}  (${((100 * agMax) / dotGit).toFixed(2)}% of .git)`,
)
console.log(
  `   .ag/ at the end of the run                    ${kib(agBytes)}  (${((100 * agBytes) / dotGit).toFixed(2)}% of .git; ${pins} refs under refs/ag/)`,
)

const warm = median(results['warm']?.wall ?? [])
const joining = median(results['joining']?.wall ?? [])
// A warm start is plain ag-mcp plus a private server's start plus local mode's own work.
const own = warm - plainWall - median(results['server']?.wall ?? [])
console.log(`\nlocal mode's own work in a warm start (warm − plain − ag-server alone): ${ms(own)}`)
const targets = [
  ['.ag/ under 10% of .git (nothing copied)', agMax < dotGit / 10, `${((100 * agMax) / dotGit).toFixed(2)}%`],
  ["warm start: local mode's own work < 300 ms", own < 300, ms(own)],
  ['joining start within 2× plain', joining < 2 * plainWall, `${(joining / plainWall).toFixed(2)}×`],
]
console.log(`\n${'target'.padEnd(46)}${'measured'.padStart(12)}  result`)
for (const [what, ok, got] of targets)
  console.log(`   ${String(what).padEnd(43)}${String(got).padStart(12)}  ${ok ? 'PASS' : 'FAIL'}`)
const load1 = loadavg()[0] ?? NaN
console.log(
  `   load average ${load0.toFixed(1)} at start, ${load1.toFixed(1)} at end on ${cpus().length} cpus${Math.max(load0, load1) > cpus().length * 0.75 ? ': the machine was busy, so wall-clock figures are inflated and noisy' : ''}`,
)
await endAndWait(server, new Promise((r) => server.on('exit', r)))
