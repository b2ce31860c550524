// A fresh PostgreSQL database for a test file: created on the server AG_TEST_POSTGRES names
// (.ci/run starts one), or else on a private cluster this process starts from the binaries
// on the machine (test/setup/postgres.mjs); dropped when the file's tests end. Without
// either, the tests skip and say how to get one, except under CI, where they fail.
import crypto from 'node:crypto'
import pg from 'pg'
import type { Test } from 'tap'
import { findPostgresBinaries, startPostgres, type TestPostgres } from '../setup/postgres.mjs'

export const POSTGRES_HOWTO =
  'no PostgreSQL for the tests: install its binaries (Debian: apt-get install postgresql) so the tests start a private one, or set AG_TEST_POSTGRES=postgres://USER@HOST:PORT/DB (a role that may CREATE DATABASE); `node test/setup/postgres.mjs` starts one and prints that line'

let cluster: Promise<TestPostgres> | undefined

/** The server to create databases on: AG_TEST_POSTGRES, or this process's private cluster. */
async function serverUrl(): Promise<string | undefined> {
  const given = process.env['AG_TEST_POSTGRES']
  if (given) return given
  if (!findPostgresBinaries()) return undefined
  // One cluster per test process; its watchdog stops and removes it once the process is gone.
  cluster ??= startPostgres()
  return (await cluster).url
}

/** `url` with its database replaced by `db`. */
export function withDatabase(url: string, db: string): string {
  const u = new URL(url)
  u.pathname = `/${db}`
  return u.href
}

/** Databases for one test file: `url` made first, fresh() makes another; all dropped after the file's tests. */
export interface TestDatabases {
  url: string
  fresh(): Promise<string>
}

/**
 * Run fn with a database made for it (empty). Without a PostgreSQL: under CI throws, else
 * adds a skipped test naming how to get one.
 */
export async function withPostgres(t: Test, fn: (db: TestDatabases) => Promise<void>): Promise<void> {
  const base = await serverUrl()
  if (!base) {
    if (process.env['CI']) throw new Error(POSTGRES_HOWTO)
    t.test('PostgreSQL', { skip: POSTGRES_HOWTO }, async () => undefined)
    return
  }
  const made: (() => Promise<void>)[] = []
  t.teardown(async () => {
    for (const drop of made) await drop()
  })
  const fresh = async (): Promise<string> => {
    const db = await createDatabase(base)
    made.push(db.drop)
    return db.url
  }
  await fn({ url: await fresh(), fresh })
}

/** An empty database on the server at `base` (default: AG_TEST_POSTGRES or a private cluster), and how to drop it. */
export async function createDatabase(base?: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const server = base ?? (await serverUrl())
  if (!server) throw new Error(POSTGRES_HOWTO)
  const db = `ag_test_${process.pid}_${crypto.randomBytes(4).toString('hex')}`
  await admin(server, `CREATE DATABASE ${db}`)
  return { url: withDatabase(server, db), drop: () => admin(server, `DROP DATABASE IF EXISTS ${db} WITH (FORCE)`) }
}

/** Poll f until it holds (an event, not a duration: gives up only after 20 s). */
export async function until(what: string, f: () => Promise<boolean>): Promise<void> {
  for (let n = 0; n < 2000; n++) {
    if (await f()) return
    await new Promise((r) => setTimeout(r, 10))
  }
  throw new Error(`gave up waiting: ${what}`)
}

/** Run one statement on the server's own database. */
export async function admin(url: string, sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    await c.query(sql)
  } finally {
    await c.end()
  }
}
