import pg from 'pg'
import { KeyedMutex } from '../mutex.ts'
import type { Credentials, IndexName, Indexed, Op, Read, Scope, State, StateReader, Tx } from '../state.ts'
import type { CollectionName, Collections } from '../types.ts'
import { isUnreachable, unreachableAs503 } from './errors.ts'
import { migrate, requireSchema, type Migrated } from './migrate.ts'
import { commitOps, literal, type SimpleQuery, table } from './commit.ts'
import { groupId, type Prefetched, prefetchSql, recordId } from './prefetch.ts'
import { INDEX_SQL } from './schema.ts'
import { databaseHost } from './url.ts'

// The PostgreSQL backend of State (state.ts): several ag-server processes on one database.
// A transaction is one READ COMMITTED transaction on one pooled connection: it waits for its
// locks in process first (KeyedMutex), then takes them as pg_advisory_xact_lock, sorted, and
// reads what it names in the same round trip (prefetch.ts); then fn runs, and its queued
// writes go with COMMIT (commit.ts: a set or add reads its row FOR UPDATE and applies ops.ts
// to it). Everything the locks protect is read after they are held, so the database decides
// every race, between processes too. A COMMIT is durable when it returns: settle and flush
// wait for nothing.

/** Run one statement; given a name, it is prepared once per connection and then only executed. */
export type Query = (sql: string, params?: unknown[], name?: string) => Promise<pg.QueryResult>

const names = new Map<string, string>()
/**
 * The name a read's statement is prepared under. Named, PostgreSQL parses and plans it once
 * per connection instead of on every call (measured: 75 → 39 µs of its CPU per get, and less
 * for ag-server to send). The texts come from the fixed templates of Reader (a table or an
 * index each), so the names stay few.
 */
function statementName(sql: string): string {
  let name = names.get(sql)
  if (name === undefined) {
    name = `ag_${names.size}`
    names.set(sql, name)
  }
  return name
}

/** client.query with a name when one is given. */
const queryOn = (client: pg.Pool | pg.PoolClient, sql: string, params?: unknown[], name?: string) =>
  name === undefined ? client.query(sql, params) : client.query({ name, text: sql, values: params ?? [] })

/** The reads of StateReader over one way to run a query (the pool, or a transaction's connection). */
class Reader implements StateReader {
  constructor(protected readonly q: Query) {}

  /** One of the reads below, prepared (statementName). */
  private read(sql: string, params: unknown[]): Promise<pg.QueryResult> {
    return this.q(sql, params, statementName(sql))
  }

  async get<C extends CollectionName>(c: C, k: string): Promise<Collections[C] | undefined> {
    if (c === 'counters') {
      const { rows } = await this.read('SELECT n FROM counters WHERE k = $1', [k])
      return rows[0] === undefined ? undefined : (Number(rows[0].n) as Collections[C])
    }
    const { rows } = await this.read(`SELECT doc FROM ${table(c)} WHERE k = $1`, [k])
    return rows[0]?.doc
  }
  async getMany<C extends CollectionName>(c: C, keys: readonly string[]): Promise<(Collections[C] | undefined)[]> {
    if (keys.length === 0) return []
    const value = c === 'counters' ? 'n' : 'doc'
    const { rows } = await this.read(`SELECT k, ${value} AS v FROM ${table(c)} WHERE k = ANY($1::text[])`, [
      [...new Set(keys)],
    ])
    const found = new Map<string, Collections[C]>(
      rows.map((r) => [r.k, c === 'counters' ? (Number(r.v) as Collections[C]) : r.v]),
    )
    return keys.map((k) => found.get(k))
  }
  async all<C extends CollectionName>(c: C): Promise<Collections[C][]> {
    return (await this.entries(c)).map(([, v]) => v)
  }
  async entries<C extends CollectionName>(c: C): Promise<[string, Collections[C]][]> {
    if (c === 'counters') {
      const { rows } = await this.q('SELECT k, n FROM counters')
      return rows.map((r) => [r.k, Number(r.n) as Collections[C]])
    }
    const { rows } = await this.q(`SELECT k, doc FROM ${table(c)}`)
    return rows.map((r) => [r.k, r.doc])
  }
  async byIndex<N extends IndexName>(name: N, key: string): Promise<Indexed<N>[]> {
    const ix = INDEX_SQL[name]
    const { rows } = await this.read(`SELECT doc FROM ${ix.table} WHERE ${ix.key} = $1 AND ${ix.where}`, [key])
    return rows.map((r) => r.doc)
  }
  async idsByIndex(name: IndexName, key: string): Promise<string[]> {
    const ix = INDEX_SQL[name]
    const { rows } = await this.read(`SELECT k FROM ${ix.table} WHERE ${ix.key} = $1 AND ${ix.where}`, [key])
    return rows.map((r) => r.k)
  }
  async indexKeys(name: IndexName): Promise<string[]> {
    const ix = INDEX_SQL[name]
    const { rows } = await this.q(
      `SELECT DISTINCT ${ix.key} AS key FROM ${ix.table} WHERE ${ix.key} IS NOT NULL AND ${ix.where}`,
    )
    return rows.map((r) => r.key)
  }
  async credentials(h: string, runId: string | undefined): Promise<Credentials> {
    const { rows } = await this.read(
      'SELECT now() AS now, (SELECT doc FROM tokens WHERE hash = $1) AS token, (SELECT doc FROM runs WHERE k = $2) AS run',
      [h, runId ?? null],
    )
    const row = rows[0] as { now: Date; token: Credentials['token'] | null; run: Credentials['run'] | null }
    return { token: row.token ?? undefined, run: row.run ?? undefined, now: row.now }
  }
}

