#!/usr/bin/env node
// The agit group's figures (issue 11), through the bundled dist/ag-mcp.mjs over stdio in a real
// git repository, no upstream (local mode):
//   1. agit_log_step (a batch of one thought, locked append) beside server_info (a tools/call that
//      does nothing), alternated, N sequential round trips each: p50/p99 in µs.
//   2. agit_get_relevant_context (two-word queries, see below) over 100,000 stored thoughts (1,000 neural commits of 100 thoughts
//      each, written to git as AGIT's V2 layout): the first search in a fresh process (builds the
//      MiniSearch index from git and persists it), then p50/p99 of the next searches; again in a
//      fresh process whose first search loads the persisted index; RSS with the index loaded.
// A benchmark, not a test: it prints PASS/FAIL against the target (search p50 < 20 ms) and exits
// non-zero only when a measurement broke.
//   BENCH_AGIT_ENTRIES (default 100000), BENCH_AGIT_N (default 500) round trips per tool,
//   BENCH_AGIT_QUERIES=common (query words as frequent as in the thoughts; see below).
import { createHash } from 'node:crypto'
import { spawn, execFileSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { cpus, loadavg, tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { endAndWait, gitEnv as env } from './proc.mjs'

const root = join(dirname(fileURLToPath(import.meta.url)), '..')
const AG_MCP = join(root, 'dist', 'ag-mcp.mjs')
const ENTRIES = Number(process.env['BENCH_AGIT_ENTRIES'] ?? 100_000)
const PER_COMMIT = 100
const N = Number(process.env['BENCH_AGIT_N'] ?? 500)
const SEARCHES = 200
if (!existsSync(AG_MCP)) {
  console.error(`agit.bench: ${AG_MCP} is missing; run \`npm run build\` first (npm run bench does)`)
  process.exit(1)
}
const tmp = mkdtempSync(join(tmpdir(), 'agit-bench-'))
process.on('exit', () => rmSync(tmp, { recursive: true, force: true }))
const git = (cwd, args, input) =>
  execFileSync('git', args, { cwd, env, input, encoding: 'utf8', maxBuffer: 1 << 30 }).trim()

// ---- the repository: AGIT's V2 layout, 1,000 neural commits written with one git fast-import ----
const repo = join(tmp, 'repo')
mkdirSync(repo)
git(repo, ['init', '-q', '-b', 'main'])
writeFileSync(join(repo, 'app.ts'), 'export {}\n')
git(repo, ['add', '.'])
git(repo, ['commit', '-q', '-m', 'initial'])
const head = git(repo, ['rev-parse', 'HEAD'])
mkdirSync(join(repo, '.agit/tmp'), { recursive: true })
writeFileSync(join(repo, '.agit/HEAD'), 'main')
writeFileSync(join(repo, '.agit/index'), '')
writeFileSync(join(repo, '.agit/config.json'), '{\n  "storage_version": 2\n}')

// Thoughts are drawn from a 5,000-word vocabulary with Zipf-like frequencies (rank r about 1/r, as
// in prose: the top words are everywhere, most are rare). Queries are two words drawn uniformly
// from ranks 100 to 4,999: what people search for are specific terms, not the commonest words.
let seed = 42
const rand = () => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff
  return seed / 0x7fffffff
}
const syll = ['ka', 'to', 'ri', 'mu', 'se', 'lo', 'na', 'pe', 'di', 'vu', 'zo', 'gi']
const vocab = Array.from({ length: 5000 }, (_, i) => {
  let w = ''
  let x = i + 7
  do {
    w += syll[x % syll.length]
    x = Math.floor(x / syll.length)
  } while (x > 0)
  return w
})
const word = () => vocab[Math.min(vocab.length - 1, Math.floor(Math.exp(rand() * Math.log(vocab.length + 1))) - 1)]
const queryWord = () => vocab[100 + Math.floor(rand() * (vocab.length - 100))]
const sentence = () => Array.from({ length: 8 + Math.floor(rand() * 12) }, word).join(' ')

const t0 = performance.now()
const blobId = (s) =>
  createHash('sha1')
    .update(`blob ${Buffer.byteLength(s)}\0`)
    .update(s)
    .digest('hex')
const chunks = []
const add = (json) => {
  chunks.push(`blob\ndata ${Buffer.byteLength(json)}\n${json}\n`)
  return blobId(json)
}
const at = 1767225600
const roadmap = add(
  `{"object_type":"blob","schema_version":1,"created_at":${at},"data":{"content_type":"roadmap","content":"No roadmap set. Use 'agit roadmap' to set project goals."}}`,
)
let parent
for (let c = 0; c < ENTRIES / PER_COMMIT; c++) {
  const lines = []
  for (let i = 0; i < PER_COMMIT; i++)
    lines.push(`[${String(i % 24).padStart(2, '0')}:00:00] ${i % 2 ? 'ai/reasoning' : 'user/intent'}: ${sentence()}`)
  const trace = add(
    `{"object_type":"blob","schema_version":1,"created_at":${at + c},"data":{"content_type":"trace","content":${JSON.stringify(lines.join('\n'))}}}`,
  )
  parent = add(
    `{"object_type":"neural_commit","schema_version":1,"created_at":${at + c},"data":{"git_hash":"${head}",${parent ? `"parent_hash":"${parent}",` : ''}"author":"bench@bench.invalid","roadmap_hash":"${roadmap}","trace_hash":"${trace}","summary":"Manual update.","created_at":${at + c}}}`,
  )
}
git(repo, ['fast-import', '--quiet'], chunks.join(''))
git(repo, ['update-ref', 'refs/agit/heads/main', parent])
console.log(
  `set-up: ${ENTRIES.toLocaleString('en')} thoughts in ${ENTRIES / PER_COMMIT} neural commits (git fast-import) in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
)
console.log(
  `machine: ${cpus().length} CPUs, load ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
)

// ---- a stdio client ----
const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'agit-bench', version: '1' },
}
function start() {
  // ag-mcp's default --rate-limit (20/s) would refuse a benchmark's back-to-back calls: raise it.
  const child = spawn(process.execPath, [AG_MCP, '--rate-limit=1000000/s'], {
    cwd: repo,
    env,
    stdio: ['pipe', 'pipe', 'ignore'],
  })
  const exited = new Promise((r) => child.on('exit', r))
  const waiting = new Map()
  let rest = ''
  let id = 0
  child.stdout.setEncoding('utf8').on('data', (s) => {
    rest += s
    for (let nl = rest.indexOf('\n'); nl >= 0; nl = rest.indexOf('\n')) {
      const line = rest.slice(0, nl)
      rest = rest.slice(nl + 1)
      const msg = JSON.parse(line)
      waiting.get(msg.id)?.(msg)
      waiting.delete(msg.id)
    }
  })
  const call = (name, args) =>
    new Promise((resolve, reject) => {
      const n = ++id
      const timer = setTimeout(() => reject(new Error(`${name}: no answer in 120 s`)), 120_000)
      waiting.set(n, (m) => {
        clearTimeout(timer)
        if (m.error || m.result?.isError)
          reject(new Error(`${name}: ${JSON.stringify(m.error ?? m.result).slice(0, 300)}`))
        else resolve(m.result)
      })
      child.stdin.write(
        `${JSON.stringify({ jsonrpc: '2.0', id: n, method: 'tools/call', params: { name, arguments: args, _meta: META } })}\n`,
      )
    })
  const rss = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024
  return { call, rss, close: () => endAndWait(child, exited) }
}
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]
}
const timed = async (f) => {
  const a = process.hrtime.bigint()
  await f()
  return Number(process.hrtime.bigint() - a) / 1000
}

