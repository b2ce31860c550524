#!/usr/bin/env node
// `npm run bench`: runs every bench/*.bench.mjs in its own child process, one after the other
// in alphabetical order, with their output streamed as it comes. A benchmark reports figures;
// it does not fail on them (each bench prints PASS/FAIL against its targets). This exits
// non-zero only when a bench crashes (non-zero exit or a signal).
//   node bench/index.mjs            all benches
//   node bench/index.mjs mcp server only the benches whose file name contains one of the words
//   node bench/index.mjs scale -- 100  what follows `--` is passed to each selected bench
//   node bench/index.mjs soak -- 60  the soak (default 5 minutes) for one minute (or SOAK_SECONDS=60)
import { spawn } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const dir = dirname(fileURLToPath(import.meta.url))
const argv = process.argv.slice(2)
const dashes = argv.indexOf('--')
const filters = dashes < 0 ? argv : argv.slice(0, dashes)
const passed = dashes < 0 ? [] : argv.slice(dashes + 1)
const all = readdirSync(dir)
  .filter((f) => f.endsWith('.bench.mjs'))
  .sort()
const selected = filters.length === 0 ? all : all.filter((f) => filters.some((w) => f.includes(w)))

if (selected.length === 0) {
  console.error(`bench: nothing matches ${filters.join(', ')}; available: ${all.join(', ') || '(none)'}`)
  process.exit(2)
}

/** @param {string} file @returns {Promise<{ code: number | null, signal: NodeJS.Signals | null }>} */
function run(file) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(dir, file), ...passed], { stdio: 'inherit', cwd: join(dir, '..') })
    child.on('error', (e) => {
      console.error(`bench: cannot start ${file}: ${e.message}`)
      resolve({ code: 1, signal: null })
    })
    child.on('exit', (code, signal) => resolve({ code, signal }))
  })
}

const failed = []
for (const file of selected) {
  console.log(`\n=== ${file} ===`)
  const started = Date.now()
  const { code, signal } = await run(file)
  const took = ((Date.now() - started) / 1000).toFixed(1)
  if (code === 0) {
    console.log(`=== ${file}: done in ${took} s ===`)
  } else {
    console.log(`=== ${file}: CRASHED (${signal ? `signal ${signal}` : `exit ${code}`}) after ${took} s ===`)
    failed.push(file)
  }
}
if (failed.length > 0) {
  console.error(`\nbench: ${failed.length} of ${selected.length} crashed: ${failed.join(', ')}`)
  process.exit(1)
}
