#!/usr/bin/env node
// ag-server soak: a mixed workload (file/tree reads, log, search, workspace writes,
// proposes, integrates, task claims; 8 reading and 8 writing clients) at concurrency 16 for a fixed duration against the
// bundled server, and the same workload against a baseline build of an older commit, side
// by side in one run. Reports per operation: throughput, p50/p99 in the first and the last
// minute (target: last within 10% of first), the server's RSS every 30 s, its peak and its
// final idle RSS (target: flat after warm-up; the store keeps every workspace, proposal and
// run it is given, so growth is also shown per record kept), and the file-read rate
// relative to the baseline (target: at least 5x). Beside the drift it reports a probe of the
// machine's own speed in the same two windows (see PROBE), and then measures ageing so that
// the machine's drift cannot move it: the aged server and a fresh one take turns under the
// same clients (see agedAgainstFresh; this adds 2 x WINDOW_S and a setup to the run).
// The two servers run concurrently (see main), so the run takes `seconds`, not twice that.
// At the end, each repository's disk beside its packed size (target: within 2x, which the
// server's maintenance must keep) and what maintenance did (see diskReport).
//   node bench/soak.bench.mjs [seconds] [--baseline REV|none] [--rev REV] [--steady] [--no-ageing] [--control]
//   (or SOAK_SECONDS=60 npm run bench soak)
//   --steady: the writers only write files into their workspaces (no proposals, integrations
//   or claims), so the store keeps no new records and RSS and CPU per request must stay flat.
//   (default 300 s each; the baseline defaults to main before issue 14, built from a
//   temporary `git worktree` of that commit with this checkout's node_modules)
import { execFile, execFileSync, spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { buildSync } from 'esbuild'
import { agwpWorld } from './agwp-world.mjs'
import { cpuMs, gitEnv as env, mainThreadMs, scratch, treeCpu, treeCpuMsSince } from './proc.mjs'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const bin = path.join(root, 'dist/ag-server.mjs')
if (!fs.existsSync(bin)) {
  console.error('soak bench: dist/ag-server.mjs missing (run npm run build)')
  process.exit(1)
}
const args = process.argv.slice(2)
const bi = args.indexOf('--baseline')
const ri = args.indexOf('--rev')
// --rev REV: soak the server of an older commit alone (built as the baseline is), e.g. to see
// whether this bench measures an ageing a later commit fixed.
const REV = ri >= 0 ? args[ri + 1] : undefined
const BASELINE = REV ? 'none' : bi >= 0 ? args[bi + 1] : '07e2c4d' // main before issue 14
const SECONDS = Number(
  args.find((a, i) => /^[0-9]+$/.test(a) && !['--baseline', '--rev'].includes(args[i - 1] ?? '')) ??
    process.env.SOAK_SECONDS ??
    300,
)
const CONCURRENCY = 16
const WINDOW_S = Math.min(60, SECONDS / 3) // "first minute" / "last minute" (shorter in short runs)
const FILES = 2000
/** How many files proposals rewrite (see the propose step). */
const PROPOSED_PATHS = 64
/** How many paths each writing client's workspace holds (see the worker). */
const WORKSPACE_PATHS = 200
const COMMITS = 300
const TASKS = 64

const { tmp, children } = scratch('agwp-soak-')
const fileName = (i) => `src/d${String(i % 40).padStart(2, '0')}/f${i}.txt`

function buildSource() {
  const src = path.join(tmp, 'src.git')
  execFileSync('git', ['init', '-q', '--bare', '-b', 'main', src], { env })
  const data = (s) => `data ${Buffer.byteLength(s)}\n${s}\n`
  const who = (t) => `author soak <soak@bench.invalid> ${t} +0000\ncommitter soak <soak@bench.invalid> ${t} +0000\n`
  let t = 1_700_000_000
  const parts = [`commit refs/heads/main\nmark :1\n${who(t)}${data('initial')}`]
  for (let i = 0; i < FILES; i++)
    parts.push(`M 100644 inline ${fileName(i)}\n${data(`file ${i}\n${'a line of soak text\n'.repeat(30)}`)}`)
  for (let c = 2; c <= COMMITS; c++) {
    t += 60
    const f = (c * 7919) % FILES
    parts.push(`commit refs/heads/main\nmark :${c}\n${who(t)}${data(`change ${c}`)}from :${c - 1}\n`)
    parts.push(`M 100644 inline ${fileName(f)}\n${data(`file ${f} revision ${c}\n`)}`)
  }
  execFileSync('git', ['--git-dir', src, 'fast-import', '--quiet'], { env, input: parts.join('') })
  return src
}

/**
 * Build the server of an older commit in a temporary worktree (for the side-by-side run). A
 * commit whose build generates sources (the review page's assets) is built by its own
 * build.mjs, with this checkout's node_modules; an older one is bundled directly.
 */
function buildBaseline(rev) {
  const wt = path.join(tmp, 'baseline')
  execFileSync('git', ['-C', root, 'worktree', 'add', '--detach', '--quiet', wt, rev], { env, stdio: 'pipe' })
  try {
    const out = path.join(tmp, 'ag-server-baseline.mjs')
    if (fs.existsSync(path.join(wt, 'build.mjs')) && fs.existsSync(path.join(wt, 'server/src/ui'))) {
      fs.symlinkSync(path.join(root, 'node_modules'), path.join(wt, 'node_modules'))
      execFileSync(process.execPath, ['build.mjs'], { cwd: wt, env, stdio: 'pipe' })
      fs.copyFileSync(path.join(wt, 'dist/ag-server.mjs'), out)
      return out
    }
    buildSync({
      entryPoints: [path.join(wt, 'bin/ag-server.ts')],
      outfile: out,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      nodePaths: [path.join(root, 'node_modules')],
      banner: { js: "import{createRequire as __cr}from'module';const require=__cr(import.meta.url);" },
      logLevel: 'error',
    })
    return out
  } finally {
    execFileSync('git', ['-C', root, 'worktree', 'remove', '--force', wt], { env, stdio: 'pipe' })
  }
}

/** CPU time this process has used, ms (the bench's clients). */
const clientMs = () => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}

