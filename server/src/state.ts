import type { CollectionName, Collections } from './types.ts'

// The server's state, behind one async interface with two backends: the embedded journal
// (store.ts, the default for one machine) and PostgreSQL (several instances on one
// database). Handlers see only this file's types, so a race is decided the same way on
// both: every check-then-write runs inside `tx(locks, fn)`, which holds the named locks
// for fn's whole run and commits fn's queued writes as one atomic unit when it returns.
//   - journal: the locks are an in-process keyed mutex; the writes are one journal line.
//   - postgres: one READ COMMITTED transaction; the locks are pg_advisory_xact_lock, taken
//     in sorted order (no deadlock between two transactions naming the same keys), after
//     the same keys on an in-process mutex (a waiter holds no pooled connection); the
//     writes are applied in that transaction, so the database decides the race even
//     between processes.
// A write is queued, not applied: reads inside a tx never see the tx's own writes (read
// first, then decide, then write). A tx whose fn throws writes nothing.

/** Set a whole record (v) or delete it (v: null). */
export type PutOp = { [C in CollectionName]: { c: C; k: string; v: Collections[C] | null } }[CollectionName]
/** Set the field at path `at` inside record k to v; without v (undefined), remove it. No-op if k is absent. */
export interface SetOp {
  c: CollectionName
  k: string
  at: string[]
  v?: unknown
}
/**
 * Append `add` to the array at path `at` inside record k unless an equal element (same
 * JSON) is already there. Records what changes (one element), never a copy of the whole
 * list, so replaying it late (an intent settled at start-up) cannot drop elements other
 * requests added in the meantime. No-op if k is absent.
 */
export interface AddOp {
  c: CollectionName
  k: string
  at: string[]
  add: unknown
}
export type Op = PutOp | SetOp | AddOp

/**
 * What a transaction expects to read (State.tx's `reads`): a record (get), or an index's group
 * of records (byIndex), with, if `with` says so, the records of another collection its records
 * name in a field (getMany of those keys: a repository's leases and their runs).
 */
export type Read =
  | { c: Exclude<CollectionName, 'counters'>; k: string }
  | { index: IndexName; key: string; with?: { c: Exclude<CollectionName, 'counters'>; field: string } }

/**
 * Secondary indexes both backends keep (the journal in memory, PostgreSQL as SQL indexes):
 * the records of a collection grouped by a key, so a request reads one proposal's reviews
 * or one run's leases instead of a table that grows with history.
 */
export interface IndexCollections {
  reviewsByProposal: 'reviews'
  /** leases not yet released, by run_id */
  unreleasedLeasesByRun: 'leases'
  /** leases not yet released, by repo */
  unreleasedLeasesByRepo: 'leases'
  /** proposals by `${repo}\n${state}` */
  proposalsByRepoState: 'proposals'
  tasksByRepo: 'tasks'
  /** idempotency keys by the minute they expire in (ISO 8601 up to the minute) */
  idempotencyByExpiry: 'idempotency'
}
export type IndexName = keyof IndexCollections
export type Indexed<N extends IndexName> = Collections[IndexCollections[N]]

/** The records authenticate reads, and the clock it judges their expiry by. */
export interface Credentials {
  token: Collections['tokens'] | undefined
  run: Collections['runs'] | undefined
  now: Date
}

/** Reads, outside or inside a transaction. Records come back as copies the caller may keep. */
export interface StateReader {
  get<C extends CollectionName>(c: C, k: string): Promise<Collections[C] | undefined>
  /**
   * the records of c under keys, in the order of keys (undefined where absent): one read on
   * PostgreSQL, not one per key, so a lookup of every lease's run costs one round trip
   */
  getMany<C extends CollectionName>(c: C, keys: readonly string[]): Promise<(Collections[C] | undefined)[]>
  /** every record of c, in no set order */
  all<C extends CollectionName>(c: C): Promise<Collections[C][]>
  /** [key, record] of every record of c, in no set order */
  entries<C extends CollectionName>(c: C): Promise<[string, Collections[C]][]>
  /** the records of an index's collection whose key is `key`, in no set order */
  byIndex<N extends IndexName>(name: N, key: string): Promise<Indexed<N>[]>
  /**
   * the record keys (ids) byIndex would answer, without reading the records: a page of
   * them is then read with get, and records that do not carry their own key (idempotency)
   * can still be deleted by it
   */
  idsByIndex(name: IndexName, key: string): Promise<string[]>
  /** the keys an index holds records under, in no set order */
  indexKeys(name: IndexName): Promise<string[]>
  /**
   * What authenticating a request reads (auth.ts), together, in one round trip on PostgreSQL:
   * the token whose secret hashes to h, the run named (AGWP-Run), and the clock their expiry
   * is judged by (inside a transaction, its Tx.now).
   */
  credentials(h: string, runId: string | undefined): Promise<Credentials>
}

/** One transaction: reads, then writes queued to commit together when fn returns. */
export interface Tx extends StateReader {
  /**
   * The next value of a named counter, as `${prefix}${n}`: unique across transactions and
   * instances, taken at once (not queued); a transaction that fails burns its numbers.
   */
  nextId(name: string, prefix: string): Promise<string>
  /** queue ops; applied atomically, in order, when the transaction's fn returns */
  write(...ops: Op[]): void
  /**
   * The clock expiry is judged by, read once when the transaction began: the database's
   * (`now()`) on PostgreSQL, so instances with skewed clocks agree; this process's on the journal.
   */
  readonly now: Date
  /**
   * The backend's own transaction, when this one is a view over it (idempotency.ts marks
   * every write of a keyed request): what needs the backend's transaction itself (the
   * ownership fence's SQL, pg/owners.ts) reaches it here.
   */
  readonly base?: Tx
}

/** What one request depends on before it may answer (the journal's group commit; PostgreSQL: nothing). */
export interface Scope {
  needs: number
  /** the backend's generation when `needs` was recorded */
  epoch: number
}

export interface State extends StateReader {
  readonly backend: 'journal' | 'postgres'
  /**
   * Run fn holding every named lock (deduplicated, taken in sorted order), then commit its
   * queued writes atomically. Lock names say what a decision is about: `coord:<name>` for a
   * repository's tasks, runs and leases, `repo:<name>` for its proposals and refs,
   * `ws:<id>`, `token:<id>`, `key:<id>`, `idem:<key>`. Throws what
   * fn throws (nothing written), or 507 `storage_full` / the backend's error when the
   * commit fails (nothing written either).
   *
   * `reads` names records and index groups (Read) fn is expected to read, a hint: fn may
   * read others, or not these. PostgreSQL reads them in the round trip that takes the
   * locks and answers fn's reads of them from there, as they were once the locks were held
   * (a round trip less each while the locks are held); the journal, whose reads cost
   * nothing, ignores it.
   */
  tx<T>(locks: readonly string[], fn: (t: Tx) => Promise<T>, reads?: readonly Read[]): Promise<T>
  /**
   * Commit ops holding the locks, reading nothing first: what `tx(locks, async (t) =>
   * t.write(...ops))` does, in one round trip on PostgreSQL (two when a set or add must read
   * its row). Throws as tx does, nothing written.
   */
  commit(locks: readonly string[], ops: readonly Op[]): Promise<void>
  /** the clock expiry is judged by (see Tx.now) */
  now(): Promise<Date>
  /** a fresh request scope */
  newScope(): Scope
  /** resolves once everything the scope wrote or read of others' writes is durable */
  settle(scope: Scope): Promise<void>
  /** resolves once every committed write is durable */
  flush(): Promise<void>
  close(): Promise<void>
}
