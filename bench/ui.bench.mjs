#!/usr/bin/env node
// The review page's speed (issue 29): how long headless Chromium takes from navigation to the
// page showing its data (the `ui:rendered` mark the page sets), for a proposal whose diff is
// 2,000 lines (10 files of 200, unified and side by side), against a one-line diff in the same
// run (the baseline: everything but the diff), and for the list when the server holds 1,000
// proposals (its first page and a later one) against the same list filtered to none. Target:
// < 300 ms for each. Samples alternate between target and baseline; medians and p90 are reported.
//   node bench/ui.bench.mjs     (needs dist/ag-server.mjs and /usr/bin/chromium)
// Environment: BENCH_UI_N samples per page (default 15).
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { chromium } from 'playwright-core'
import { agwpWorld, listening } from './agwp-world.mjs'
import { gitEnv, run, scratch } from './proc.mjs'

const root = resolve(fileURLToPath(new URL('..', import.meta.url)))
const AG_SERVER = join(root, 'dist', 'ag-server.mjs')
const CHROMIUM = '/usr/bin/chromium'
// The same flags as test/helpers/browser.ts.
const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]
const N = Math.max(3, Math.min(100, Number(process.env.BENCH_UI_N ?? 15)))
const TARGET_MS = 300
/** @type {[string, string][]} */
const needed = [
  ['dist/ag-server.mjs (npm run build)', AG_SERVER],
  ['/usr/bin/chromium (apt-get install -y chromium)', CHROMIUM],
]
for (const [what, path] of needed)
  if (!existsSync(path)) {
    console.error(`ui bench: ${what} is missing`)
    process.exit(1)
  }

const { tmp, children, cleanup } = scratch('ag-ui-bench-')

/** A repository of 10 files of 300 lines each; the proposal rewrites 100 lines of each. */
function source() {
  const src = join(tmp, 'src')
  mkdirSync(join(src, 'lib'), { recursive: true })
  run('git', ['init', '-q', '-b', 'main'], src)
  for (let f = 0; f < 10; f++) {
    const lines = []
    for (let i = 0; i < 300; i++)
      lines.push(i % 10 === 0 ? `// section ${i}` : `export const v${f}_${i} = compute(${i}, 'value ${i}') + ${i * 3}`)
    writeFileSync(join(src, 'lib', `mod${f}.js`), `${lines.join('\n')}\n`)
  }
  run('git', ['add', '.'], src)
  run('git', ['commit', '-qm', 'initial'], src)
  return src
}

async function startServer() {
  const data = join(tmp, 'data')
  const world = agwpWorld({ agServer: AG_SERVER, data, repos: { demo: source() } })
  const agent = world.member({ principal: 'agent:bench', scopes: 'read,workspace,propose', role: 'contributor' }).token
  const person = world.member({ principal: 'human:reviewer', scopes: 'read,review', role: 'reviewer' }).token
  const child = spawn(
    process.execPath,
    [AG_SERVER, 'serve', '--data', data, '--listen', '127.0.0.1:0', '--rate', '0', '--ui'],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: gitEnv,
    },
  )
  children.push(child)
  const origin = await listening(child)
  return { origin, agent, person }
}

/**
 * @param {string} origin @param {string} token
 * @returns {(method: string, path: string, body?: unknown) => Promise<{ id: string }>}
 */
