// `ag-server token mint|revoke|list`. mint checks its lists up front (every scope known, every
// repository there), reserves --out before minting, and revokes a token it could not write.
import path from 'node:path'
import { closest } from '../../../lib/closest.ts'
import type { CommandArgs } from '../../../lib/cli/commands.ts'
import { UsageError, listValue, stringValue } from '../../../lib/cli/flags.ts'
import { prepareSecret } from '../datadir.ts'
import { RepoRegistry } from '../repos.ts'
import { SCOPES, type Scope } from '../types.ts'
import { parseDuration } from '../util.ts'
import { validateBody } from '../validate.ts'
import { dataDir, withAdmin, type CliContext } from './admin.ts'

/** `token mint --scopes/--repos`: every scope known and every repository there, or the fix. */
export function checkMintLists(scopes: string[], repos: string[], known: string[]): void {
  const badScopes = scopes.filter((x) => !(SCOPES as readonly string[]).includes(x))
  if (badScopes.length > 0)
    throw new UsageError(
      `--scopes: unknown scope${badScopes.length > 1 ? 's' : ''} ${badScopes
        .map((x) => {
          const near = closest(x, SCOPES)
          return `${x}${near ? ` (did you mean ${near}?)` : ''}`
        })
        .join(', ')}; the scopes are ${SCOPES.join(', ')}`,
    )
  const missing = repos.filter((r) => r !== '*' && !known.includes(r))
  if (missing.length > 0)
    throw new UsageError(
      `--repos: no repository ${missing.join(', ')} in this data directory (it has ${known.length > 0 ? known.join(', ') : 'none'}); add one with ag-server repo add NAME --from PATH, or use '*'`,
    )
}

export async function mint({ values }: CommandArgs, { out }: CliContext): Promise<void> {
  const dir = dataDir(stringValue(values, 'data'))
  const scopes = listValue(values, 'scopes')
  const repos = listValue(values, 'repos')
  checkMintLists(scopes, repos, new RepoRegistry(path.join(dir, 'repos')).names())
  const label = stringValue(values, 'label')
  const body = {
    principal: stringValue(values, 'principal') ?? '',
    scopes: scopes as Scope[],
    repos,
    ttl_s: parseDuration(stringValue(values, 'ttl') ?? ''),
    ...(label ? { label } : {}),
  }
  validateBody('AdminTokenMintRequest', body)
  const file = stringValue(values, 'out') ?? ''
  // The destination is checked and reserved before minting, and a token whose secret could
  // still not be written is revoked: no live token is left that nobody holds.
  const pending = prepareSecret(file, `--out ${file}`)
  const { info } = await withAdmin(dir, async (adm) => {
    const minted = await adm.mint(body)
    try {
      pending.commit(minted.token)
    } catch (e) {
      const id = String(minted.info['id'])
      const why = (e as Error).message
      const revoked = await adm.revoke(id).then(
        () => `token ${id} was revoked, so none is live without its secret`,
        (r: unknown) => `revoking token ${id} failed too (${String(r)}): run ag-server token revoke ${id}`,
      )
      throw new Error(`--out ${file}: the token could not be written (${why}); ${revoked}`)
    }
    return minted
  }).finally(() => pending.abort())
  out(
    `minted ${String(info['id'])} for ${body.principal} (expires ${String(info['expires_at'])}); token written to ${file}`,
  )
}

export async function revoke({ values, positionals }: CommandArgs, { out }: CliContext): Promise<void> {
  const id = positionals[0] ?? ''
  await withAdmin(dataDir(stringValue(values, 'data')), (adm) => adm.revoke(id))
  out(`revoked ${id}`)
}

export async function list({ values }: CommandArgs, { out }: CliContext): Promise<void> {
  out(JSON.stringify(await withAdmin(dataDir(stringValue(values, 'data')), (adm) => adm.tokens()), null, 2))
}
