import type pg from 'pg'
import { MIGRATIONS, SCHEMA_VERSION } from './schema.ts'
import { redactUrl } from './url.ts'

// Versioned migrations: schema_version holds every version applied. They run in one
// transaction under an advisory lock, so N instances starting together migrate once (the
// others wait, then find nothing to do) and a failed migration leaves the old schema whole.

/** Any one number: the lock every migrating instance takes, whatever its lock names. */
const MIGRATE_LOCK = "hashtextextended('ag-server:migrate', 0)"

export interface Migrated {
  from: number
  to: number
}

/** The schema version a database is at (0: none), reading nothing else. */
export async function schemaVersion(q: pg.Pool | pg.PoolClient): Promise<number> {
  const { rows } = await q.query<{ v: number | null }>(
    "SELECT CASE WHEN to_regclass('schema_version') IS NULL THEN 0 END AS v",
  )
  if (rows[0]?.v === 0) return 0
  const r = await q.query<{ v: number | null }>('SELECT max(version) AS v FROM schema_version')
  return r.rows[0]?.v ?? 0
}

/** Refused: the database's schema is newer than this binary's. */
export function newerSchema(found: number): Error {
  return new Error(
    `the database's schema is version ${found}, newer than this ag-server's (${SCHEMA_VERSION}): run the ag-server that wrote it, or a newer one`,
  )
}

/** Refused at start with --no-migrate: the schema is older than this binary's; names the command that upgrades it. */
export function olderSchema(found: number, url: string): Error {
  return new Error(
    `the database's schema is version ${found}, this ag-server needs ${SCHEMA_VERSION}: run \`ag-server migrate --store ${redactUrl(url)}\` (or start without --no-migrate)`,
  )
}

/** Apply every pending migration, in one transaction; refuses a schema newer than this binary's. */
export async function migrate(pool: pg.Pool): Promise<Migrated> {
  const c = await pool.connect()
  // a connection cut mid-migration fails the query in flight; unheard, its 'error' event would crash
  let broken: Error | undefined
  const onError = (e: Error): void => {
    broken ??= e
  }
  c.on('error', onError)
  try {
    await c.query('BEGIN')
    await c.query(`SELECT pg_advisory_xact_lock(${MIGRATE_LOCK})`)
    await c.query(
      'CREATE TABLE IF NOT EXISTS schema_version (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
    )
    const from = await schemaVersion(c)
    if (from > SCHEMA_VERSION) throw newerSchema(from)
    for (let v = from; v < SCHEMA_VERSION; v++) {
      await c.query(MIGRATIONS[v] as string)
      await c.query('INSERT INTO schema_version (version) VALUES ($1)', [v + 1])
    }
    await c.query('COMMIT')
    return { from, to: SCHEMA_VERSION }
  } catch (e) {
    await c.query('ROLLBACK').catch(() => undefined)
    throw e
  } finally {
    c.off('error', onError)
    c.release(broken)
  }
}

/** Without migrating: the schema must be this binary's exactly. */
export async function requireSchema(pool: pg.Pool, url: string): Promise<void> {
  const found = await schemaVersion(pool)
  if (found > SCHEMA_VERSION) throw newerSchema(found)
  if (found < SCHEMA_VERSION) throw olderSchema(found, url)
}