function agwp(origin, token) {
  return async (method, path, body) => {
    const res = await fetch(`${origin}/agwp/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    const json = /** @type {{ id: string }} */ (await res.json())
    if (!res.ok) throw new Error(`${method} ${path}: ${JSON.stringify(json)}`)
    return json
  }
}

async function propose(api, title, files) {
  const ws = (await api('POST', '/repos/demo/workspaces', {})).id
  for (const [path, content] of Object.entries(files)) await api('PUT', `/workspaces/${ws}/files`, { path, content })
  return (await api('POST', `/workspaces/${ws}/proposals`, { title, reasoning: 'Bench.' })).id
}

const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]
const fmt = (ms) => `${ms.toFixed(0).padStart(6)} ms`

const { origin, agent, person } = await startServer()
const api = agwp(origin, agent)
const big = {}
for (let f = 0; f < 10; f++) {
  const lines = readFileSync(join(tmp, 'src', 'lib', `mod${f}.js`), 'utf8').split('\n')
  // Lines 100..199 rewritten: 100 deletions and 100 additions in one hunk, with context around them.
  for (let i = 100; i < 200; i++)
    lines[i] = `export const w${f}_${i} = render(${i}, "changed ${i}") * ${i} // rewritten`
  big[`lib/mod${f}.js`] = lines.join('\n')
}
const bigId = await propose(api, 'A 2,000-line change', big)
const smallId = await propose(api, 'A one-line change', { 'README.md': 'one line\n' })

const profile = mkdtempSync(join(tmp, 'chromium-'))
const context = await chromium.launchPersistentContext(profile, {
  executablePath: CHROMIUM,
  headless: true,
  args: ARGS,
  viewport: { width: 1280, height: 900 },
})
const page = context.pages()[0] ?? (await context.newPage())
await page.goto(`${origin}/ui/`)
await page.locator('#token').fill(person)
await page.getByRole('button', { name: 'Sign in' }).click()
await page.getByTestId('principal').waitFor()

/** Navigation start to the page's `ui:rendered` mark, and from its data's arrival (`ui:data`) to it, in ms. */
async function sample(url) {
  await page.goto(url)
  await page.locator('html[data-rendered]').waitFor({ state: 'attached' })
  return page.evaluate(() => {
    const at = (name) => performance.getEntriesByName(name).at(-1)?.startTime ?? Number.NaN
    return { total: at('ui:rendered'), render: at('ui:rendered') - at('ui:data') }
  })
}

async function compare(label, target, baseline) {
  await sample(target)
  await sample(baseline)
  const t = []
  const r = []
  const b = []
  for (let i = 0; i < N; i++) {
    const s = await sample(target)
    t.push(s.total)
    r.push(s.render)
    b.push((await sample(baseline)).total)
  }
  const ratio = pct(t, 50) / pct(b, 50)
  console.log(
    `${label.padEnd(46)} p50 ${fmt(pct(t, 50))}  p90 ${fmt(pct(t, 90))}  (render ${fmt(pct(r, 50))})  baseline p50 ${fmt(pct(b, 50))}  ratio ${ratio.toFixed(2)}x`,
  )
  return pct(t, 50)
}

const rows = await (async () => {
  await sample(`${origin}/ui/p/${bigId}`)
  return page.locator('table.diff tr.add, table.diff tr.del, table.diff tr.ctx').count()
})()
console.log(
  `\n${N} samples per page, alternating with its baseline: navigation start to the page's ui:rendered mark (render: from its data's arrival)`,
)
console.log(`the big proposal renders ${rows} diff lines in 10 files; the baseline is a one-line diff\n`)
const unified = await compare(
  'proposal, 2,000-line diff, unified',
  `${origin}/ui/p/${bigId}`,
  `${origin}/ui/p/${smallId}`,
)
const split = await compare(
  'proposal, 2,000-line diff, side by side',
  `${origin}/ui/p/${bigId}?view=split`,
  `${origin}/ui/p/${smallId}?view=split`,
)
const listAll = `${origin}/ui/?state=all`

// The list, once the server holds 1,000 proposals (998 more, made through AGWP as an agent would).
// One workspace proposed again and again: a proposal per request, as many as needed.
const ids = [bigId, smallId]
const many = (await api('POST', '/repos/demo/workspaces', {})).id
await api('PUT', `/workspaces/${many}/files`, { path: 'docs/note.md', content: 'a note\n' })
const started = Date.now()
for (let start = 0; start < 998; start += 8) {
  const batch = Array.from({ length: Math.min(8, 998 - start) }, (_, k) =>
    api('POST', `/workspaces/${many}/proposals`, { title: `Change ${start + k}` }).then((p) => p.id),
  )
  ids.push(...(await Promise.all(batch)))
}
console.log(
  `\nthe server now holds ${ids.length} proposals (${((Date.now() - started) / 1000).toFixed(1)} s to make 998)`,
)
const listBase = `${origin}/ui/?state=all&author=nobody`
const list = await compare('list of 1,000 proposals, first page of 50', listAll, listBase)
const later = await compare('list of 1,000 proposals, page 11 (offset 500)', `${listAll}&offset=500`, listBase)
await sample(`${listAll}&offset=500`)
const range = await page.getByTestId('range').textContent()
console.log(`(page 11 says: ${range}; each list's baseline is the same page filtered to none)`)
await context.close()

console.log('')
console.log(
  `${'   2,000-line diff, unified: p50 < 300 ms'.padEnd(48)}${fmt(unified)}  ${unified < TARGET_MS ? 'PASS' : 'FAIL'}`,
)
console.log(
  `${'   2,000-line diff, side by side: p50 < 300 ms'.padEnd(48)}${fmt(split)}  ${split < TARGET_MS ? 'PASS' : 'FAIL'}`,
)
console.log(
  `${'   list of 1,000, first and later page: p50 < 300 ms'.padEnd(48)}${fmt(Math.max(list, later))}  ${Math.max(list, later) < TARGET_MS ? 'PASS' : 'FAIL'}`,
)
// The server child keeps the event loop alive: end it and leave.
cleanup()
process.exit(0)