/** The machine's CPU time so far, in ticks: [busy, idle (with iowait), steal]. */
function machineTicks() {
  const line = fs.readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? ''
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = line
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number)
  return [user + nice + system + irq + softirq, idle + iowait, steal]
}

const loadavg = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')

function rssKb(pid) {
  try {
    const m = /VmRSS:\s+([0-9]+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))
    return m ? Number(m[1]) : undefined
  } catch {
    return undefined
  }
}

// SOAK_SERVE_ARGS: more `serve` options for every server, e.g. "--no-lean-heap".
const SERVE_ARGS = (process.env.SOAK_SERVE_ARGS ?? '').split(' ').filter(Boolean)

const mib = (b) => `${(b / 1048576).toFixed(1)} MB`
/** Bytes `du` counts under a directory (blocks, as the disk holds them). */
const du = (dir) => Number(execFileSync('du', ['-s', '-B1', dir], { encoding: 'utf8' }).split('\t')[0])

/**
 * The repository after the soak: its disk beside what it takes packed (a copy, `git gc
 * --prune=now`: what refs reach, one pack, packed refs), and what maintenance did
 * (its state file, maintenance.ts). The server is stopped: nothing writes meanwhile.
 */
/**
 * The repository's disk while the server writes it, every DISK_EVERY_S after warm-up, beside
 * its packed size at that moment: what a mirror clone over the git protocol (`--no-local`,
 * so upload-pack packs what the refs reach as one consistent set) takes. Both at nice 19, and
 * without blocking this process's clients. Returns a stop function that resolves to the samples.
 */
const DISK_EVERY_S = 60
function sampleDisk(gitDir, t0) {
  const run = promisify(execFile)
  const samples = []
  let n = 0
  let busy = Promise.resolve()
  const take = async () => {
    const t = (performance.now() - t0) / 1000
    const copy = path.join(tmp, `sample-${n++}.git`)
    const before = repacking(gitDir)
    // du exits 1 when a file it listed is gone before it reads it (a lock, a loose object
    // just packed), and still prints the total.
    const { stdout } = await run('nice', ['-n', '19', 'du', '-s', '-B1', gitDir]).catch((e) => e)
    const during = before || repacking(gitDir)
    const disk = Number(String(stdout).split('\t')[0])
    if (!(disk > 0)) throw new Error(`du printed no total for ${gitDir}`)
    await run('nice', ['-n', '19', 'git', 'clone', '--quiet', '--mirror', '--no-local', `file://${gitDir}`, copy], {
      env,
    })
    samples.push({ t, disk, packed: du(copy), repacking: during, ...objectsOf(gitDir) })
    fs.rmSync(copy, { recursive: true, force: true })
  }
  const timer = setInterval(() => {
    busy = busy.then(take).catch((e) => console.error(`soak bench: a disk sample failed: ${e.message}`))
  }, DISK_EVERY_S * 1000)
  return async () => {
    clearInterval(timer)
    await busy
    return samples
  }
}

/**
 * Every maintenance run of the repository during the soak, read from its state file (which
 * keeps the last 10) twice a second: what the server's git children spend their time on.
 */
function watchMaintenance(gitDir) {
  const runs = new Map()
  const file = path.join(gitDir, 'agwp-maintenance.json')
  const timer = setInterval(() => {
    let state
    try {
      state = JSON.parse(fs.readFileSync(file, 'utf8'))
    } catch {
      return // not written yet, or being replaced
    }
    for (const r of state.recent ?? []) runs.set(r.started_at, r)
  }, 500)
  return () => {
    clearInterval(timer)
    return [...runs.values()]
  }
}

/** The refs in a repository's packed-refs, and its size. */
function packedRefsOf(gitDir) {
  try {
    const text = fs.readFileSync(path.join(gitDir, 'packed-refs'), 'utf8')
    return { refs: text.split('\n').filter((l) => /^[0-9a-f]{40} /.test(l)).length, bytes: Buffer.byteLength(text) }
  } catch {
    return { refs: 0, bytes: 0 }
  }
}

