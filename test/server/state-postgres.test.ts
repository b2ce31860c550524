import t from 'tap'
import { openState } from '../../server/src/open-state.ts'
import { withPostgres } from '../helpers/postgres.ts'
import { stateContract } from './state-contract.ts'

// The State contract on the PostgreSQL backend: a real server (test/helpers/postgres.ts), a
// fresh database for each test.

await withPostgres(t, async (db) => {
  stateContract(t, 'postgres', async () => openState({ dataDir: '/nonexistent', store: await db.fresh() }))
})
