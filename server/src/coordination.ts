import { minimatch } from 'minimatch'
import type { Ctx } from './context.ts'
import { authorize, inScope, roleAtLeast, roleOf, type Caller } from './auth.ts'
import { conflict, forbidden, invalid } from './errors.ts'
import type { Op } from './state.ts'
import type { LeaseRec, RunRec, TaskRec } from './types.ts'
import { nowIso } from './util.ts'

// Tasks, runs, notes and path leases. Every mutation here is synchronous from its check
// to its store commit, so concurrent requests are serialized by the event loop itself.

const DEFAULT_TTL_S = 900
const deadline = (ttlS: number): string => new Date(Date.now() + ttlS * 1000).toISOString()
const expired = (iso: string): boolean => Date.parse(iso) <= Date.now()

/** A run whose lease ran out is expired even before anything records it. */
export function effectiveRun(r: RunRec): RunRec {
  return r.state === 'active' && expired(r.lease_expires_at) ? { ...r, state: 'expired' } : r
}

/** A claimed task whose run expired is open again. */
export function effectiveTask(ctx: Ctx, t: TaskRec): TaskRec {
  if (t.state !== 'claimed' || !t.run_id) return t
  const run = ctx.store.get('runs', t.run_id)
  return !run || effectiveRun(run).state !== 'active' ? { ...t, state: 'open' } : t
}

export function viewTask(ctx: Ctx, t0: TaskRec): Record<string, unknown> {
  const t = effectiveTask(ctx, t0)
  const out: Record<string, unknown> = { ...t }
  if (t.state === 'claimed' && t.run_id) {
    const run = ctx.store.get('runs', t.run_id)
    if (run) out['claimed_by'] = `${run.principal}#${run.run_id}`
  }
  return out
}

export function viewRun(r0: RunRec): Record<string, unknown> {
  const r = effectiveRun(r0)
  return { ...r, actor: `${r.principal}#${r.run_id}` }
}

export function listTasks(ctx: Ctx, caller: Caller, repo: string, state: string | undefined): TaskRec[] {
  authorize(ctx.store, caller, 'read', repo, 'reader')
  ctx.repos.get(repo)
  if (state !== undefined && !['open', 'claimed', 'done', 'blocked', 'abandoned'].includes(state))
    throw invalid('unknown task state', { field: 'state' })
  return ctx.store
    .byIndex('tasksByRepo', repo)
    .map((t) => effectiveTask(ctx, t))
    .filter((t) => state === undefined || t.state === state)
    .sort((a, b) => Number(a.id.slice(5)) - Number(b.id.slice(5)))
}

export function getTask(ctx: Ctx, caller: Caller, id: string): TaskRec {
  const t = inScope(caller, ctx.store.get('tasks', id), 'task', id)
  authorize(ctx.store, caller, 'read', t.repo, 'reader')
  return t
}

export function createTask(
  ctx: Ctx,
  createdBy: string,
  repo: string,
  body: { title: string; body?: string; paths?: string[] },
): TaskRec {
  ctx.repos.get(repo)
  const { id, op } = ctx.store.nextId('task', 'task-')
  const now = nowIso()
  const t: TaskRec = {
    id,
    repo,
    title: body.title,
    body: body.body ?? '',
    state: 'open',
    paths: body.paths ?? [],
    created_by: createdBy,
    created_at: now,
    updated_at: now,
  }
  ctx.store.commit([op, { c: 'tasks', k: id, v: t }])
  return t
}