/** Maintenance runs by their steps: how many, their wall time (niced git: mostly waiting for a CPU). */
function reportMaintenance({ runs, packedRefs }) {
  const by = new Map()
  for (const r of runs) {
    const k = r.steps.join('+')
    const v = by.get(k) ?? { n: 0, ms: 0, max: 0 }
    by.set(k, { n: v.n + 1, ms: v.ms + r.ms, max: Math.max(v.max, r.ms) })
  }
  const rows = [...by].sort((a, b) => b[1].ms - a[1].ms)
  console.log(
    `maintenance runs seen (${runs.length}), by steps: ${rows.map(([k, v]) => `${k} ${v.n}x, ${(v.ms / 1000).toFixed(1)} s (mean ${(v.ms / v.n).toFixed(0)} ms, max ${v.max})`).join('; ')}`,
  )
  console.log(
    `packed-refs at the end: ${packedRefs.refs} refs, ${(packedRefs.bytes / 1024).toFixed(0)} KB (each pack_refs rewrites all of it)`,
  )
}

/**
 * A repack writing its new packs (git's temporary files in objects/pack): until it removes the
 * old ones, the disk holds both.
 */
const repacking = (gitDir) =>
  fs.readdirSync(path.join(gitDir, 'objects', 'pack')).some((f) => f.startsWith('.tmp-') || f.startsWith('tmp_pack_'))

/**
 * What a repository's objects take: pack bytes, of them the cruft packs' (unreachable objects
 * kept for the grace: a .mtimes file beside them), and its loose objects. Files that vanish
 * meanwhile (a live server's maintenance) are skipped.
 */
function objectsOf(gitDir) {
  const objects = path.join(gitDir, 'objects')
  const size = (f) => fs.statSync(f, { throwIfNoEntry: false })?.size ?? 0
  let packBytes = 0
  let cruftBytes = 0
  const packs = fs.readdirSync(path.join(objects, 'pack'))
  for (const f of packs.filter((n) => n.endsWith('.pack'))) {
    const n = size(path.join(objects, 'pack', f))
    packBytes += n
    if (packs.includes(f.replace(/\.pack$/, '.mtimes'))) cruftBytes += n
  }
  let loose = 0
  for (const d of fs.readdirSync(objects).filter((n) => /^[0-9a-f]{2}$/.test(n))) {
    try {
      loose += fs.readdirSync(path.join(objects, d)).length
    } catch {
      // removed meanwhile (prune-packed)
    }
  }
  return { packBytes, cruftBytes, loose }
}

function diskReport(gitDir) {
  const copy = path.join(tmp, `packed-${path.basename(path.dirname(path.dirname(gitDir)))}`)
  fs.cpSync(gitDir, copy, { recursive: true })
  execFileSync('git', ['--git-dir', copy, 'gc', '--quiet', '--prune=now'], { env })
  const count = Object.fromEntries(
    execFileSync('git', ['--git-dir', gitDir, 'count-objects', '-v'], { encoding: 'utf8', env })
      .split('\n')
      .filter(Boolean)
      .map((l) => l.split(': ')),
  )
  const { packBytes, cruftBytes } = objectsOf(gitDir)
  const looseRefs = execFileSync('find', [path.join(gitDir, 'refs'), '-type', 'f'], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean).length
  let state = {}
  try {
    state = JSON.parse(fs.readFileSync(path.join(gitDir, 'agwp-maintenance.json'), 'utf8'))
  } catch {
    // no maintenance ran (--no-maintenance, or a server from before it)
  }
  const steps = {}
  for (const r of state.recent ?? []) for (const st of r.steps) steps[st] = (steps[st] ?? 0) + 1
  const out = {
    disk: du(gitDir),
    packed: du(copy),
    loose: Number(count.count),
    packs: Number(count.packs),
    packBytes,
    cruftBytes,
    looseRefs,
    runs: state.runs ?? 0,
    failures: state.failures ?? 0,
    steps:
      Object.entries(steps)
        .map(([k, v]) => `${k} ${v}`)
        .join(', ') || 'none',
  }
  fs.rmSync(copy, { recursive: true, force: true })
  return out
}

