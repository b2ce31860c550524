// The standalone executable (`npm run build:exe`), from outside: copied alone into a directory
// and run with a PATH that holds only that directory, so no `node` can be found.
import t from 'tap'
import { execFileSync, spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { REPO_ROOT, startMcp } from '../helpers/mcp-process.ts'
import { roundTrip } from '../helpers/packaging.ts'

const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }

t.test('the standalone executable serves MCP with no node on PATH', async (t) => {
  const dir = t.testdir({})
  const exe = join(dir, 'ag-mcp')
  execFileSync(process.execPath, [join(REPO_ROOT, 'packaging', 'build-exe.mjs'), '--out', exe], {
    cwd: REPO_ROOT,
    stdio: 'pipe',
  })
  const env = { PATH: dir, HOME: dir }
  t.not(spawnSync('/bin/sh', ['-c', 'command -v node'], { env }).status, 0, 'no node is on this PATH')
  t.equal(spawnSync(exe, ['--version'], { env, encoding: 'utf8' }).stdout.trim(), `ag-mcp ${pkg.version}`)
  t.match(
    spawnSync(exe, ['--help'], { env, encoding: 'utf8' }).stdout,
    /--upstream\s+Base URL of the ag-server/,
    '--help (yargs) works',
  )
  const p = startMcp(t, { command: [exe], env, exactEnv: true })
  t.same(await roundTrip(p), {
    versions: ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26'],
    serverInfo: 'ag-mcp',
  })
  p.assertValid(t)
  t.equal((await p.close()).code, 0)
})
