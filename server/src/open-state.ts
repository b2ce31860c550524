import path from 'node:path'
import { JournalState } from './journal-state.ts'
import { redactUrl } from './pg/url.ts'
import type { State } from './state.ts'
import { Store, type StoreOptions } from './store.ts'

// The one place a State is made: serve, the offline CLI and tests open theirs here, so a
// second backend (PostgreSQL, issue 30) is chosen here and nowhere else.

export interface OpenStateOptions {
  /** the server's data directory; the journal lives in its state/ */
  dataDir: string
  /** where warnings go (default stderr) */
  log?: (msg: string) => void
  /** the journal store's tuning and fault injection (tests) */
  journal?: Omit<StoreOptions, 'log'>
  /** a postgres:// URL: the state lives in that database instead of the journal */
  store?: string
  /** with a postgres store: apply pending migrations first (default), or refuse an old schema */
  migrate?: boolean
}

/** Whether a --store value names a PostgreSQL database. */
export const isPostgresUrl = (s: string): boolean => /^postgres(ql)?:\/\//.test(s)

export async function openState(opts: OpenStateOptions): Promise<State> {
  if (opts.store !== undefined) {
    if (!isPostgresUrl(opts.store)) throw new Error(`--store must be a postgres:// URL, got ${redactUrl(opts.store)}`)
    // Loaded only here: the journal path (and ag-mcp) never evaluates the pg client.
    const { PgState } = await import('./pg/pg-state.ts')
    const { state, migrated } = await PgState.open(opts.store, opts.migrate === false ? { migrate: false } : {})
    if (migrated && migrated.from !== migrated.to)
      (opts.log ?? ((m: string) => process.stderr.write(`${m}\n`)))(
        `ag-server: ${redactUrl(opts.store)}: schema migrated from version ${migrated.from} to ${migrated.to}`,
      )
    return state
  }
  const store = Store.open(path.join(opts.dataDir, 'state'), {
    ...(opts.journal ?? {}),
    ...(opts.log ? { log: opts.log } : {}),
  })
  return new JournalState(store)
}
