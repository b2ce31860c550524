import path from 'node:path'
import { JournalState } from './journal-state.ts'
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
}

export async function openState(opts: OpenStateOptions): Promise<State> {
  const store = Store.open(path.join(opts.dataDir, 'state'), {
    ...(opts.journal ?? {}),
    ...(opts.log ? { log: opts.log } : {}),
  })
  return new JournalState(store)
}
