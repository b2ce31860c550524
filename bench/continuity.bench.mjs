#!/usr/bin/env node
// The continuity plugin (issue 13): task_status and load_context (each preset) over a pack with
// 1,000 events and 500 Source Cache records in a git repository of 5,000 files, p50/p99 and the
// number of git processes per call. Target: task_status under 5 ms p50 (Agentpack starts 6-9
// git processes for it, about 18 ms on a small repository).
//
// The plugin's modules are bundled with esbuild and called in-process, exactly as the MCP
// handlers call them (a fresh Pack per call, so git state is cached per call only; the
// process-wide memos — file hashes by stat, short HEAD by commit — stay warm as in a server).
// The first call of each kind is reported on its own (cold hashes). Then the same calls end to
// end through one dist/ag-mcp.mjs over stdio ("(MCP)" rows; their git/call counts the git
// processes that ag-mcp started).
// Bounded loops only.
//   node bench/continuity.bench.mjs     BENCH_CONTINUITY_N=500 task_status samples (50 per preset)
import { execFileSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import * as esbuild from 'esbuild'
import { gitEnv as env } from './proc.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const N = Math.min(20_000, Math.max(20, Number(process.env.BENCH_CONTINUITY_N ?? 500) || 500))
const N_RESUME = Math.max(10, Math.floor(N / 10))
const FILES = 5000
const SOURCES = 500
const EVENTS = 1000
const TARGET_MS = 5
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'continuity-bench-'))
process.on('exit', () => fs.rmSync(tmp, { recursive: true, force: true }))
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(130))

const entry = path.join(tmp, 'entry.ts')
fs.writeFileSync(
  entry,
  [
    `export { Pack, initPack } from ${JSON.stringify(path.join(root, 'plugins/continuity/store.ts'))}`,
    `export { taskStatus } from ${JSON.stringify(path.join(root, 'plugins/continuity/reports.ts'))}`,
    `export { buildResume } from ${JSON.stringify(path.join(root, 'plugins/continuity/resume.ts'))}`,
    `export { gateFindings, formatGate } from ${JSON.stringify(path.join(root, 'plugins/continuity/gate.ts'))}`,
    `export { gitProcesses } from ${JSON.stringify(path.join(root, 'plugins/continuity/git.ts'))}`,
    `export { PRESETS } from ${JSON.stringify(path.join(root, 'plugins/continuity/budget.ts'))}`,
  ].join('\n'),
)
const out = path.join(tmp, 'continuity.mjs')
await esbuild.build({
  entryPoints: [entry],
  outfile: out,
  bundle: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  logLevel: 'silent',
})
const m = await import(pathToFileURL(out).href)

// A repository of 5,000 files in 50 folders, one commit, checked out (git status has a work tree to scan).
const repo = path.join(tmp, 'repo')
const fileName = (i) => `src/d${String(i % 50).padStart(2, '0')}/f${i}.txt`
execFileSync('git', ['init', '-q', '-b', 'main', repo], { env })
const stream = []
const data = (s) => `data ${Buffer.byteLength(s)}\n${s}\n`
stream.push(
  `commit refs/heads/main\nauthor bench <b@b.invalid> 1700000000 +0000\ncommitter bench <b@b.invalid> 1700000000 +0000\n${data('5000 files')}`,
)
for (let i = 0; i < FILES; i++)
  stream.push(`M 100644 inline ${fileName(i)}\n${data(`file ${i}\n${'line of text\n'.repeat(20)}`)}`)
execFileSync('git', ['fast-import', '--quiet'], { cwd: repo, env, input: stream.join('') })
execFileSync('git', ['checkout', '-q', '-f', 'main'], { cwd: repo, env })
fs.writeFileSync(path.join(repo, fileName(7)), 'changed\n') // one dirty file, as in real work