export function claimTask(ctx: Ctx, caller: Caller, id: string, ttlS: number | undefined): RunRec {
  const t0 = getTask(ctx, caller, id)
  authorize(ctx.store, caller, 'coordinate', t0.repo, 'contributor')
  const t = effectiveTask(ctx, t0)
  if (t.state !== 'open')
    throw conflict(`task is ${t.state}`, { task: id, state: t.state, ...(t.run_id ? { run_id: t.run_id } : {}) })
  const ops: Op[] = []
  // Record the expiry of the previous run so its history stays truthful.
  if (t0.run_id) {
    const prev = ctx.store.get('runs', t0.run_id)
    if (prev && prev.state === 'active')
      ops.push({ c: 'runs', k: prev.run_id, v: { ...prev, state: 'expired', updated_at: nowIso() } })
  }
  const { id: runId, op } = ctx.store.nextId('run', 'run-')
  const now = nowIso()
  const run: RunRec = {
    run_id: runId,
    task: id,
    repo: t.repo,
    principal: caller.principal,
    state: 'active',
    lease_expires_at: deadline(ttlS ?? DEFAULT_TTL_S),
    notes: [],
    created_at: now,
    updated_at: now,
  }
  ops.push(
    op,
    { c: 'runs', k: runId, v: run },
    { c: 'tasks', k: id, v: { ...t0, state: 'claimed', run_id: runId, updated_at: now } },
  )
  ctx.store.commit(ops)
  return run
}

function ownRun(ctx: Ctx, caller: Caller, id: string): RunRec {
  const r = inScope(caller, ctx.store.get('runs', id), 'run', id, 'run_id')
  authorize(ctx.store, caller, 'coordinate', r.repo, 'contributor')
  if (r.principal !== caller.principal) throw forbidden('run belongs to another principal', { run_id: id })
  return r
}

function liveRun(ctx: Ctx, caller: Caller, id: string): RunRec {
  const r = ownRun(ctx, caller, id)
  const e = effectiveRun(r)
  if (e.state !== 'active') throw conflict(`run is ${e.state}`, { run_id: id, state: e.state })
  return r
}

export function heartbeat(ctx: Ctx, caller: Caller, id: string, ttlS: number | undefined): RunRec {
  const r = liveRun(ctx, caller, id)
  const next: RunRec = { ...r, lease_expires_at: deadline(ttlS ?? DEFAULT_TTL_S), updated_at: nowIso() }
  ctx.store.commit([{ c: 'runs', k: id, v: next }])
  return next
}

export function addNote(ctx: Ctx, caller: Caller, id: string, body: string): Record<string, unknown> {
  // Notes are handoff text: allowed on finished runs too, so the next agent can read why.
  const r = ownRun(ctx, caller, id)
  const { id: nid, op } = ctx.store.nextId('note', 'note-')
  const note = { id: nid, run_id: id, author: `${r.principal}#${r.run_id}`, body, created_at: nowIso() }
  ctx.store.commit([op, { c: 'runs', k: id, v: { ...r, notes: [...r.notes, note], updated_at: nowIso() } }])
  return note
}

export function releaseRun(
  ctx: Ctx,
  caller: Caller,
  id: string,
  outcome: 'done' | 'blocked' | 'abandoned',
  note: string | undefined,
): RunRec {
  const r = liveRun(ctx, caller, id)
  const now = nowIso()
  const ops: Op[] = []
  const notes = [...r.notes]
  if (note !== undefined) {
    const { id: nid, op } = ctx.store.nextId('note', 'note-')
    ops.push(op)
    notes.push({ id: nid, run_id: id, author: `${r.principal}#${r.run_id}`, body: note, created_at: now })
  }
  const next: RunRec = { ...r, state: 'released', outcome, notes, updated_at: now }
  ops.push({ c: 'runs', k: id, v: next })
  const t = ctx.store.get('tasks', r.task)
  // abandoned hands the task back to the pool; done/blocked are terminal task states.
  if (t && t.run_id === id)
    ops.push({ c: 'tasks', k: t.id, v: { ...t, state: outcome === 'abandoned' ? 'open' : outcome, updated_at: now } })
  // Leases of the run end with it.
  for (const l of ctx.store.byIndex('unreleasedLeasesByRun', id))
    ops.push({ c: 'leases', k: l.id, v: { ...l, released: true } })
  ctx.store.commit(ops)
  return next
}

export function getRun(ctx: Ctx, caller: Caller, id: string): RunRec {
  const r = inScope(caller, ctx.store.get('runs', id), 'run', id, 'run_id')
  authorize(ctx.store, caller, 'read', r.repo, 'reader')
  return r
}

