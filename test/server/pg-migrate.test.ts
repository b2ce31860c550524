import t from 'tap'
import pg from 'pg'
import { AgwpError } from '../../server/src/errors.ts'
import { PgState } from '../../server/src/pg/pg-state.ts'
import { SCHEMA_VERSION } from '../../server/src/pg/schema.ts'
import { freePort } from '../setup/postgres.mjs'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { spawn } from 'node:child_process'
import { listening, run, SERVER } from '../helpers/ag-server-cli.ts'
import { withPostgres } from '../helpers/postgres.ts'

// The PostgreSQL schema's migrations (server/src/pg/migrate.ts), `ag-server migrate`, and an
// unreachable database: a clear 503 naming the host, never the password, and no crash.

/** Every version this binary's schema has, each applied once: 1 … SCHEMA_VERSION. */
const ALL_VERSIONS = Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1)

/** The versions schema_version holds. */
async function versions(url: string): Promise<number[]> {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    return (await c.query<{ version: number }>('SELECT version FROM schema_version ORDER BY version')).rows.map(
      (r) => r.version,
    )
  } finally {
    await c.end()
  }
}

/** `url` with a password the server (trust authentication) ignores, so messages can be checked for it. */
const withPassword = (url: string): string => {
  const u = new URL(url)
  u.password = 'sekret-pw'
  return u.href
}