/** One transaction's view: its connection's reads, its queue, the database's clock. */
class PgTx extends Reader implements Tx {
  readonly ops: Op[] = []
  open = true
  constructor(
    q: Query,
    readonly now: Date,
    private readonly state: PgState,
    /** what State.tx's `reads` read with the locks */
    private readonly fetched: Prefetched,
  ) {
    super(q)
  }
  override async get<C extends CollectionName>(c: C, k: string): Promise<Collections[C] | undefined> {
    const id = recordId(c, k)
    return this.fetched.records.has(id) ? (this.fetched.records.get(id) as Collections[C] | undefined) : super.get(c, k)
  }
  override async getMany<C extends CollectionName>(
    c: C,
    keys: readonly string[],
  ): Promise<(Collections[C] | undefined)[]> {
    const { records } = this.fetched
    if (!keys.every((k) => records.has(recordId(c, k)))) return super.getMany(c, keys)
    return keys.map((k) => records.get(recordId(c, k)) as Collections[C] | undefined)
  }
  override async byIndex<N extends IndexName>(name: N, key: string): Promise<Indexed<N>[]> {
    const group = this.fetched.groups.get(groupId(name, key))
    return group === undefined ? super.byIndex(name, key) : ([...group] as Indexed<N>[])
  }
  nextId(name: string, prefix: string): Promise<string> {
    return this.state.nextId(name, prefix)
  }
  write(...ops: Op[]): void {
    if (!this.open) throw new Error('write after the transaction ended')
    this.ops.push(...ops)
  }
  /** SQL of its own inside this transaction (owners.ts: the fence, the takeover) */
  sql(text: string, params?: unknown[]): Promise<pg.QueryResult> {
    if (!this.open) throw new Error('query after the transaction ended')
    return this.q(text, params)
  }
}

/** t's own SQL: t must be a PostgreSQL transaction (a journal one has no SQL). */
export function sqlOf(t: Tx): (text: string, params?: unknown[]) => Promise<pg.QueryResult> {
  let own: Tx | undefined = t
  while (own !== undefined && !(own instanceof PgTx)) own = own.base
  if (own === undefined) throw new Error('not a PostgreSQL transaction')
  const pgTx = own
  return (text, params) => pgTx.sql(text, params)
}

export interface PgStateOptions {
  /** apply pending migrations (default); false: refuse a schema that is not this binary's */
  migrate?: boolean
  /** connections in the pool (default 10) */
  max?: number
  /**
   * The database ends a session left idle inside a transaction this long (ms, default 15 s):
   * a stopped process cannot hold a repository's lock, and so keep its new owner out, forever.
   */
  idleInTransactionMs?: number
}

export class PgState extends Reader implements State {
  readonly backend = 'postgres'
  /** the database's host:port, for messages (never the password) */
  readonly host: string

  private constructor(
    private readonly pool: pg.Pool,
    /**
     * nextId's own connections: a transaction holding a pooled connection takes an id on
     * another one, so with every pooled connection held by a transaction waiting for an id,
     * one shared pool would wait on itself.
     */
    private readonly idPool: pg.Pool,
    host: string,
  ) {
    super(guarded(pool, host))
    this.host = host
  }

  /** Connect, then migrate (or check the schema); the pool is closed if either fails. */
  static async open(url: string, opts: PgStateOptions = {}): Promise<{ state: PgState; migrated?: Migrated }> {
    const host = databaseHost(url)
    const idle = opts.idleInTransactionMs ?? 15_000
    const pool = newPool(url, opts.max ?? 10, idle)
    const idPool = newPool(url, 2, idle)
    try {
      const migrated = opts.migrate === false ? undefined : await migrate(pool)
      if (!migrated) await requireSchema(pool, url)
      return { state: new PgState(pool, idPool, host), ...(migrated ? { migrated } : {}) }
    } catch (e) {
      await Promise.all([pool.end(), idPool.end()]).catch(() => undefined)
      throw unreachableAs503(e, host)
    }
  }

  /**
   * Transactions of this process naming the same lock wait here, without a connection, before
   * the advisory locks: waiting there, each would hold a pooled connection, and with the pool
   * full of them the holder's own nested transaction (an intent's) or the next request's read
   * would wait for a connection none frees (10 s, then 503). Between instances the advisory
   * locks still decide.
   */
  private readonly queued = new KeyedMutex()