const liveLease = (ctx: Ctx, l: LeaseRec): boolean => {
  if (l.released || expired(l.expires_at)) return false
  if (l.run_id) {
    const r = ctx.store.get('runs', l.run_id)
    if (!r || effectiveRun(r).state !== 'active') return false
  }
  return true
}

export function listLeases(ctx: Ctx, caller: Caller, repo: string): LeaseRec[] {
  authorize(ctx.store, caller, 'read', repo, 'reader')
  ctx.repos.get(repo)
  return ctx.store
    .byIndex('unreleasedLeasesByRepo', repo)
    .filter((l) => liveLease(ctx, l))
    .sort((a, b) => Number(a.id.slice(6)) - Number(b.id.slice(6)))
}

export function viewLease(l: LeaseRec): Record<string, unknown> {
  const { principal: _p, released: _r, ...rest } = l
  return rest
}

/**
 * Could two globs match a common path? Exact when either side is a literal path; for
 * two patterns, they are disjoint only if their literal prefixes diverge.
 */
export function globsOverlap(a: string, b: string): boolean {
  const norm = (g: string): string => g.replace(/\/+$/, '/**')
  const x = norm(a)
  const y = norm(b)
  if (x === y) return true
  const opts = { dot: true }
  const literal = (g: string): string => {
    const i = g.search(/[*?[{]/)
    return i < 0 ? g : g.slice(0, i)
  }
  const lx = literal(x)
  const ly = literal(y)
  if (lx === x && minimatch(x, y, opts)) return true
  if (ly === y && minimatch(y, x, opts)) return true
  if (lx === x && ly === y) return false
  // Both have wildcards: overlap is possible unless their literal prefixes diverge.
  const n = Math.min(lx.length, ly.length)
  if (lx.slice(0, n) !== ly.slice(0, n)) return false
  // Same literal prefix: assume overlap (a false conflict is safe, a missed one is not).
  return true
}

export function acquireLease(
  ctx: Ctx,
  caller: Caller,
  repo: string,
  paths: string[],
  ttlS: number | undefined,
): LeaseRec {
  authorize(ctx.store, caller, 'coordinate', repo, 'contributor')
  ctx.repos.get(repo)
  for (const p of paths) {
    if (
      p.includes('\0') ||
      p.includes('\\') ||
      p.startsWith('/') ||
      p.split('/').some((s) => s === '..' || s === '.git')
    )
      throw invalid(`lease path refused: ${p.slice(0, 100)}`, { field: 'paths' })
  }
  const holderRun = caller.run?.run_id
  for (const l of ctx.store.byIndex('unreleasedLeasesByRepo', repo)) {
    if (!liveLease(ctx, l)) continue
    const same =
      holderRun !== undefined ? l.run_id === holderRun : l.run_id === undefined && l.principal === caller.principal
    if (same) continue
    for (const a of paths)
      for (const b of l.paths)
        if (globsOverlap(a, b))
          throw conflict(`'${a}' overlaps lease ${l.id} ('${b}') held by ${l.holder}`, {
            lease: l.id,
            holder: l.holder,
            path: a,
            held: b,
            expires_at: l.expires_at,
          })
  }
  const { id, op } = ctx.store.nextId('lease', 'lease-')
  const lease: LeaseRec = {
    id,
    repo,
    paths,
    holder: caller.actor,
    principal: caller.principal,
    expires_at: deadline(ttlS ?? DEFAULT_TTL_S),
    created_at: nowIso(),
    released: false,
  }
  if (holderRun !== undefined) lease.run_id = holderRun
  ctx.store.commit([op, { c: 'leases', k: id, v: lease }])
  return lease
}

export function releaseLease(ctx: Ctx, caller: Caller, id: string): void {
  const l = inScope(caller, ctx.store.get('leases', id), 'lease', id)
  authorize(ctx.store, caller, 'coordinate', l.repo, 'contributor')
  if (l.principal !== caller.principal && !roleAtLeast(roleOf(ctx.store, l.repo, caller.principal), 'maintainer'))
    throw forbidden('lease belongs to another principal', { lease: id, holder: l.holder })
  if (l.released) throw conflict('lease already released', { lease: id })
  ctx.store.commit([{ c: 'leases', k: id, v: { ...l, released: true } }])
}
