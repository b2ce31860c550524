#!/usr/bin/env node
// ag-server benchmark: a repository with 1,000 commits and 5,000 files (built with
// git fast-import), the bundled server on loopback, and requests/s with p50/p99 latency
// for file read, log (100 commits), workspace write and propose. Bounded loops only.
//   node bench/server.bench.mjs        (needs dist/ag-server.mjs: npm run build)
import { execFileSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { agwpWorld } from './agwp-world.mjs'
import { gitEnv } from './proc.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const bin = path.join(root, 'dist/ag-server.mjs')
if (!fs.existsSync(bin)) {
  console.error('server bench: dist/ag-server.mjs missing (run npm run build)')
  process.exit(1)
}
const FILES = 5000
const COMMITS = 1000
const env = gitEnv
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'agwp-bench-'))
const fileName = (i) => `src/d${String(i % 50).padStart(2, '0')}/f${i}.txt`

function buildRepo() {
  const src = path.join(tmp, 'src.git')
  execFileSync('git', ['init', '-q', '--bare', '-b', 'main', src], { env })
  const parts = []
  const data = (s) => `data ${Buffer.byteLength(s)}\n${s}\n`
  let t = 1_700_000_000
  parts.push(
    `commit refs/heads/main\nmark :1\nauthor bench <bench@bench.invalid> ${t} +0000\ncommitter bench <bench@bench.invalid> ${t} +0000\n${data('initial: 5000 files')}`,
  )
  for (let i = 0; i < FILES; i++)
    parts.push(`M 100644 inline ${fileName(i)}\n${data(`file ${i}\n${'line of text for the benchmark\n'.repeat(20)}`)}`)
  for (let c = 2; c <= COMMITS; c++) {
    t += 60
    const f = (c * 7919) % FILES
    parts.push(
      `commit refs/heads/main\nmark :${c}\nauthor bench <bench@bench.invalid> ${t} +0000\ncommitter bench <bench@bench.invalid> ${t} +0000\n${data(`change ${c}`)}from :${c - 1}\nM 100644 inline ${fileName(f)}\n${data(`file ${f} revision ${c}\n`)}`,
    )
  }
  execFileSync('git', ['--git-dir', src, 'fast-import', '--quiet'], { env, input: parts.join('') })
  return src
}

function serve(data) {
  const child = spawn(process.execPath, [bin, 'serve', '--data', data, '--listen', '127.0.0.1:0', '--rate', '0'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  return new Promise((resolve, reject) => {
    let out = ''
    child.stdout.on('data', (d) => {
      out += d
      const m = /listening on (http:\/\/\S+)/.exec(out)
      if (m) resolve({ child, url: m[1] })
    })
    child.on('exit', (code) => reject(new Error(`server exited ${code}`)))
  })
}

async function measure(name, total, concurrency, op) {
  const lat = []
  let next = 0
  const t0 = performance.now()
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (;;) {
        const i = next++
        if (i >= total) return
        const s = performance.now()
        await op(i)
        lat.push(performance.now() - s)
      }
    }),
  )
  const secs = (performance.now() - t0) / 1000
  lat.sort((a, b) => a - b)
  const pct = (p) => lat[Math.min(lat.length - 1, Math.floor((p / 100) * lat.length))]
  return { name, n: total, concurrency, rps: total / secs, p50: pct(50), p99: pct(99) }
}

async function main() {
  const t0 = performance.now()
  const src = buildRepo()
  const buildMs = performance.now() - t0
  const data = path.join(tmp, 'data')
  const { token } = agwpWorld({ agServer: bin, data, repos: { bench: src } }).member({
    principal: 'agent:bench',
    scopes: 'read,workspace,propose',
    role: 'contributor',
    ttl: '1h',
  })
  const { child, url } = await serve(data)
  const call = async (method, p, body) => {
    const r = await fetch(url + p, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body ? { body: JSON.stringify(body) } : {}),
    })
    const j = await r.json()
    if (!r.ok) throw new Error(`${method} ${p}: ${r.status} ${JSON.stringify(j)}`)
    return j
  }
  try {
    const results = []
    results.push(
      await measure('file read', 2000, 8, (i) =>
        call('GET', `/repos/bench/file?path=${encodeURIComponent(fileName((i * 31) % FILES))}`),
      ),
    )
    results.push(await measure('log (100 commits)', 300, 4, () => call('GET', '/repos/bench/log?limit=100')))
    const wss = []
    for (let i = 0; i < 20; i++)
      wss.push(/** @type {{ id: string }} */ (await call('POST', '/repos/bench/workspaces', {})).id)
    results.push(
      await measure('workspace write', 1000, 8, (i) =>
        call('PUT', `/workspaces/${wss[i % wss.length]}/files`, { path: `bench/w${i}.txt`, content: `write ${i}\n` }),
      ),
    )
    const pws = []
    for (let i = 0; i < 100; i++) {
      const id = /** @type {{ id: string }} */ (await call('POST', '/repos/bench/workspaces', {})).id
      await call('PUT', `/workspaces/${id}/files`, { path: fileName(i), content: `proposed ${i}\n` })
      pws.push(id)
    }
    results.push(
      await measure('propose', 100, 4, (i) => call('POST', `/workspaces/${pws[i]}/proposals`, { title: `bench ${i}` })),
    )
    console.log(
      `ag-server bench: repo ${COMMITS} commits / ${FILES} files (fast-import ${buildMs.toFixed(0)} ms), loopback, node ${process.version}, ${os.cpus().length} cpu`,
    )
    console.log('operation            requests  conc     req/s    p50 ms    p99 ms')
    for (const r of results)
      console.log(
        `${r.name.padEnd(20)} ${String(r.n).padStart(8)} ${String(r.concurrency).padStart(5)} ${r.rps.toFixed(1).padStart(9)} ${r.p50.toFixed(2).padStart(9)} ${r.p99.toFixed(2).padStart(9)}`,
      )
  } finally {
    child.kill('SIGTERM')
    await new Promise((r) => child.once('exit', r))
    fs.rmSync(tmp, { recursive: true, force: true })
  }
}

main().catch((e) => {
  console.error(`server bench failed: ${e.message}`)
  process.exit(1)
})