  tx<T>(locks: readonly string[], fn: (t: Tx) => Promise<T>, reads: readonly Read[] = []): Promise<T> {
    return this.queued.runAll(locks, () =>
      this.onConnection(async (q, simple) => {
        // One round trip: BEGIN, the locks, the clock, then what fn is expected to read.
        const opening = openingOf(locks)
        const fetching = prefetchSql(reads)
        const results = await simple([...opening, 'SELECT now() AS now', ...fetching.statements].join('; '))
        const now = results[opening.length]?.rows[0]?.now as Date
        const t = new PgTx(q, now, this, fetching.collect(results.slice(opening.length + 1)))
        let result: T
        try {
          result = await fn(t)
        } finally {
          t.open = false
        }
        await commitOps(simple, t.ops)
        return result
      }),
    )
  }

  commit(locks: readonly string[], ops: readonly Op[]): Promise<void> {
    if (ops.length === 0) return Promise.resolve()
    // BEGIN and the locks go with the first statement that needs them: one round trip, two
    // when a set or add reads its row
    return this.queued.runAll(locks, () => this.onConnection((_q, simple) => commitOps(simple, ops, openingOf(locks))))
  }

  /**
   * Run on a pooled connection: a statement it throws on is rolled back, a connection that
   * failed is not handed to the next transaction.
   */
  private async onConnection<T>(run: (q: Query, simple: SimpleQuery) => Promise<T>): Promise<T> {
    let client: pg.PoolClient
    try {
      client = await this.pool.connect()
    } catch (e) {
      throw unreachableAs503(e, this.host)
    }
    let broken: unknown
    // A connection cut while checked out is reported as an 'error' event: unheard, it would
    // crash the process; heard, the query in flight fails with it and is answered 503.
    const onError = (e: unknown): void => {
      broken ??= e
    }
    client.on('error', onError)
    const q: Query = (sql, params, name) =>
      queryOn(client, sql, params, name).catch((e: unknown) => {
        // a statement the database refused leaves the connection usable (ROLLBACK below)
        if (isUnreachable(e)) broken ??= e
        return Promise.reject(unreachableAs503(e, this.host))
      })
    // a multi-statement query answers one result per statement, a single one just its own
    const simple: SimpleQuery = async (sql) => {
      const r: pg.QueryResult | pg.QueryResult[] = await q(sql)
      return Array.isArray(r) ? r : [r]
    }
    const release = (failed?: unknown): void => {
      client.off('error', onError)
      const error = broken ?? failed
      client.release(error instanceof Error ? error : undefined)
    }
    let out: T
    try {
      out = await run(q, simple)
    } catch (e) {
      // Rolled back without waiting for it: the caller (a claim that lost, a lease that overlaps)
      // has its answer a round trip sooner, and so has the in-process queue of these locks; the
      // next transaction on them waits that round trip on the advisory lock instead, and the
      // connection goes back to the pool once the ROLLBACK is done.
      if (broken !== undefined) release()
      else client.query('ROLLBACK').then(() => release(), release)
      throw e
    }
    release()
    return out
  }

  /** An autocommit statement of its own: the number is taken at once, whatever the caller's transaction does. */
  async nextId(name: string, prefix: string): Promise<string> {
    const { rows } = await guarded(this.idPool, this.host)(
      'INSERT INTO counters (k, n) VALUES ($1, 1) ON CONFLICT (k) DO UPDATE SET n = counters.n + 1 RETURNING n',
      [name],
      'ag_next_id',
    )
    return `${prefix}${String(rows[0].n)}`
  }

  async now(): Promise<Date> {
    const { rows } = await this.q('SELECT now() AS now')
    return rows[0].now as Date
  }
  /** One autocommit statement on the pool (owners.ts: heartbeats, lookups). */
  sql(text: string, params?: unknown[]): Promise<pg.QueryResult> {
    return this.q(text, params)
  }
  newScope(): Scope {
    return { needs: 0, epoch: 0 }
  }
  async settle(_scope: Scope): Promise<void> {}
  async flush(): Promise<void> {}
  async close(): Promise<void> {
    await Promise.all([this.pool.end(), this.idPool.end()])
  }
}

function newPool(url: string, max: number, idleInTransactionMs: number): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    max,
    connectionTimeoutMillis: 10_000,
    idle_in_transaction_session_timeout: idleInTransactionMs,
  })
  // An idle connection the server dropped is reported here; the next query opens a new one.
  pool.on('error', () => undefined)
  return pool
}

/**
 * BEGIN and the advisory locks, sorted and deduplicated: two transactions naming the same
 * keys take them in one order, so they cannot deadlock.
 */
function openingOf(locks: readonly string[]): string[] {
  return [
    'BEGIN',
    ...[...new Set(locks)].sort().map((l) => `SELECT pg_advisory_xact_lock(hashtextextended(${literal(l)}, 0))`),
  ]
}

/** Autocommit queries on a pool, an unreachable database answered as 503. */
const guarded =
  (pool: pg.Pool, host: string): Query =>
  (sql, params, name) =>
    queryOn(pool, sql, params, name).catch((e: unknown) => Promise.reject(unreachableAs503(e, host)))