// The pack: 500 sources on real files, 1,000 ledger events, one current passport.
await m.initPack(repo)
const ap = path.join(repo, '.agentpack')
const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repo, env, encoding: 'utf8' }).trim()
const { createHash } = await import('node:crypto')
const sources = []
for (let i = 0; i < SOURCES; i++) {
  const p = fileName(i * 10)
  const buf = fs.readFileSync(path.join(repo, p))
  sources.push({
    path: p,
    hash: createHash('sha256').update(buf).digest('hex'),
    size: buf.length,
    mtimeMs: 1,
    recordedAt: '2026-01-01T00:00:00.000Z',
    summary: `Module ${i} parses section ${i % 17}. Owns the ${i % 9} cache.`,
    snippet: `export function f${i}()`,
  })
}
fs.writeFileSync(path.join(ap, 'sources.json'), `${JSON.stringify({ schemaVersion: 1, sources }, null, 2)}\n`, {
  mode: 0o600,
})
const types = ['decision', 'dead-end', 'source', 'evidence', 'checkpoint']
const lines = []
for (let i = 0; i < EVENTS; i++) {
  const ts = new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString()
  const id = `evt_${ts.replace(/[:.]/g, '-')}_${i.toString(16).padStart(6, '0')}`
  const type = types[i % types.length]
  const e = { id, ts, type }
  if (type === 'decision')
    Object.assign(e, {
      text: `Decision ${i}: keep the parser for section ${i % 17} hand-written.`,
      files: [fileName(i)],
      evidence: [],
    })
  if (type === 'dead-end') Object.assign(e, { text: `Tried approach ${i}`, reason: 'too slow', files: [] })
  if (type === 'source') Object.assign(e, { path: fileName(i), hash: 'a'.repeat(64), summary: `source ${i}` })
  if (type === 'evidence') {
    const rel = `evidence/ev_${ts.replace(/[:.]/g, '-')}_${i.toString(16).padStart(6, '0')}.txt`
    fs.writeFileSync(path.join(ap, rel), `ok ${i} - test passes\n`, { mode: 0o600 })
    Object.assign(e, { kind: 'test', path: rel, command: 'npm test', exitCode: 0 })
  }
  if (type === 'checkpoint')
    Object.assign(e, { checkpointId: ts.replace(/[:.]/g, '-'), summary: `checkpoint ${i}`, status: 'working' })
  lines.push(JSON.stringify(e))
}
fs.writeFileSync(path.join(ap, 'events.jsonl'), `${lines.join('\n')}\n`, { mode: 0o600 })
const id = 'task_2026-01-01T00-00-00-000Z_abcdef_bench'
fs.mkdirSync(path.join(ap, 'tasks', id), { recursive: true, mode: 0o700 })
fs.writeFileSync(
  path.join(ap, 'tasks', id, 'passport.json'),
  `${JSON.stringify({ schemaVersion: 1, id, title: 'bench', status: 'active', createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z', closedAt: null, objective: 'measure', constraints: ['c'], branch: 'main', baseHead: head, currentHead: head, worktree: repo, writeScope: ['src'], risk: 'low', verification: { status: 'pending', evidence: [], summary: '' }, nextActions: ['measure it'], tags: [] }, null, 2)}\n`,
  { mode: 0o600 },
)
fs.writeFileSync(path.join(ap, 'tasks', id, 'events.jsonl'), '', { mode: 0o600 })
fs.writeFileSync(path.join(ap, 'tasks', 'current'), `${id}\n`, { mode: 0o600 })

// What the tools do per call (plugin layer: the MCP pipeline adds its own fixed cost).
async function taskStatusCall() {
  const pack = new m.Pack(repo)
  const s = await m.taskStatus(pack)
  return s.text + m.formatGate(await m.gateFindings(pack, s.passport))
}
async function loadContextCall(preset) {
  const pack = new m.Pack(repo)
  const r = await m.buildResume(pack, { budget: m.PRESETS[preset], query: 'parser section cache' })
  return r.markdown + m.formatGate(await m.gateFindings(pack))
}

/** @param {() => number} gitCount the git processes started so far (in-process by default) */
async function measure(label, n, call, gitCount = m.gitProcesses) {
  const g0 = gitCount()
  const t0 = performance.now()
  const first = await call()
  const firstMs = performance.now() - t0
  const times = []
  for (let i = 0; i < n; i++) {
    const s = performance.now()
    await call()
    times.push(performance.now() - s)
  }
  times.sort((a, b) => a - b)
  const q = (p) => times[Math.min(times.length - 1, Math.floor(p * times.length))]
  const git = (gitCount() - g0) / (n + 1)
  return { label, n, first: firstMs, p50: q(0.5), p99: q(0.99), git, bytes: first.length }
}