await withPostgres(t, async (db) => {
  t.test('a fresh database is migrated at open, a second open changes nothing', async (t) => {
    const url = await db.fresh()
    const a = await PgState.open(url)
    await a.state.close()
    t.same(a.migrated, { from: 0, to: SCHEMA_VERSION }, 'from nothing to this binary’s version')
    const b = await PgState.open(url)
    await b.state.close()
    t.same(b.migrated, { from: SCHEMA_VERSION, to: SCHEMA_VERSION }, 'the re-run is a no-op')
    t.same(await versions(url), ALL_VERSIONS, 'each version recorded once')
  })

  t.test('four instances opening a fresh database together migrate it once', async (t) => {
    const url = await db.fresh()
    const opened = await Promise.all([1, 2, 3, 4].map(() => PgState.open(url)))
    await Promise.all(opened.map((o) => o.state.close()))
    t.equal(opened.filter((o) => o.migrated?.from === 0).length, 1, 'one of them migrated')
    t.same(await versions(url), ALL_VERSIONS, 'and the schema was made once')
  })

  t.test('--no-migrate refuses an old schema with the command that upgrades it', async (t) => {
    const url = withPassword(await db.fresh())
    const e = await PgState.open(url, { migrate: false }).then(
      () => undefined,
      (e: unknown) => e,
    )
    const bare = new URL(url)
    bare.password = ''
    t.ok(e instanceof Error, 'refused')
    t.match(String((e as Error).message), `run \`ag-server migrate --store ${bare.href}\``, 'naming the command')
    t.notMatch(String((e as Error).message), 'sekret-pw', 'never the password')
    const c = new pg.Client({ connectionString: url })
    await c.connect()
    const { rows } = await c.query("SELECT to_regclass('tasks') AS t")
    await c.end()
    t.equal(rows[0].t, null, 'and nothing was created')
  })

  t.test('a schema newer than the binary is refused, migrating or not, naming both versions', async (t) => {
    const url = await db.fresh()
    await (await PgState.open(url)).state.close()
    const c = new pg.Client({ connectionString: url })
    await c.connect()
    await c.query('INSERT INTO schema_version (version) VALUES (99)')
    await c.end()
    for (const migrate of [true, false]) {
      await t.rejects(
        PgState.open(url, { migrate }),
        { message: `the database's schema is version 99, newer than this ag-server's (${SCHEMA_VERSION})` },
        `refused with migrate ${migrate}`,
      )
    }
  })

  t.test('ag-server migrate prints the versions, without the password', async (t) => {
    const url = withPassword(await db.fresh())
    const first = run('migrate', '--store', url)
    t.equal(first.code, 0, first.stderr)
    t.match(first.stdout, `schema migrated from version 0 to ${SCHEMA_VERSION}`)
    const again = run('migrate', '--store', url)
    t.match(again.stdout, `schema at version ${SCHEMA_VERSION}, nothing to migrate`)
    t.notMatch(first.stdout + again.stdout, 'sekret-pw', 'never the password')
    const bad = run('migrate', '--store', '/var/db')
    t.equal(bad.code, 2, 'a store that is not a postgres:// URL is a usage error')
    t.match(bad.stderr, '--store must be a postgres:// URL')
  })

  t.test('a data directory on PostgreSQL: init, serve (migrating or refusing), commands through it', async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pg-serve-'))
    t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }))
    const data = path.join(dir, 'd')
    const home = withPassword(await db.fresh())
    const init = run('init', data, '--store', home)
    t.equal(init.code, 0, init.stderr)
    const offline = run('token', 'list', '--data', data)
    t.equal(offline.code, 1, 'with no server, a command that changes state is refused')
    t.match(offline.stderr, 'keeps its state in PostgreSQL: start `ag-server serve --data')
    t.equal(run('serve', '--data', data, '--listen', '127.0.0.1:0').code, 2, 'serve without --store is a usage error')
    const other = withPassword(await db.fresh())
    const bare = new URL(other)
    bare.password = ''
    const refused = run('serve', '--data', data, '--store', other, '--no-migrate', '--listen', '127.0.0.1:0')
    t.equal(refused.code, 1, '--no-migrate on an empty database exits 1')
    t.match(refused.stderr, `run \`ag-server migrate --store ${bare.href}\``, 'naming the command')
    t.notMatch(refused.stderr, 'sekret-pw', 'never the password')
    const serve = (store: string) => {
      const child = spawn(
        process.execPath,
        [SERVER, 'serve', '--data', data, '--store', store, '--listen', '127.0.0.1:0'],
        { env: { PATH: process.env['PATH'] ?? '' }, stdio: ['ignore', 'pipe', 'pipe'] },
      )
      const out = { stderr: '' }
      child.stderr.on('data', (b: Buffer) => (out.stderr += b.toString()))
      const exited = new Promise((r) => child.once('exit', r))
      const stop = async () => {
        child.kill()
        await exited
      }
      t.teardown(stop)
      return { child, out, stop }
    }
    const migrating = serve(other)
    await listening(migrating.child)
    t.match(migrating.out.stderr, `${bare.href}: schema migrated from version 0 to ${SCHEMA_VERSION}`, 'serve migrated')
    t.same(await versions(other), ALL_VERSIONS, 'and the schema is there')
    await migrating.stop()
    const served = serve(home)
    await listening(served.child)
    const mint = run(
      'token',
      'mint',
      '--principal',
      'agent:x',
      '--scopes',
      'read',
      '--repos',
      '*',
      '--out',
      path.join(dir, 'x.token'),
      '--data',
      data,
    )
    t.equal(mint.code, 0, `a token minted through the server: ${mint.stderr}`)
    const c = new pg.Client({ connectionString: home })
    await c.connect()
    const { rows } = await c.query("SELECT doc->>'principal' AS p FROM tokens ORDER BY p")
    await c.end()
    t.same(
      rows.map((r) => r.p),
      ['agent:x', 'human:admin'],
      'both tokens are rows of the database',
    )
    t.equal(
      run('serve', '--data', data, '--store', 'mysql://x', '--listen', '127.0.0.1:0').code,
      2,
      'a store that is not postgres:// is a usage error',
    )
  })

  t.test('a database that went away answers 503 naming its host; the state works again after', async (t) => {
    const url = await db.fresh()
    const { state } = await PgState.open(url)
    t.teardown(() => state.close())
    await state.tx([], async (x) => x.write({ c: 'counters', k: 'n', v: 1 }))
    // Mid-transaction, every connection of this database is cut, as a restart of the server would.
    const cut = async (): Promise<void> => {
      const c = new pg.Client({ connectionString: url })
      await c.connect()
      await c.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
      )
      await c.end()
    }
    const e = await state
      .tx([], async (x) => {
        await x.get('counters', 'n')
        await cut()
        return x.get('counters', 'n')
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      )
    t.ok(e instanceof AgwpError && e.code === 'unavailable' && e.status === 503, 'a 503 unavailable')
    t.match((e as Error).message, `the database at ${new URL(url).host} cannot be reached`)
    t.equal(await state.tx([], (x) => x.get('counters', 'n')), 1, 'the next transaction reconnects')
  })
})

t.test('an unreachable database: 503 unavailable naming the host, never the password', async (t) => {
  const port = await freePort()
  const url = `postgres://someone:sekret-pw@127.0.0.1:${port}/x`
  const e = await PgState.open(url).then(
    () => undefined,
    (e: unknown) => e,
  )
  t.ok(e instanceof AgwpError && e.code === 'unavailable', 'unavailable')
  t.match((e as Error).message, `the database at 127.0.0.1:${port} cannot be reached (ECONNREFUSED)`)
  t.notMatch(JSON.stringify({ m: (e as Error).message, d: (e as AgwpError).details }), 'sekret-pw')
  const cli = run('migrate', '--store', url)
  t.equal(cli.code, 1, 'the CLI exits 1')
  t.match(cli.stderr, `ag-server: unavailable: the database at 127.0.0.1:${port} cannot be reached`)
  t.notMatch(cli.stderr, 'sekret-pw')
})
