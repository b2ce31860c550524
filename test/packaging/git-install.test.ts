// Installing from the git repository, from outside: a clone of this repository at HEAD, installed
// with `npm install git+file://…` into an empty prefix (npm clones it, installs its dev
// dependencies, runs prepare to build dist/, packs and installs that), then the installed bin
// answers --version and a server/discover round trip.
//
// It runs offline, from the npm cache this checkout was installed with (`npm ci` fills it), so it
// needs no network and takes seconds, not minutes; a cache without prepare's dev dependencies
// (ENOTCACHED) skips it with that reason.
import t from 'tap'
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { REPO_ROOT, startMcp } from '../helpers/mcp-process.ts'
import { npmEnv, roundTrip } from '../helpers/packaging.ts'

const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }
const npmConfig = (key: string): string =>
  execFileSync('npm', ['config', 'get', key], { cwd: REPO_ROOT, encoding: 'utf8' }).trim()

t.test('npm install git+file:// of this repository builds and runs the bin', async (t) => {
  const dir = t.testdir({})
  const clone = join(dir, 'clone')
  execFileSync('git', ['clone', '--quiet', '--no-hardlinks', REPO_ROOT, clone], { stdio: 'pipe' })
  t.equal(
    execFileSync('git', ['rev-parse', 'HEAD'], { cwd: clone, encoding: 'utf8' }),
    execFileSync('git', ['rev-parse', 'HEAD'], { cwd: REPO_ROOT, encoding: 'utf8' }),
    'the clone is at HEAD',
  )
  const prefix = join(dir, 'prefix')
  mkdirSync(prefix)
  // The cache and registry this checkout was installed with (the cache is keyed by registry URL).
  const env = {
    ...npmEnv(dir),
    npm_config_cache: process.env['npm_config_cache'] ?? npmConfig('cache'),
    npm_config_registry: npmConfig('registry'),
  }
  const started = performance.now()
  const install = spawnSync('npm', ['install', '--offline', '--prefix', prefix, `git+file://${clone}`], {
    cwd: prefix,
    env,
    encoding: 'utf8',
  })
  const seconds = ((performance.now() - started) / 1000).toFixed(1)
  if (install.status !== 0 && /ENOTCACHED/.test(install.stderr)) {
    const why = `the npm cache (${env.npm_config_cache}) lacks dev dependencies prepare needs; npm ci fills it`
    await t.test('installed from git', { skip: why }, async () => {})
    return
  }
  t.equal(install.status, 0, install.stderr)
  t.comment(`npm install git+file:// (offline, prepare builds dist/) took ${seconds} s`)
  const installed = join(prefix, 'node_modules', 'ag-mcp')
  t.ok(existsSync(join(installed, 'dist', 'ag-mcp.mjs')), 'prepare built dist/')
  t.notOk(existsSync(join(installed, 'test')), 'only the files package.json lists are installed')
  const bin = join(prefix, 'node_modules', '.bin', 'ag-mcp')
  t.equal(execFileSync(bin, ['--version'], { env, encoding: 'utf8' }).trim(), `ag-mcp ${pkg.version}`)
  const p = startMcp(t, { command: [bin], cwd: prefix })
  t.same(await roundTrip(p), {
    versions: ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26'],
    serverInfo: 'ag-mcp',
  })
  p.assertValid(t)
  t.equal((await p.close()).code, 0)
})
