// --require-lease: before a write leaves the process, confirm on the server that the lease
// is live, held by the calling run (or, outside a run, by this principal outside any run),
// and that its globs cover every path written. A verdict's reason becomes part of ag-mcp's
// trusted summary line, so it names upstream values only when they are plainly safe.
import { minimatch } from 'minimatch'
import { isPluginFailure } from '../../core/src/plugin-api.ts'
import type { LeaseCheck, LeaseVerdict } from '../../core/src/plugin-api.ts'
import { execute } from './executor.ts'
import type { AgwpContext } from './executor.ts'
import type { Operation } from './operation.ts'

interface Lease {
  id: string
  paths: string[]
  holder: string
  run_id?: string
}

const MAX_PAGES = 5

/** A value from the call or the upstream in ag-mcp's trusted refusal line: quoted, as data. */
const safe = (s: unknown): string =>
  typeof s === 'string' && /^[A-Za-z0-9_.:#/*@+-]{1,200}$/.test(s) ? JSON.stringify(s) : '(not shown)'

export async function confirmLease(q: LeaseCheck, ctx: AgwpContext): Promise<LeaseVerdict> {
  try {
    const repo = q.repo ?? (await workspaceRepo(q, ctx))
    const lease = await findLease(ctx, repo, q.leaseId)
    if (!lease)
      return {
        ok: false,
        reason: `lease ${safe(q.leaseId)} is not live in repository ${safe(repo)} (released, expired, or never acquired there); acquire one with lease_acquire.`,
      }
    if (q.runId !== undefined) {
      if (lease.run_id !== q.runId)
        return {
          ok: false,
          reason: `lease ${safe(q.leaseId)} is not held by run ${safe(q.runId)} (holder: ${safe(lease.holder)}).`,
        }
    } else {
      const me = await execute(ctx, {}, { method: 'GET', path: '/whoami' })
      if (lease.run_id !== undefined || lease.holder !== me['principal'])
        return {
          ok: false,
          reason: `lease ${safe(q.leaseId)} is held by ${safe(lease.holder)}; pass the run_id that holds it.`,
        }
    }
    const globs = lease.paths.map((g) => g.replace(/\/+$/, '/**'))
    const uncovered = q.paths.filter((p) => !globs.some((g) => minimatch(p, g, { dot: true })))
    if (uncovered.length > 0)
      return {
        ok: false,
        reason: `lease ${safe(q.leaseId)} does not cover ${uncovered.length} of the written paths, e.g. ${safe(uncovered[0])}; lease_acquire a glob that does.`,
      }
    return { ok: true }
  } catch (e) {
    if (ctx.signal.aborted || !isPluginFailure(e)) throw e
    return {
      ok: false,
      reason: `the lease could not be confirmed: ${e.origin === 'upstream' ? 'the upstream answered' : 'the agwp plugin reported'} ${safe(e.code)}${e.status !== undefined ? ` (${e.status})` : ''}.`,
    }
  }
}

async function workspaceRepo(q: LeaseCheck, ctx: AgwpContext): Promise<string> {
  const ws = await execute(ctx, q.args, { method: 'GET', path: '/workspaces/{workspace}' })
  return String(ws['repo'])
}

async function findLease(ctx: AgwpContext, repo: string, id: string): Promise<Lease | undefined> {
  const op: Operation = { method: 'GET', path: '/repos/{repo}/leases', query: ['limit', 'cursor'] }
  let cursor: string | undefined
  for (let page = 0; page < MAX_PAGES; page++) {
    const res = await execute(ctx, { repo, limit: 1000, ...(cursor !== undefined ? { cursor } : {}) }, op)
    const leases = Array.isArray(res['leases']) ? (res['leases'] as Lease[]) : []
    const hit = leases.find((l) => l.id === id)
    if (hit) return hit
    if (typeof res['next_cursor'] !== 'string') return undefined
    cursor = res['next_cursor']
  }
  return undefined
}