console.log(
  `continuity bench: ${FILES} files, ${SOURCES} sources, ${EVENTS} events; node ${process.version}, ${os.cpus().length} CPUs, load ${os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
)
const rows = [await measure('task_status', N, taskStatusCall)]
for (const preset of Object.keys(m.PRESETS))
  rows.push(await measure(`load_context ${preset}`, N_RESUME, () => loadContextCall(preset)))
const pad = (s, n) => String(s).padEnd(n)
console.log(
  `${pad('call', 28)}${pad('n', 6)}${pad('first ms', 10)}${pad('p50 ms', 9)}${pad('p99 ms', 9)}${pad('git/call', 10)}output`,
)
for (const r of rows)
  console.log(
    `${pad(r.label, 28)}${pad(r.n, 6)}${pad(r.first.toFixed(2), 10)}${pad(r.p50.toFixed(2), 9)}${pad(r.p99.toFixed(2), 9)}${pad(r.git.toFixed(2), 10)}${r.bytes} B`,
  )

// The same calls end to end: one ag-mcp process over stdio (modern era), sequential requests,
// from the request write to its answer line parsed (the MCP pipeline, fencing and a pipe hop).
// Its git processes are counted by a `git` first on its PATH that notes each start and execs the
// real one (a shell start more per git process, on the calls that start one).
const AG_MCP = path.join(root, 'dist', 'ag-mcp.mjs')
if (fs.existsSync(AG_MCP)) {
  const realGit = execFileSync('sh', ['-c', 'command -v git'], { env, encoding: 'utf8' }).trim()
  const shim = path.join(tmp, 'shim')
  const starts = path.join(tmp, 'git-starts')
  fs.mkdirSync(shim)
  fs.writeFileSync(path.join(shim, 'git'), `#!/bin/sh\nprintf . >> '${starts}'\nexec '${realGit}' "$@"\n`, {
    mode: 0o755,
  })
  const childGit = () => (fs.existsSync(starts) ? fs.statSync(starts).size : 0)
  const child = spawn(
    process.execPath,
    [AG_MCP, '--allow', 'continuity', '--continuity-root', repo, '--log-level', 'error', '--rate-limit', '100000/s'],
    {
      stdio: ['pipe', 'pipe', 'ignore'],
      env: { ...env, PATH: `${shim}${path.delimiter}${process.env['PATH'] ?? ''}` },
    },
  )
  let buf = ''
  const waiting = new Map()
  child.stdout.on('data', (d) => {
    buf += d
    for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
      const line = buf.slice(0, i)
      buf = buf.slice(i + 1)
      const msg = JSON.parse(line)
      waiting.get(msg.id)?.(msg)
    }
  })
  let next = 1
  const META = {
    'io.modelcontextprotocol/protocolVersion': '2026-07-28',
    'io.modelcontextprotocol/clientCapabilities': {},
  }
  const rpc = (name, args) =>
    new Promise((resolve, reject) => {
      const id = next++
      waiting.set(id, (msg) => {
        waiting.delete(id)
        if (msg.error || msg.result?.isError) reject(new Error(JSON.stringify(msg).slice(0, 300)))
        else resolve(msg)
      })
      child.stdin.write(
        `${JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { _meta: META, name, arguments: args } })}\n`,
      )
    })
  const e2e = [
    await measure('task_status (MCP)', N, () => rpc('task_status', {}).then((m) => JSON.stringify(m)), childGit),
  ]
  for (const preset of Object.keys(m.PRESETS))
    e2e.push(
      await measure(
        `load_context ${preset} (MCP)`,
        N_RESUME,
        () => rpc('load_context', { preset, query: 'parser section cache' }).then((m) => JSON.stringify(m)),
        childGit,
      ),
    )
  child.stdin.end()
  for (const r of e2e)
    console.log(
      `${pad(r.label, 28)}${pad(r.n, 6)}${pad(r.first.toFixed(2), 10)}${pad(r.p50.toFixed(2), 9)}${pad(r.p99.toFixed(2), 9)}${pad(r.git.toFixed(2), 10)}${r.bytes} B`,
    )
  rows.push(...e2e)
} else console.log('(dist/ag-mcp.mjs missing: run npm run build for the end-to-end rows)')
const ts = rows.find((r) => r.label === 'task_status (MCP)') ?? rows[0]
if (!ts) throw new Error('continuity.bench: no task_status figures')
console.log(
  `task_status p50 ${ts.p50.toFixed(2)} ms (target < ${TARGET_MS} ms): ${ts.p50 < TARGET_MS ? 'PASS' : 'FAIL'}; ${ts.git.toFixed(2)} git processes per call (Agentpack: 6-9)`,
)
