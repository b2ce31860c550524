import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { tmpdir } from './helpers.ts'

// The pg client is loaded only for a PostgreSQL store: a server on the journal never
// evaluates it. Checked in a fresh process: CommonJS modules (pg is one) land in require.cache.

const root = tmpdir('pg-lazy')
t.teardown(() => fs.rmSync(root, { recursive: true, force: true }))

const SRC = new URL('../../server/src/', import.meta.url).href

/** Whether a fresh process loaded pg after running `code` (an ES module body; SRC is server/src/). */
function loadsPg(code: string): boolean {
  const script = `import { createRequire } from 'node:module'
const SRC = ${JSON.stringify(SRC)}
${code}
const loaded = Object.keys(createRequire(import.meta.url).cache).some((f) => f.includes('/node_modules/pg/'))
process.stdout.write(String(loaded))`
  const r = spawnSync(process.execPath, ['--import=tsx', '--input-type=module', '-e', script], { encoding: 'utf8' })
  if (r.status !== 0) throw new Error(r.stderr)
  return r.stdout.trim() === 'true'
}

t.test('a journal state does not load pg; the PostgreSQL backend does', async (t) => {
  const dir = path.join(root, 'd')
  fs.mkdirSync(path.join(dir, 'state'), { recursive: true })
  t.equal(
    loadsPg(`const { openState } = await import(SRC + 'open-state.ts')
const s = await openState({ dataDir: ${JSON.stringify(dir)} })
await s.close()`),
    false,
    'openState on the journal: no pg',
  )
  t.equal(loadsPg(`await import(SRC + 'pg/pg-state.ts')`), true, 'the check sees pg when it is loaded')
})