function serve(server, data) {
  // SOAK_CPU_PROF=DIR: write each server's CPU profile there (open in Chrome DevTools).
  const prof = process.env.SOAK_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.SOAK_CPU_PROF}`] : []
  const child = spawn(
    process.execPath,
    [...prof, server, 'serve', '--data', data, '--listen', '127.0.0.1:0', '--rate', '0', ...SERVE_ARGS],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
      env,
    },
  )
  children.push(child)
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

async function setup(server, src, label) {
  const data = path.join(tmp, `data-${label}`)
  const tokenDir = path.join(tmp, `tokens-${label}`)
  fs.mkdirSync(tokenDir)
  const world = agwpWorld({ agServer: server, data, repos: { soak: src }, tokenDir })
  world.admin('policy', 'set', '--repo', 'soak', '--required-approvals', '0')
  const mint = (principal, scopes, role) => world.member({ principal, scopes, role, ttl: '2h' }).token
  const agent = mint('agent:soak', 'read,workspace,propose,coordinate', 'contributor')
  const human = mint('human:maint', 'read,integrate', 'maintainer')
  const admin = fs.readFileSync(path.join(data, 'admin.token'), 'utf8').trim()
  return { data, agent, human, admin }
}

// Half the clients read, half write, each drawing its next operation by weight: the
// writers are the sustained load, the readers measure what reading costs under it (in a
// single mixed loop, a slow integrate would hold back the reads of the same client).
/** @type {[string, number][]} */
const READS = [
  ['file read', 70],
  ['tree read', 15],
  ['log', 10],
  ['search', 5],
]
/** @type {[string, number][]} */
const WRITES = args.includes('--steady')
  ? [['workspace write', 100]]
  : [
      ['workspace write', 50],
      ['propose', 25],
      ['integrate', 10],
      ['claim', 15],
    ]
const OPS = [...READS, ...WRITES]
const AGEING = !args.includes('--no-ageing')
/** --control: no soak; the ageing comparison between two fresh servers (its noise floor). */
const CONTROL = args.includes('--control')

/**
 * A server ready for the clients: set up, listening, with its tasks made and every writing
 * client's workspace filled. `drive` runs the clients against it.
 */
async function prepare(server, src, label) {
  const { data, agent, human, admin } = await setup(server, src, label)
  const { child, url } = await serve(server, data)
  const call = async (token, method, p, body) => {
    const r = await fetch(url + p, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body ? { body: JSON.stringify(body) } : {}),
    })
    // An AGWP answer read by field name; the bench checks status codes, not shapes.
    const j = /** @type {Record<string, any>} */ (await r.json())
    return { status: r.status, body: j }
  }
  const must = async (...a) => {
    const r = await call(...a)
    if (r.status >= 300) throw new Error(`${a[1]} ${a[2]}: ${r.status} ${JSON.stringify(r.body)}`)
    return r.body
  }
  const tasks = []
  for (let i = 0; i < TASKS; i++)
    tasks.push((await must(admin, 'POST', '/admin/repos/soak/tasks', { title: `t${i}` })).id)
  // Each client's workspace holds every path it will write before the clock starts: a write
  // costs more in a workspace with more paths, so one filling up during the run (200 paths
  // drawn at random take most of 5 minutes to all appear) would be data growing, not the
  // server ageing.
  const workspaces = await Promise.all(
    Array.from({ length: CONCURRENCY }, async (_, w) => {
      const id = (await must(agent, 'POST', '/repos/soak/workspaces', {})).id
      if (w % 2 === 1)
        for (let k = 0; k < WORKSPACE_PATHS; k++)
          await must(agent, 'PUT', `/workspaces/${id}/files`, { path: `w/${w}/f${k}.txt`, content: 'initial\n' })
      return id
    }),
  )
  return { child, data, call, must, agent, human, tasks, workspaces }
}

let seq = 0
let rnd = 12345
const rand = () => {
  rnd = (rnd * 1103515245 + 12345) & 0x7fffffff
  return rnd / 0x7fffffff
}
const pick = (mix) => {
  let x = rand() * mix.reduce((a, [, w]) => a + w, 0)
  for (const [op, w] of mix) {
    x -= w
    if (x < 0) return op
  }
  return mix[0][0]
}

/**
 * Runs the CONCURRENCY clients against a prepared server until `end` (performance.now()),
 * each finishing the request it has started. Every request becomes a sample { op, t (ms
 * after t0), ms, ok }; `made(n)` counts records the store keeps for good.
 */
async function drive(target, end, t0, out) {
  const { call, must, agent, human, tasks, workspaces } = target
  const worker = async (w) => {
    const ws = workspaces[w]
    const mix = w % 2 === 0 ? READS : WRITES
    while (performance.now() < end) {
      const op = pick(mix)
      const i = seq++
      const s = performance.now()
      let r
      if (op === 'file read')
        r = await call(agent, 'GET', `/repos/soak/file?path=${encodeURIComponent(fileName((i * 31) % FILES))}`)
      else if (op === 'tree read')
        r = await call(agent, 'GET', `/repos/soak/tree?path=src/d${String(i % 40).padStart(2, '0')}`)
      else if (op === 'log') r = await call(agent, 'GET', '/repos/soak/log?limit=50')
      else if (op === 'search') r = await call(agent, 'GET', `/repos/soak/search?q=revision%20${i % 300}&limit=20`)
      else if (op === 'workspace write')
        r = await call(agent, 'PUT', `/workspaces/${ws}/files`, {
          path: `w/${w}/f${i % WORKSPACE_PATHS}.txt`,
          content: `write ${i}\n`,
        })
      else if (op === 'propose' || op === 'integrate') {
        const pw = (await must(agent, 'POST', '/repos/soak/workspaces', {})).id
        out.made(1)
        // Proposals rewrite one of PROPOSED_PATHS: main keeps the size it reached in the first
        // seconds, so a slower last minute is the server ageing, not more data (one new file per
        // integration grew main by 43% in 5 minutes, and search, which reads every file, with it).
        await must(agent, 'PUT', `/workspaces/${pw}/files`, {
          path: `p/f${i % PROPOSED_PATHS}.txt`,
          content: `proposed ${i}\n`,
        })
        r = await call(agent, 'POST', `/workspaces/${pw}/proposals`, { title: `soak ${i}` })
        if (r.status === 201) out.made(1)
        if (op === 'integrate' && r.status === 201) {
          r = await call(human, 'POST', `/proposals/${r.body.id}/integrate`, { strategy: 'merge' })
          // Two proposals of the same file, both based on an older main: the second one conflicts.
          if (r.status === 409) {
            out.conflicts++
            r = { status: 200 } // an answer, not a failure
          }
        }
      } else {
        r = await call(agent, 'POST', `/tasks/${tasks[i % TASKS]}/claim`, {})
        if (r.status === 201) out.made(1)
        if (r.status === 201) await call(agent, 'POST', `/runs/${r.body.run_id}/release`, { outcome: 'abandoned' })
        else if (r.status === 409) r = { status: 200 } // lost a race for the task: an answer, not a failure
      }
      const ok = r.status < 300
      if (!ok) out.errors.set(`${op} ${r.status}`, (out.errors.get(`${op} ${r.status}`) ?? 0) + 1)
      out.samples.push({ op, t: s - t0, ms: performance.now() - s, ok })
    }
  }
  await Promise.all(Array.from({ length: CONCURRENCY }, (_, w) => worker(w)))
}

/** Where `drive` puts what it saw. */
const tally = (made = () => {}) => ({ samples: [], errors: new Map(), conflicts: 0, made })

// Ageing measured so the machine's drift cannot move it: the aged server (after the soak)
// and a fresh one (new data from the same source, started now) take turns under the same
// clients, in short slices ordered fresh, aged, aged, fresh, ... until each has had
// WINDOW_S of load. A change of the machine's speed over minutes then weighs on both alike,
// and the fresh server's turns are its first minute, as the soak's first window was.
const SLICE_S = Math.min(5, WINDOW_S / 6)

async function agedAgainstFresh(aged, server, src, label, made) {
  const fresh = await prepare(server, src, `${label}-fresh`)
  const seen = { fresh: { ...tally(), cpuMs: 0, mainMs: 0 }, aged: { ...tally(made), cpuMs: 0, mainMs: 0 } }
  const turns = Math.round(WINDOW_S / SLICE_S) * 2
  // What each server's git children use over the whole comparison (maintenance carries on in
  // the other's turns): the server's tree less the server itself.
  const trees = { fresh: treeCpu(fresh.child.pid), aged: treeCpu(aged.child.pid) }
  const own = { fresh: cpuMs(fresh.child.pid), aged: cpuMs(aged.child.pid) }
  for (let k = 0; k < turns; k++) {
    const who = k % 4 === 0 || k % 4 === 3 ? 'fresh' : 'aged'
    const { pid } = (who === 'fresh' ? fresh : aged).child
    const start = performance.now()
    const [cpu0, main0] = [cpuMs(pid), mainThreadMs(pid)]
    await drive(who === 'fresh' ? fresh : aged, start + SLICE_S * 1000, start, seen[who])
    seen[who].cpuMs += cpuMs(pid) - cpu0
    seen[who].mainMs += mainThreadMs(pid) - main0
  }
  for (const who of ['fresh', 'aged'])
    seen[who].gitMs = treeCpuMsSince(trees[who]) - (cpuMs((who === 'fresh' ? fresh : aged).child.pid) - own[who])
  fresh.child.kill('SIGTERM')
  await new Promise((r) => fresh.child.once('exit', r))
  return seen
}

async function soak(server, src, label) {
  const s = await prepare(server, src, label)
  const { child } = s
  const rss = []
  const sampler = setInterval(() => {
    const v = rssKb(child.pid)
    if (v) rss.push({ t: performance.now(), kb: v, cpu: cpuMs(child.pid), client: clientMs(), machine: machineTicks() })
  }, 500)
  // Records the store keeps for good (workspaces, proposals, runs) made after warm-up: the
  // data grows by design, so RSS growth is judged against it.
  let recordsAfterWarm = 0
  const t0 = performance.now()
  const out = tally((n) => {
    if (performance.now() - t0 >= WINDOW_S * 1000) recordsAfterWarm += n
  })
  const cpu0 = cpuMs(child.pid)
  const diskSamples = sampleDisk(path.join(s.data, 'repos/soak.git'), t0)
  const maintenanceRuns = watchMaintenance(path.join(s.data, 'repos/soak.git'))
  await drive(s, t0 + SECONDS * 1000, t0, out)
  const diskDuring = await diskSamples()
  const maintenance = { runs: maintenanceRuns(), packedRefs: packedRefsOf(path.join(s.data, 'repos/soak.git')) }
  const elapsed = (performance.now() - t0) / 1000
  const cpu = cpuMs(child.pid) - cpu0
  const rssEnd = rss.length
  const ageing = AGEING ? await agedAgainstFresh(s, server, src, label, out.made) : undefined
  // final RSS: after the load, once the server has been idle long enough for V8's memory
  // reducer (it starts 8 s after allocation slows) to hand back what the load left
  await new Promise((r) => setTimeout(r, 15_000))
  clearInterval(sampler)
  const finalKb = rssKb(child.pid) ?? 0
  child.kill('SIGTERM')
  await new Promise((r) => child.once('exit', r))
  const disk = diskReport(path.join(s.data, 'repos/soak.git'))
  const during = rss.slice(0, rssEnd)
  const warm = during.filter((x) => x.t - t0 >= WINDOW_S * 1000)
  return {
    label,
    t0,
    elapsed,
    samples: out.samples,
    errors: out.errors,
    conflicts: out.conflicts,
    ageing,
    disk,
    diskDuring,
    maintenance,
    cpuPerRequest: cpu / out.samples.length,
    /** The sampler's reading nearest after `t` s into the run. */
    at: (t) => during.find((x) => x.t - t0 >= t * 1000) ?? during[during.length - 1],
    recordsAfterWarm,
    rss: {
      peakMb: Math.max(...during.map((x) => x.kb)) / 1024,
      warmMb: (warm[0]?.kb ?? 0) / 1024,
      peakAfterWarmMb: Math.max(0, ...warm.map((x) => x.kb)) / 1024,
      finalMb: finalKb / 1024,
    },
  }
}

// The machine is a shared VM whose speed drifts on its own: a neighbour on the same host
// slows every instruction without showing as load here, and in runs of one build the first
// minute's server CPU per request ranged from 0.64 to 1.02 ms. The probe, a process of its
// own, does a fixed piece of work (objects, a Map, JSON, hashing: the server's kind) every
// 2 s and reports the CPU time it took, so a report can tell the server ageing from the
// machine slowing. It costs about 1% of one CPU.
const PROBE = `
const { createHash } = require('node:crypto')
const blob = Buffer.alloc(64 * 1024, 7)
const round = () => {
  const c0 = process.cpuUsage()
  for (let k = 0; k < 4; k++) {
    const m = new Map()
    for (let i = 0; i < 5000; i++) m.set('k' + i, { i, s: 'v' + i, a: [i, i + 1] })
    const text = JSON.stringify([...m.values()])
    JSON.parse(text)
    for (let i = 0; i < 16; i++) createHash('sha1').update(blob).digest('hex')
  }
  const d = process.cpuUsage(c0)
  process.stdout.write((d.user + d.system) / 1000 + '\\n')
}
setInterval(round, 2000)
`

/** Starts the probe; its rounds arrive as { t (this process's clock), ms (the round's CPU) }. */
function startProbe() {
  /** @type {{ t: number, ms: number }[]} */
  const rounds = []
  const child = spawn(process.execPath, ['-e', PROBE], { stdio: ['ignore', 'pipe', 'inherit'] })
  children.push(child)
  createInterface({ input: child.stdout }).on('line', (line) => rounds.push({ t: performance.now(), ms: Number(line) }))
  return { rounds, stop: () => child.kill('SIGTERM') }
}

const pct = (xs, p) => {
  if (xs.length === 0) return NaN
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]
}

/** A number right-aligned in `w` characters with `d` decimals ('-' when not finite). */
const f = (n, w = 8, d = 1) => (Number.isFinite(n) ? n.toFixed(d) : '-').padStart(w)

/** The aged server against the fresh one, per operation, from their interleaved turns. */
function reportAgeing({ fresh, aged }) {
  console.log(
    `ageing: the server after the soak and a fresh one took turns of ${SLICE_S.toFixed(0)} s, ${WINDOW_S.toFixed(0)} s of load each`,
  )
  console.log('operation        fresh n  fresh p50  fresh p99   aged n   aged p50   aged p99   p50 aged')
  let worst = -Infinity
  for (const [op] of OPS) {
    const a = fresh.samples.filter((x) => x.op === op).map((x) => x.ms)
    const b = aged.samples.filter((x) => x.op === op).map((x) => x.ms)
    const d = (pct(b, 50) / pct(a, 50) - 1) * 100
    if (Number.isFinite(d)) worst = Math.max(worst, d)
    console.log(
      `${op.padEnd(16)} ${String(a.length).padStart(7)} ${f(pct(a, 50), 10)} ${f(pct(a, 99), 10)} ${String(b.length).padStart(8)} ${f(pct(b, 50), 10)} ${f(pct(b, 99), 10)} ${f(d, 9)}%`,
    )
  }
  const per = (side, k) => side[k] / side.samples.length
  const [a, b] = [per(fresh, 'cpuMs'), per(aged, 'cpuMs')]
  const [am, bm] = [per(fresh, 'mainMs'), per(aged, 'mainMs')]
  console.log(
    `server CPU per request: fresh ${a.toFixed(3)} ms, aged ${b.toFixed(3)} ms (${f((b / a - 1) * 100, 1)}%; the fresh server's includes warming up, as the soak's first window did)`,
  )
  // The main thread runs the JavaScript; the others are V8's (GC marking and sweeping,
  // compilers) and libuv's pool (fsync, file reads).
  console.log(
    `  main thread: fresh ${am.toFixed(3)} ms, aged ${bm.toFixed(3)} ms (${f((bm / am - 1) * 100, 1)}%); other threads: fresh ${(a - am).toFixed(3)} ms, aged ${(b - bm).toFixed(3)} ms (${f(((b - bm) / (a - am) - 1) * 100, 1)}%)`,
  )
  // git's share: reads (cat-file), merges, and maintenance (its roll-ups and repacks grow with
  // the repository, which is the aged server's).
  const [ag, bg] = [per(fresh, 'gitMs'), per(aged, 'gitMs')]
  console.log(
    `  git children: fresh ${ag.toFixed(3)} ms, aged ${bg.toFixed(3)} ms per request (${f((bg / ag - 1) * 100, 1)}%)`,
  )
  const errs = [...fresh.errors, ...aged.errors].map(([k, v]) => `${k}: ${v}`).join(', ')
  if (errs) console.log(`errors while taking turns: ${errs}`)
  console.log(
    `ageing, p50 of the aged server against a fresh one at the same time: at most ${worst.toFixed(1)}% slower (target 10%): ${worst <= 10 ? 'PASS' : 'FAIL'}`,
  )
}

function report(run, sideBySide, probe) {
  const first = (x) => x.t < WINDOW_S * 1000
  const last = (x) => x.t >= (run.elapsed - WINDOW_S) * 1000
  console.log(
    `\n[${run.label}] ${run.elapsed.toFixed(0)} s at concurrency ${CONCURRENCY}; windows of ${WINDOW_S.toFixed(0)} s`,
  )
  // first/s and last/s: throughput in the two windows. The clients run closed loops, so
  // a window where reads got cheaper (warm caches, a quieter machine) also carries more
  // of them, and the writes of that window queue behind more reads.
  console.log(
    'operation          count    req/s  first p50  first p99   last p50   last p99  p50 drift  first/s   last/s',
  )
  /** @type {Record<string, {rps: number, drift: number}>} */
  const rows = {}
  for (const [op] of OPS) {
    const xs = run.samples.filter((x) => x.op === op)
    const a = xs.filter(first).map((x) => x.ms)
    const b = xs.filter(last).map((x) => x.ms)
    const drift = (pct(b, 50) / pct(a, 50) - 1) * 100
    rows[op] = { rps: xs.length / run.elapsed, drift }
    console.log(
      `${op.padEnd(16)} ${String(xs.length).padStart(6)} ${f(xs.length / run.elapsed)} ${f(pct(a, 50), 10)} ${f(pct(a, 99), 10)} ${f(pct(b, 50), 10)} ${f(pct(b, 99), 10)} ${f(drift, 9)}% ${f(a.length / WINDOW_S)} ${f(b.length / WINDOW_S)}`,
    )
  }
  const all = run.samples.length / run.elapsed
  console.log(
    `all              ${String(run.samples.length).padStart(6)} ${f(all)}   server CPU ${run.cpuPerRequest.toFixed(2)} ms/request (its own threads; git children not counted)`,
  )
  // Server CPU per request in the first and the last window: the drift figure that the
  // rest of the machine's load barely moves (latency drift includes it).
  const [nFirst, nLast] = [run.samples.filter(first).length, run.samples.filter(last).length]
  const inFirst = (k) => (run.at(WINDOW_S)?.[k] ?? NaN) - (run.at(0)?.[k] ?? NaN)
  const inLast = (k) => (run.at(run.elapsed)?.[k] ?? NaN) - (run.at(run.elapsed - WINDOW_S)?.[k] ?? NaN)
  const perRequest = (label, k) => {
    const a = inFirst(k) / nFirst
    const b = inLast(k) / nLast
    console.log(`${label} per request: first ${a.toFixed(2)} ms, last ${b.toFixed(2)} ms (${f((b / a - 1) * 100, 1)}%)`)
  }
  perRequest('server CPU', 'cpu')
  // The clients run in this process; side by side it drives both servers.
  if (!sideBySide) perRequest('bench client CPU (this process)', 'client')
  // What else the machine did in the two windows: a latency can rise with no CPU cost
  // anywhere if the host takes the CPUs away (steal) or the machine is busy with others.
  const share = (w) => {
    const [from, to] = w === 'first' ? [0, WINDOW_S] : [run.elapsed - WINDOW_S, run.elapsed]
    const a = run.at(from)?.machine
    const b = run.at(to)?.machine
    if (!a || !b) return '-'
    const d = b.map((x, i) => x - a[i])
    const total = d.reduce((x, y) => x + y, 0)
    return `busy ${((d[0] / total) * 100).toFixed(0)}%, steal ${((d[2] / total) * 100).toFixed(1)}%`
  }
  console.log(`machine (all CPUs, /proc/stat): first window ${share('first')}; last window ${share('last')}`)
  // The probe's rounds in the same two windows (its first rounds warm up its own JIT).
  const rounds = probe.slice(3)
  const inWindow = (from, to) =>
    rounds.filter((r) => r.t >= run.t0 + from * 1000 && r.t < run.t0 + to * 1000).map((r) => r.ms)
  const probeFirst = pct(inWindow(0, WINDOW_S), 50)
  const probeLast = pct(inWindow(run.elapsed - WINDOW_S, run.elapsed), 50)
  console.log(
    `machine probe (fixed work in a process of its own, CPU ms a round, median): first ${f(probeFirst, 1)}, last ${f(probeLast, 1)} (${f((probeLast / probeFirst - 1) * 100, 1)}%): how much the machine itself slowed`,
  )
  console.log(
    `RSS MB: peak ${run.rss.peakMb.toFixed(1)}, after warm-up ${run.rss.warmMb.toFixed(1)}, peak after warm-up ${run.rss.peakAfterWarmMb.toFixed(1)}, final (15 s idle) ${run.rss.finalMb.toFixed(1)}`,
  )
  const marks = []
  for (let s = 30; s <= run.elapsed + 0.5; s += 30) marks.push(`${s}s ${((run.at(s)?.kb ?? NaN) / 1024).toFixed(0)}`)
  console.log(`RSS MB every 30 s: ${marks.join(', ')}`)
  // The store keeps every workspace, proposal and run: memory grows with that data by
  // design. Charging all of RSS's growth after warm-up to it gives an upper bound per record.
  const grew = run.rss.peakAfterWarmMb - run.rss.warmMb
  const kept = run.rss.finalMb - run.rss.warmMb
  const perRecord = (mb) =>
    run.recordsAfterWarm > 0 ? ` (${((mb * 1024) / run.recordsAfterWarm).toFixed(2)} KB per record)` : ''
  console.log(
    `after warm-up: ${run.recordsAfterWarm} records kept (workspaces, proposals, runs); RSS peak ${grew.toFixed(1)} MB over the after-warm-up figure${perRecord(grew)}, idle RSS ${kept.toFixed(1)} MB over it${perRecord(kept)}`,
  )
  // Ageing shows as a slower last window; a faster one (warm caches, a quieter machine) is not a failure.
  const worst = Math.max(...Object.values(rows).map((r) => (Number.isFinite(r.drift) ? r.drift : -Infinity)))
  console.log(
    `p50 drift, last window against the first: at most ${worst.toFixed(1)}% slower (target 10%): ${worst <= 10 ? 'PASS' : 'FAIL'}${sideBySide ? ' (side by side the two servers share the CPUs, so drift is also how they shared them: judge it with --baseline none)' : ''}; the machine's own speed moves this too (see the probe), and cannot move the ageing line below`,
  )
  if (run.ageing) reportAgeing(run.ageing)
  const merged = run.samples.filter((x) => x.op === 'integrate' && x.ok).length
  console.log(
    `integrations: ${merged - run.conflicts} merged, ${run.conflicts} refused as conflicts; main holds at most ${FILES + PROPOSED_PATHS} files`,
  )
  const errs = [...run.errors].map(([k, v]) => `${k}: ${v}`).join(', ')
  console.log(`errors: ${errs || 'none'}`)
  const d = run.disk
  console.log(
    `repository on disk: ${mib(d.disk)} vs ${mib(d.packed)} packed = ${(d.disk / d.packed).toFixed(2)}x (target 2x): ${d.disk <= 2 * d.packed ? 'PASS' : 'FAIL'}; ${d.loose} loose objects, ${d.packs} packs (${mib(d.packBytes)}, cruft ${mib(d.cruftBytes)}), ${d.looseRefs} loose refs; maintenance: ${d.runs} runs, ${d.failures} failed (last 10 runs: ${d.steps})`,
  )
  if (run.diskDuring.length) {
    const worst = run.diskDuring.reduce((a, x) => (x.disk / x.packed > a.disk / a.packed ? x : a))
    const r = worst.disk / worst.packed
    // (r: a sample taken while a repack was writing its new packs, the old ones still there)
    console.log(
      `repository on disk during the run, every ${DISK_EVERY_S} s (${run.diskDuring.length} samples; r: a repack was writing its new packs): ${run.diskDuring.map((x) => `${(x.disk / x.packed).toFixed(2)}x${x.repacking ? 'r' : ''}`).join(' ')}; at most ${r.toFixed(2)}x (${mib(worst.disk)} vs ${mib(worst.packed)} at ${worst.t.toFixed(0)} s${worst.repacking ? ', during a repack' : ''}: packs ${mib(worst.packBytes)}, cruft ${mib(worst.cruftBytes)} of them, ${worst.loose} loose objects; target 2x): ${r <= 2 ? 'PASS' : 'FAIL'}`,
    )
  }
  if (run.maintenance) reportMaintenance(run.maintenance)
  return rows
}

