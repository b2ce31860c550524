#!/usr/bin/env node
// A real, private PostgreSQL for tests: the binaries already on the machine, `initdb` into a
// fresh temporary directory, `postgres` on a free loopback port with its unix socket in that
// directory, one database, everything stopped and removed at exit. Plain JS with no
// dependencies, so .ci/run can start it before anything is built.
//   node test/setup/postgres.mjs   prints AG_TEST_POSTGRES=postgres://… and stays up until killed
//   import { startPostgres }       the same for a test helper (test/helpers/postgres.ts)
// PostgreSQL refuses to run as root: as root (CI), the server runs as `nobody`, owning the
// temporary directory.
import { execFileSync, spawn } from 'node:child_process'
import { accessSync, chownSync, constants, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { pathToFileURL } from 'node:url'

/** @param {string} file */
const executable = (file) => {
  try {
    accessSync(file, constants.X_OK)
    return true
  } catch {
    return false
  }
}

/** The directories that may hold the server's binaries, most likely first. */
function candidateDirs() {
  /** @type {string[]} */
  const dirs = []
  if (process.env['AG_PG_BINDIR']) dirs.push(process.env['AG_PG_BINDIR'])
  try {
    dirs.push(execFileSync('pg_config', ['--bindir'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim())
  } catch {
    // no pg_config: look in the usual places
  }
  const debian = '/usr/lib/postgresql'
  if (existsSync(debian))
    for (const v of readdirSync(debian).sort((a, b) => Number(b) - Number(a))) dirs.push(join(debian, v, 'bin'))
  dirs.push(...(process.env['PATH'] ?? '').split(delimiter).filter(Boolean))
  return dirs
}

/** The first directory holding both `initdb` and `postgres`, or undefined. */
export function findPostgresBinaries() {
  for (const dir of candidateDirs())
    if (executable(join(dir, 'initdb')) && executable(join(dir, 'postgres'))) return dir
  return undefined
}

/** A loopback port nobody listens on now. @returns {Promise<number>} */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(0, '127.0.0.1', () => {
      const a = s.address()
      s.close(() => (a && typeof a === 'object' ? resolve(a.port) : reject(new Error('no port'))))
    })
  })
}

/** The uid and gid the server runs as: ours, or nobody's when we are root. */
function serverUser() {
  if (process.getuid?.() !== 0) return {}
  const id = (flag) => Number(execFileSync('id', [flag, 'nobody'], { encoding: 'utf8' }).trim())
  return { uid: id('-u'), gid: id('-g') }
}

/**
 * Start a private cluster. Resolves once it accepts connections, with its URL (database
 * `ag_test`, user `postgres`, trust authentication on loopback) and stop(), which shuts it
 * down and removes its directory. Should this process die without calling stop(), a
 * watchdog does both.
 * @param {{ log?: (line: string) => void }} [options]
 * @returns {Promise<{ url: string, host: string, port: number, dir: string, stop: () => Promise<void> }>}
 */
export async function startPostgres(options = {}) {
  const bin = findPostgresBinaries()
  if (!bin) throw new Error('no PostgreSQL binaries found (pg_config --bindir, /usr/lib/postgresql/*/bin, PATH)')
  const user = serverUser()
  const dir = mkdtempSync(join(tmpdir(), 'ag-pg-'))
  if (user.uid !== undefined) chownSync(dir, user.uid, user.gid)
  const data = join(dir, 'data')
  const env = { ...process.env, LC_ALL: 'C', TZ: 'UTC' }
  try {
    execFileSync(
      join(bin, 'initdb'),
      ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync', '--no-instructions'],
      { ...user, env, cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] },
    )
  } catch (e) {
    rmSync(dir, { recursive: true, force: true })
    throw new Error(`initdb failed: ${e instanceof Error && 'stderr' in e ? String(e.stderr) : String(e)}`)
  }
  const port = await freePort()
  const server = spawn(
    join(bin, 'postgres'),
    // fsync off: a test cluster lives and dies with its test, a crash of the machine loses nothing of value
    ['-D', data, '-k', dir, '-h', '127.0.0.1', '-p', String(port), '-c', 'fsync=off', '-c', 'max_connections=300'],
    { ...user, env, cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] },
  )
  const exited = new Promise((resolve) => server.once('exit', resolve))
  // The watchdog outlives us: once this process is gone, it stops the server and removes the directory.
  const watchdog = spawn(
    'sh',
    [
      '-c',
      'while kill -0 "$1" 2>/dev/null; do sleep 1; done; kill -INT "$2" 2>/dev/null; while kill -0 "$2" 2>/dev/null; do sleep 0.2; done; rm -rf "$3"',
      'ag-pg-watchdog',
      String(process.pid),
      String(server.pid),
      dir,
    ],
    { detached: true, stdio: 'ignore' },
  )
  watchdog.unref()
  let stderr = ''
  const ready = await new Promise((resolve) => {
    server.stderr.setEncoding('utf8')
    server.stderr.on('data', (chunk) => {
      stderr += chunk
      for (const line of chunk.split('\n')) if (line) options.log?.(line)
      if (stderr.includes('ready to accept connections')) resolve(true)
    })
    void exited.then(() => resolve(false))
  })
  if (!ready) {
    rmSync(dir, { recursive: true, force: true })
    throw new Error(`postgres did not start:\n${stderr}`)
  }
  server.stderr.removeAllListeners('data')
  server.stderr.resume()
  // Neither the server nor its log pipe keeps this process alive: the watchdog cleans up after it.
  // a child's pipe is a net.Socket, which can be unref'd
  const pipe = /** @type {import('node:net').Socket} */ (server.stderr)
  pipe.unref()
  execFileSync(join(bin, 'createdb'), ['-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', 'ag_test'], {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let stopped
  const stop = () => {
    stopped ??= (async () => {
      server.ref() // this process now waits for the server's exit
      server.kill('SIGINT') // fast shutdown: ends the sessions, no wait for clients
      await exited
      rmSync(dir, { recursive: true, force: true })
      watchdog.kill()
    })()
    return stopped
  }
  server.unref()
  return { url: `postgres://postgres@127.0.0.1:${port}/ag_test`, host: '127.0.0.1', port, dir, stop }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const pg = await startPostgres()
  process.stdout.write(`AG_TEST_POSTGRES=${pg.url}\n`)
  const quit = () => void pg.stop().then(() => process.exit(0))
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.once(sig, quit)
  setInterval(() => undefined, 1 << 30)
}
