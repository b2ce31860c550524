#!/usr/bin/env node
// Sequential round trips against stdio servers, one server at a time: each request is written
// only after the previous answer's newline arrived. Run by mcp.bench.mjs, once as is and once
// under `taskset -c 0` (the servers inherit the CPU affinity): on one CPU the figure measures
// the code path; across CPUs it adds the machine's cross-CPU wake-up latency, which on a small
// VM is larger than the work and differs from one process to the next.
//
//   node bench/rtt.mjs '<json>'   json: { n, warmup, hello, request, servers: [{ key, args }] }
//   prints { [key]: { p50, p99 } | { error } } (microseconds) on stdout
import { spawn } from 'node:child_process'

const cfg = JSON.parse(process.argv[2] ?? '{}')
const TIMEOUT_MS = 30_000

/** @param {string[]} args @returns {Promise<number[]>} round trips in µs */
async function roundTrips(args) {
  const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'ignore'] })
  /** @type {(t: bigint) => void} */
  let wake = () => {}
  let rest = ''
  child.stdout.setEncoding('utf8').on('data', (s) => {
    const t = process.hrtime.bigint()
    rest += s
    if (rest.endsWith('\n')) {
      rest = ''
      wake(t)
    }
  })
  const died = new Promise((_, reject) =>
    child.on('exit', (code) => reject(new Error(`exited (${code}) during the round trips`))),
  )
  const answer = () =>
    Promise.race([
      new Promise((resolve) => (wake = resolve)),
      died,
      new Promise((_, reject) =>
        setTimeout(() => reject(new Error(`no answer within ${TIMEOUT_MS} ms`)), TIMEOUT_MS).unref(),
      ),
    ])
  try {
    child.stdin.write(cfg.hello)
    await answer()
    const rtts = []
    for (let i = 0; i < cfg.warmup + cfg.n; i++) {
      const req = cfg.request.replace('"id":0', `"id":${i + 10}`)
      const got = answer()
      const t0 = process.hrtime.bigint()
      child.stdin.write(req)
      const t1 = /** @type {bigint} */ (await got)
      if (i >= cfg.warmup) rtts.push(Number(t1 - t0) / 1000)
    }
    return rtts
  } finally {
    died.catch(() => {})
    child.stdin.end()
  }
}

/** @param {number[]} xs @param {number} q */
function quantile(xs, q) {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN
}

/** @type {Record<string, unknown>} */
const out = {}
for (const { key, args } of cfg.servers) {
  try {
    const rtts = await roundTrips(args)
    out[key] = { p50: quantile(rtts, 0.5), p99: quantile(rtts, 0.99) }
  } catch (e) {
    out[key] = { error: /** @type {Error} */ (e).message }
  }
}
process.stdout.write(`${JSON.stringify(out)}\n`)