// ---- 1. agit_log_step beside a no-op tools/call ----
{
  const p = start()
  for (let i = 0; i < 50; i++) {
    await p.call('server_info', {})
    await p.call('agit_log_step', { batch: [{ role: 'ai', category: 'reasoning', content: `warm ${i}` }] })
  }
  const noop = []
  const log = []
  for (let i = 0; i < N; i++) {
    noop.push(await timed(() => p.call('server_info', {})))
    log.push(
      await timed(() =>
        p.call('agit_log_step', {
          batch: [
            { role: 'ai', category: 'reasoning', content: sentence(), locations: [{ file: 'app.ts', start_line: 1 }] },
          ],
        }),
      ),
    )
  }
  console.log(`\n1. ${N} sequential round trips each, alternated (µs)`)
  console.log(
    `   server_info (no-op)   p50 ${pct(noop, 50).toFixed(0).padStart(6)}   p99 ${pct(noop, 99).toFixed(0).padStart(6)}`,
  )
  console.log(
    `   agit_log_step         p50 ${pct(log, 50).toFixed(0).padStart(6)}   p99 ${pct(log, 99).toFixed(0).padStart(6)}`,
  )
  await p.close()
  // The log steps are pending thoughts now: searches cover them too. Leave the index as it was
  // for the search figures (100,000 committed + these pending ones).
}

// ---- 2. agit_get_relevant_context over the stored thoughts ----
// BENCH_AGIT_QUERIES=common draws the query words from the thoughts' own distribution instead
// (the commonest words dominate: a worst case where most of the 100,000 thoughts match).
const common = process.env['BENCH_AGIT_QUERIES'] === 'common'
const queries = Array.from({ length: SEARCHES + 20 }, () =>
  common ? `${word()} ${word()}` : `${queryWord()} ${queryWord()}`,
)
async function searchRound(label) {
  const p = start()
  await p.call('server_info', {})
  const base = p.rss()
  const first = await timed(() => p.call('agit_get_relevant_context', { query: queries[0], limit: 5 }))
  for (let i = 1; i < 20; i++) await p.call('agit_get_relevant_context', { query: queries[i], limit: 5 })
  const after = []
  for (let i = 20; i < queries.length; i++)
    after.push(await timed(() => p.call('agit_get_relevant_context', { query: queries[i], limit: 5 })))
  const rss = p.rss()
  await p.close()
  const p50 = pct(after, 50) / 1000
  console.log(`   ${label}`)
  console.log(`     first search ${(first / 1000).toFixed(0).padStart(6)} ms`)
  console.log(
    `     next ${SEARCHES}: p50 ${p50.toFixed(2)} ms, p99 ${(pct(after, 99) / 1000).toFixed(2)} ms   ${p50 < 20 ? 'PASS' : 'FAIL'} (target p50 < 20 ms)`,
  )
  console.log(`     RSS ${base.toFixed(0)} MiB before the first search, ${rss.toFixed(0)} MiB with the index loaded`)
}
console.log(
  `\n2. agit_get_relevant_context over ${ENTRIES.toLocaleString('en')} committed thoughts (+ ${N + 50} pending), limit 5, ${common ? 'common' : 'specific'} two-word queries`,
)
await searchRound('fresh process, no persisted index (built from git, then persisted):')
const persisted = join(repo, '.agit/ag-mcp/search.json')
console.log(`   persisted index: ${(readFileSync(persisted).length / 1024 / 1024).toFixed(1)} MiB`)
await searchRound('fresh process, persisted index (loaded on the first search):')