async function main() {
  const src = buildSource()
  if (CONTROL) {
    // Two fresh servers in the turns of the ageing comparison: what it reads when nothing
    // aged, so its noise on this machine.
    console.log(
      `ag-server soak, control: two fresh servers taking turns (${WINDOW_S.toFixed(0)} s of load each); "aged" below is the one set up first`,
    )
    reportAgeing(await agedAgainstFresh(await prepare(bin, src, 'control'), bin, src, 'control', () => {}))
    return
  }
  console.log(
    `ag-server soak: ${FILES} files / ${COMMITS} commits, ${SECONDS} s per server, concurrency ${CONCURRENCY}, node ${process.version}, ${os.cpus().length} cpu`,
  )
  // Both servers run at the same time, each under its own 16 clients: whatever else the
  // machine is doing weighs on both alike, so the ratio compares the servers.
  const base = BASELINE !== 'none' ? buildBaseline(BASELINE) : undefined
  const load0 = loadavg()
  const probe = startProbe()
  const results = await Promise.all([
    ...(base ? [soak(base, src, `baseline ${BASELINE}`)] : []),
    REV ? soak(buildBaseline(REV), src, `rev ${REV}`) : soak(bin, src, 'current'),
  ])
  probe.stop()
  const runs = results.map((r) => report(r, results.length > 1, probe.rounds))
  // The machine is shared: its load average says how much of the drift is the neighbours'.
  console.log(`\nload average at start: ${load0}; at end: ${loadavg()}`)
  if (runs.length === 2) {
    const ratio = (runs[1]?.['file read']?.rps ?? 0) / (runs[0]?.['file read']?.rps ?? 1)
    console.log(
      `\nfile reads under load: ${ratio.toFixed(2)}x the baseline (target 5x): ${ratio >= 5 ? 'PASS' : 'FAIL'}`,
    )
  }
}

main().catch((e) => {
  console.error(`soak bench failed: ${e.stack ?? e.message}`)
  process.exitCode = 1
})
