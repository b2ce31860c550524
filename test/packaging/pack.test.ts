// Packaging, from outside: a clean copy of the sources (no dist/), `npm pack` (whose prepare script
// must build dist/), then what a user does with the tarball: install it into an empty prefix and
// run the installed bin, or run it with npx. The tarball must hold only what runs.
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync } from 'node:fs'
import { join } from 'node:path'
import { REPO_ROOT, startMcp } from '../helpers/mcp-process.ts'
import { npmEnv, roundTrip } from '../helpers/packaging.ts'

const pkg = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string }

t.test('npm pack builds, installs into an empty prefix and runs; the tarball holds only what runs', async (t) => {
  const dir = t.testdir({})
  const src = join(dir, 'src')
  // What a clone holds (tracked files, plus new ones not ignored), without dist/ or generated/.
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
  })
    .split('\0')
    .filter((f) => f !== '' && !f.startsWith('node_modules') && existsSync(join(REPO_ROOT, f)))
  for (const f of files) cpSync(join(REPO_ROOT, f), join(src, f))
  symlinkSync(join(REPO_ROOT, 'node_modules'), join(src, 'node_modules'), 'dir')
  const env = npmEnv(dir)
  execFileSync('npm', ['pack', '--pack-destination', dir], { cwd: src, env, stdio: 'pipe' })
  const tarball = readdirSync(dir).find((f) => f.endsWith('.tgz'))
  t.equal(tarball, `ag-mcp-${pkg.version}.tgz`, 'npm pack made the tarball')
  const tgz = join(dir, tarball ?? 'missing.tgz')

  const entries = execFileSync('tar', ['-tzf', tgz], { encoding: 'utf8' }).split('\n').filter(Boolean)
  for (const need of [
    'package.json',
    'README.md',
    'LICENSE',
    'ag-mcp.schema.json',
    'dist/ag-mcp.mjs',
    'dist/ag-server.mjs',
    'docs/tools.md',
  ])
    t.ok(entries.includes(`package/${need}`), `the tarball holds ${need}`)
  const runs =
    /^package\/(package\.json|README\.md|LICENSE|CHANGELOG\.md|ag-mcp\.schema\.json|dist\/ag-(mcp|server)\.mjs|docs\/[a-z0-9-]+\.md)$/
  t.same(
    entries.filter((e) => !runs.test(e)),
    [],
    'nothing but the binaries, docs, license, changelog and config schema (no test, bench, CI, snapshots or sources)',
  )

  const prefix = join(dir, 'prefix')
  mkdirSync(prefix)
  execFileSync('npm', ['install', '--global', '--offline', '--prefix', prefix, tgz], { cwd: dir, env, stdio: 'pipe' })
  t.notOk(
    existsSync(join(prefix, 'lib', 'node_modules', 'ag-mcp', 'node_modules')),
    'the bundles need no dependencies installed',
  )
  const bin = join(prefix, 'bin', 'ag-mcp')
  t.equal(execFileSync(bin, ['--version'], { env, encoding: 'utf8' }).trim(), `ag-mcp ${pkg.version}`)
  t.match(execFileSync(join(prefix, 'bin', 'ag-server'), ['--help'], { env, encoding: 'utf8' }), /ag-server/)
  const p = startMcp(t, { command: [bin] })
  t.same(await roundTrip(p), {
    versions: ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26'],
    serverInfo: 'ag-mcp',
  })
  p.assertValid(t)
  t.equal((await p.close()).code, 0)

  const npx = execFileSync('npx', ['--yes', '--package', tgz, '--', 'ag-mcp', '--version'], {
    cwd: prefix,
    env,
    encoding: 'utf8',
  })
  t.equal(npx.trim(), `ag-mcp ${pkg.version}`, 'npx runs it from the tarball')
})
