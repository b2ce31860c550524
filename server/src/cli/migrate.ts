// `ag-server migrate --store postgres://…`: apply the PostgreSQL schema's pending migrations
// and nothing else, for an operator who upgrades the database before starting the servers
// (serve migrates at start unless --no-migrate).
import type { CommandArgs } from '../../../lib/cli/commands.ts'
import { UsageError, stringValue } from '../../../lib/cli/flags.ts'
import { isPostgresUrl } from '../open-state.ts'
import { redactUrl } from '../pg/url.ts'
import type { CliContext } from './admin.ts'

export async function migrate({ values }: CommandArgs, { out }: CliContext): Promise<void> {
  const url = stringValue(values, 'store') ?? ''
  if (!isPostgresUrl(url)) throw new UsageError(`--store must be a postgres:// URL, got ${redactUrl(url)}`)
  const { PgState } = await import('../pg/pg-state.ts')
  const { state, migrated } = await PgState.open(url)
  await state.close()
  const { from, to } = migrated ?? { from: 0, to: 0 }
  out(
    from === to
      ? `${redactUrl(url)}: schema at version ${to}, nothing to migrate`
      : `${redactUrl(url)}: schema migrated from version ${from} to ${to}`,
  )
}
