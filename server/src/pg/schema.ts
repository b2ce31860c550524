import type { IndexName } from '../state.ts'
import type { CollectionName } from '../types.ts'

// The PostgreSQL schema: one table per collection, keyed by the record's key `k`, the record
// itself as `doc jsonb`, and beside it the fields indexes and constraints need as real
// columns generated from doc (the database keeps them in step: a write sets k and doc only).
// Timestamps stay ISO 8601 text, as in the records: they sort as they compare, and a text to
// timestamptz cast is not immutable, so it cannot feed a generated column.

/** Migrations in order: MIGRATIONS[i] takes the schema from version i to i + 1. Never edit one that shipped. */
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE counters (k text PRIMARY KEY, n bigint NOT NULL);
  CREATE TABLE tokens (
    k text PRIMARY KEY, doc jsonb NOT NULL,
    hash text GENERATED ALWAYS AS (doc->>'hash') STORED UNIQUE,
    expires_at text GENERATED ALWAYS AS (doc->>'expires_at') STORED
  );
  CREATE TABLE repos (k text PRIMARY KEY, doc jsonb NOT NULL);
  CREATE TABLE workspaces (
    k text PRIMARY KEY, doc jsonb NOT NULL,
    repo text GENERATED ALWAYS AS (doc->>'repo') STORED,
    state text GENERATED ALWAYS AS (doc->>'state') STORED
  );
  CREATE TABLE proposals (
    k text PRIMARY KEY, doc jsonb NOT NULL,
    repo text GENERATED ALWAYS AS (doc->>'repo') STORED,
    state text GENERATED ALWAYS AS (doc->>'state') STORED
  );
  CREATE INDEX proposals_by_repo_state ON proposals ((repo || E'\\n' || state));
  CREATE TABLE reviews (
    k text PRIMARY KEY, doc jsonb NOT NULL,
    proposal text GENERATED ALWAYS AS (doc->>'proposal') STORED
  );
  CREATE INDEX reviews_by_proposal ON reviews (proposal);
  CREATE TABLE tasks (
    k text PRIMARY KEY, doc jsonb NOT NULL,
    repo text GENERATED ALWAYS AS (doc->>'repo') STORED,
    state text GENERATED ALWAYS AS (doc->>'state') STORED,
    run_id text GENERATED ALWAYS AS (doc->>'run_id') STORED
  );
  CREATE INDEX tasks_by_repo ON tasks (repo);
  CREATE TABLE runs (
    k text PRIMARY KEY, doc jsonb NOT NULL,
    repo text GENERATED ALWAYS AS (doc->>'repo') STORED,
    task text GENERATED ALWAYS AS (doc->>'task') STORED,
    state text GENERATED ALWAYS AS (doc->>'state') STORED,
    lease_expires_at text GENERATED ALWAYS AS (doc->>'lease_expires_at') STORED
  );
  CREATE TABLE leases (
    k text PRIMARY KEY, doc jsonb NOT NULL,
    repo text GENERATED ALWAYS AS (doc->>'repo') STORED,
    run_id text GENERATED ALWAYS AS (doc->>'run_id') STORED,
    released boolean GENERATED ALWAYS AS ((doc->>'released')::boolean) STORED,
    expires_at text GENERATED ALWAYS AS (doc->>'expires_at') STORED
  );
  CREATE INDEX leases_unreleased_by_run ON leases (run_id) WHERE released IS NOT TRUE;
  CREATE INDEX leases_unreleased_by_repo ON leases (repo) WHERE released IS NOT TRUE;
  CREATE TABLE intents (
    k text PRIMARY KEY, doc jsonb NOT NULL,
    repo text GENERATED ALWAYS AS (doc->>'repo') STORED
  );
  CREATE TABLE idempotency (
    k text PRIMARY KEY, doc jsonb NOT NULL,
    expires_at text GENERATED ALWAYS AS (doc->>'expires_at') STORED,
    expires_minute text GENERATED ALWAYS AS (left(doc->>'expires_at', 16)) STORED
  );
  CREATE INDEX idempotency_by_expiry ON idempotency (expires_minute);
  CREATE TABLE keys (
    k text PRIMARY KEY, doc jsonb NOT NULL,
    principal text GENERATED ALWAYS AS (doc->>'principal') STORED
  );
  `,
  // Several instances on one database (owners.ts): who is alive and where it is reached, and
  // which instance owns each repository, with the epoch that fences its ref updates.
  `
  CREATE TABLE instances (id text PRIMARY KEY, url text NOT NULL, heartbeat_at timestamptz NOT NULL);
  CREATE TABLE repo_owners (
    repo text PRIMARY KEY,
    instance text NOT NULL,
    epoch bigint NOT NULL,
    heartbeat_at timestamptz NOT NULL
  );
  CREATE INDEX repo_owners_by_instance ON repo_owners (instance);
  `,
]

/** The schema version this binary reads and writes. */
export const SCHEMA_VERSION = MIGRATIONS.length

/**
 * The table of each collection. Table names are spliced into SQL, so they come from this
 * map, never from a caller's string.
 */
export const TABLES: Readonly<Record<CollectionName, string>> = {
  tokens: 'tokens',
  repos: 'repos',
  workspaces: 'workspaces',
  proposals: 'proposals',
  reviews: 'reviews',
  tasks: 'tasks',
  runs: 'runs',
  leases: 'leases',
  counters: 'counters',
  intents: 'intents',
  idempotency: 'idempotency',
  keys: 'keys',
}

/**
 * Each index as SQL: its table, the key expression (matching the SQL index above, so a
 * lookup uses it) and, for a partial index, the rows it holds. A row whose key is NULL is in
 * no group, as the journal leaves out a record whose key is undefined.
 */
export const INDEX_SQL: Readonly<Record<IndexName, { table: string; key: string; where: string }>> = {
  reviewsByProposal: { table: 'reviews', key: 'proposal', where: 'TRUE' },
  unreleasedLeasesByRun: { table: 'leases', key: 'run_id', where: 'released IS NOT TRUE' },
  unreleasedLeasesByRepo: { table: 'leases', key: 'repo', where: 'released IS NOT TRUE' },
  proposalsByRepoState: { table: 'proposals', key: `(repo || E'\\n' || state)`, where: 'TRUE' },
  tasksByRepo: { table: 'tasks', key: 'repo', where: 'TRUE' },
  idempotencyByExpiry: { table: 'idempotency', key: 'expires_minute', where: 'TRUE' },
}
