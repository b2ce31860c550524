// Which enabled groups a token cannot serve. AGWP names each upstream group's scope after the
// group (read, workspace, propose, coordinate, review, integrate), so a group needs the scope of
// its name. `ag-mcp doctor` and the start-up check both ask this, and say it the same way.
import type { AgwpClient } from './client.ts'
import type { Logger } from '../../core/src/plugin-api.ts'

/** The enabled groups (of this plugin) whose scope `scopes` lacks, in the order given. */
export function missingScopes(groups: readonly string[], scopes: readonly string[]): string[] {
  return groups.filter((g) => !scopes.includes(g))
}

/** What is wrong and how to fix it, for a non-empty `missing`. */
export function scopeAdvice(missing: readonly string[], scopes: readonly string[]): { detail: string; fix: string } {
  const list = missing.join(', ')
  return {
    detail: `enabled group(s) ${list} need scope(s) the token lacks (it has ${scopes.join(',') || 'none'})`,
    fix: `mint a token with --scopes ${[...new Set([...scopes, ...missing])].join(',')}, or leave ${list} out of --allow`,
  }
}

/**
 * The start-up check: asks the upstream who the token is and warns (one stderr line, never the
 * token) when it cannot serve an enabled group, or when the upstream refuses it or cannot be
 * reached, so the operator learns it at start rather than from an agent's failed call.
 */
export async function warnUnservedGroups(
  client: AgwpClient,
  groups: readonly string[],
  log: Logger,
  signal: AbortSignal,
): Promise<void> {
  let me: Record<string, unknown>
  try {
    me = await client.send({ method: 'GET', path: '/whoami' }, signal)
  } catch (e) {
    // The session ended before the upstream answered: nothing is wrong, and nothing is said.
    if (signal.aborted) return log.debug('start-up check stopped: the session ended')
    const f = e as { code?: unknown; status?: unknown; message?: unknown }
    const why = typeof f.status === 'number' ? `${f.status} ${String(f.code)}` : String(f.code ?? 'failed')
    log.warn(
      `start-up check: the upstream could not say who the token is (${why}: ${String(f.message ?? e)}); calls of the ${groups.join(', ')} group(s) will fail until it can; run ag-mcp doctor with the same flags`,
    )
    return
  }
  const scopes = Array.isArray(me['scopes']) ? me['scopes'].filter((s): s is string => typeof s === 'string') : []
  const missing = missingScopes(groups, scopes)
  if (missing.length === 0) {
    log.debug('start-up check: the token has a scope for every enabled upstream group', { scopes: scopes.join(',') })
    return
  }
  const { detail, fix } = scopeAdvice(missing, scopes)
  log.warn(`start-up check: ${detail}; their calls will be refused. Fix: ${fix}`)
}
