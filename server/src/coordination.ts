import { minimatch } from 'minimatch'
import type { Ctx } from './context.ts'
import { authorize, inScope, roleAtLeast, roleOf, type Caller } from './auth.ts'
import { conflict, forbidden, invalid } from './errors.ts'
import type { Read, StateReader, Tx } from './state.ts'
import type { LeaseRec, RunRec, TaskRec } from './types.ts'

// Tasks, runs, notes and path leases. Every check-then-write runs in one state transaction
// holding the repository's lock (`repo:<name>`), so of 20 simultaneous claims of a task
// exactly one sees it open, on either backend. Expiry is judged by the transaction's
// clock (t.now), never this process's.

const DEFAULT_TTL_S = 900
const deadline = (now: Date, ttlS: number): string => new Date(now.getTime() + ttlS * 1000).toISOString()
const expired = (iso: string, now: Date): boolean => Date.parse(iso) <= now.getTime()

/** A run whose lease ran out is expired even before anything records it. */
export function effectiveRun(r: RunRec, now: Date): RunRec {
  return r.state === 'active' && expired(r.lease_expires_at, now) ? { ...r, state: 'expired' } : r
}

/** A claimed task whose run expired is open again. */
export async function effectiveTask(state: StateReader, t: TaskRec, now: Date): Promise<TaskRec> {
  if (t.state !== 'claimed' || !t.run_id) return t
  return taskWithRun(t, await state.get('runs', t.run_id), now)
}

/** effectiveTask, given the task's run (undefined: none, or not found). */
function taskWithRun(t: TaskRec, run: RunRec | undefined, now: Date): TaskRec {
  if (t.state !== 'claimed' || !t.run_id) return t
  return !run || effectiveRun(run, now).state !== 'active' ? { ...t, state: 'open' } : t
}

export async function viewTask(ctx: Ctx, t0: TaskRec, now: Date): Promise<Record<string, unknown>> {
  const t = await effectiveTask(ctx.state, t0, now)
  const out: Record<string, unknown> = { ...t }
  if (t.state === 'claimed' && t.run_id) {
    const run = await ctx.state.get('runs', t.run_id)
    if (run) out['claimed_by'] = `${run.principal}#${run.run_id}`
  }
  return out
}

export function viewRun(r0: RunRec, now: Date): Record<string, unknown> {
  const r = effectiveRun(r0, now)
  return { ...r, actor: `${r.principal}#${r.run_id}` }
}

export async function listTasks(
  ctx: Ctx,
  caller: Caller,
  repo: string,
  state: string | undefined,
  now: Date,
): Promise<TaskRec[]> {
  await authorize(ctx.state, caller, 'read', repo, 'reader')
  ctx.repos.get(repo)
  if (state !== undefined && !['open', 'claimed', 'done', 'blocked', 'abandoned'].includes(state))
    throw invalid('unknown task state', { field: 'state' })
  const stored = await ctx.state.byIndex('tasksByRepo', repo)
  // Only a claimed task's run can change what it shows; all of them in one read.
  const claimed = stored.flatMap((t) => (t.state === 'claimed' && t.run_id ? [t.run_id] : []))
  const found = await ctx.state.getMany('runs', claimed)
  const runOf = new Map(claimed.map((id, i) => [id, found[i]]))
  return stored
    .map((t) => taskWithRun(t, t.run_id === undefined ? undefined : runOf.get(t.run_id), now))
    .filter((t) => state === undefined || t.state === state)
    .sort((a, b) => Number(a.id.slice(5)) - Number(b.id.slice(5)))
}

export async function getTask(ctx: Ctx, caller: Caller, id: string, state: StateReader = ctx.state): Promise<TaskRec> {
  const t = inScope(caller, await state.get('tasks', id), 'task', id)
  await authorize(state, caller, 'read', t.repo, 'reader')
  return t
}

export function createTask(
  ctx: Ctx,
  createdBy: string,
  repo: string,
  body: { title: string; body?: string; paths?: string[] },
): Promise<TaskRec> {
  ctx.repos.get(repo)
  return ctx.state.tx([], async (x) => {
    const id = await x.nextId('task', 'task-')
    const now = x.now.toISOString()
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
    x.write({ c: 'tasks', k: id, v: t })
    return t
  })
}

/**
 * The lock every decision about a repository's tasks, runs and leases is made under: its own,
 * not `repo:`, which propose, revise and integrate hold through their git work; claims and
 * leases never read what those decide, so they need not wait for it.
 */
const coordLock = (repo: string): string => `coord:${repo}`

/** fn in a transaction holding repo's coordination lock, `reads` read as it is taken (State.tx). */
function onCoord<T>(ctx: Ctx, repo: string, reads: Read[], fn: (x: Tx) => Promise<T>): Promise<T> {
  return ctx.state.tx([coordLock(repo)], fn, reads)
}

export async function claimTask(
  ctx: Ctx,
  caller: Caller,
  id: string,
  ttlS: number | undefined,
): Promise<{ run: RunRec; now: Date }> {
  const { repo, run_id } = await getTask(ctx, caller, id)
  const reads: Read[] = [
    { c: 'tasks', k: id },
    { c: 'repos', k: repo },
    ...(run_id ? [{ c: 'runs', k: run_id } as const] : []),
  ]
  return onCoord(ctx, repo, reads, async (x) => {
    const t0 = await getTask(ctx, caller, id, x)
    await authorize(x, caller, 'coordinate', t0.repo, 'contributor')
    const t = await effectiveTask(x, t0, x.now)
    if (t.state !== 'open')
      throw conflict(`task is ${t.state}`, { task: id, state: t.state, ...(t.run_id ? { run_id: t.run_id } : {}) })
    const now = x.now.toISOString()
    // Record the expiry of the previous run so its history stays truthful.
    if (t0.run_id) {
      const prev = await x.get('runs', t0.run_id)
      if (prev && prev.state === 'active')
        x.write({ c: 'runs', k: prev.run_id, v: { ...prev, state: 'expired', updated_at: now } })
    }
    const runId = await x.nextId('run', 'run-')
    const run: RunRec = {
      run_id: runId,
      task: id,
      repo: t.repo,
      principal: caller.principal,
      state: 'active',
      lease_expires_at: deadline(x.now, ttlS ?? DEFAULT_TTL_S),
      notes: [],
      created_at: now,
      updated_at: now,
    }
    x.write(
      { c: 'runs', k: runId, v: run },
      { c: 'tasks', k: id, v: { ...t0, state: 'claimed', run_id: runId, updated_at: now } },
    )
    return { run, now: x.now }
  })
}

async function ownRun(state: StateReader, caller: Caller, id: string): Promise<RunRec> {
  const r = inScope(caller, await state.get('runs', id), 'run', id, 'run_id')
  await authorize(state, caller, 'coordinate', r.repo, 'contributor')
  if (r.principal !== caller.principal) throw forbidden('run belongs to another principal', { run_id: id })
  return r
}

async function liveRun(x: Tx, caller: Caller, id: string): Promise<RunRec> {
  const r = await ownRun(x, caller, id)
  const e = effectiveRun(r, x.now)
  if (e.state !== 'active') throw conflict(`run is ${e.state}`, { run_id: id, state: e.state })
  return r
}

/**
 * fn in a transaction under the lock of run id's repository (found first: a run never changes
 * repository), the run, its repository's record and what `more` names read with the lock.
 */
async function onRun<T>(
  ctx: Ctx,
  caller: Caller,
  id: string,
  more: (r: RunRec) => Read[],
  fn: (x: Tx) => Promise<T>,
): Promise<T> {
  const r = await ownRun(ctx.state, caller, id)
  const reads: Read[] = [{ c: 'runs', k: id }, { c: 'repos', k: r.repo }, ...more(r)]
  return onCoord(ctx, r.repo, reads, fn)
}

/** A heartbeat or a note reads the run alone. */
const runAlone = (): Read[] => []
/** A run's release reads its task and its leases. */
const releaseReads = (r: RunRec): Read[] => [
  { c: 'tasks', k: r.task },
  { index: 'unreleasedLeasesByRun', key: r.run_id },
]

export function heartbeat(
  ctx: Ctx,
  caller: Caller,
  id: string,
  ttlS: number | undefined,
): Promise<{ run: RunRec; now: Date }> {
  return onRun(ctx, caller, id, runAlone, async (x) => {
    const r = await liveRun(x, caller, id)
    const next: RunRec = {
      ...r,
      lease_expires_at: deadline(x.now, ttlS ?? DEFAULT_TTL_S),
      updated_at: x.now.toISOString(),
    }
    x.write({ c: 'runs', k: id, v: next })
    return { run: next, now: x.now }
  })
}

export function addNote(ctx: Ctx, caller: Caller, id: string, body: string): Promise<Record<string, unknown>> {
  return onRun(ctx, caller, id, runAlone, async (x) => {
    // Notes are handoff text: allowed on finished runs too, so the next agent can read why.
    const r = await ownRun(x, caller, id)
    const nid = await x.nextId('note', 'note-')
    const at = x.now.toISOString()
    const note = { id: nid, run_id: id, author: `${r.principal}#${r.run_id}`, body, created_at: at }
    x.write({ c: 'runs', k: id, v: { ...r, notes: [...r.notes, note], updated_at: at } })
    return note
  })
}

export function releaseRun(
  ctx: Ctx,
  caller: Caller,
  id: string,
  outcome: 'done' | 'blocked' | 'abandoned',
  note: string | undefined,
): Promise<{ run: RunRec; now: Date }> {
  return onRun(ctx, caller, id, releaseReads, async (x) => {
    const r = await liveRun(x, caller, id)
    const now = x.now.toISOString()
    const notes = [...r.notes]
    if (note !== undefined) {
      const nid = await x.nextId('note', 'note-')
      notes.push({ id: nid, run_id: id, author: `${r.principal}#${r.run_id}`, body: note, created_at: now })
    }
    const next: RunRec = { ...r, state: 'released', outcome, notes, updated_at: now }
    x.write({ c: 'runs', k: id, v: next })
    const t = await x.get('tasks', r.task)
    // abandoned hands the task back to the pool; done/blocked are terminal task states.
    if (t && t.run_id === id)
      x.write({ c: 'tasks', k: t.id, v: { ...t, state: outcome === 'abandoned' ? 'open' : outcome, updated_at: now } })
    // Leases of the run end with it.
    for (const l of await x.byIndex('unreleasedLeasesByRun', id))
      x.write({ c: 'leases', k: l.id, v: { ...l, released: true } })
    return { run: next, now: x.now }
  })
}

export async function getRun(ctx: Ctx, caller: Caller, id: string): Promise<RunRec> {
  const r = inScope(caller, await ctx.state.get('runs', id), 'run', id, 'run_id')
  await authorize(ctx.state, caller, 'read', r.repo, 'reader')
  return r
}

/** The leases of repo still in force: not released, not expired, and held by no run that ended. */
async function liveLeases(state: StateReader, repo: string, now: Date): Promise<LeaseRec[]> {
  const current = (await state.byIndex('unreleasedLeasesByRepo', repo)).filter(
    (l) => !l.released && !expired(l.expires_at, now),
  )
  // Every run in one read: acquireLease holds the repository's lock while it runs this.
  const runIds = current.flatMap((l) => (l.run_id ? [l.run_id] : []))
  const found = await state.getMany('runs', runIds)
  const runOf = new Map(runIds.map((id, i) => [id, found[i]]))
  return current.filter((l) => {
    if (!l.run_id) return true
    const r = runOf.get(l.run_id)
    return r !== undefined && effectiveRun(r, now).state === 'active'
  })
}

export async function listLeases(ctx: Ctx, caller: Caller, repo: string): Promise<LeaseRec[]> {
  await authorize(ctx.state, caller, 'read', repo, 'reader')
  ctx.repos.get(repo)
  return (await liveLeases(ctx.state, repo, await ctx.state.now())).sort(
    (a, b) => Number(a.id.slice(6)) - Number(b.id.slice(6)),
  )
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

export async function acquireLease(
  ctx: Ctx,
  caller: Caller,
  repo: string,
  paths: string[],
  ttlS: number | undefined,
): Promise<LeaseRec> {
  await authorize(ctx.state, caller, 'coordinate', repo, 'contributor')
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
  // Under the repository's lock: no other lease of it can be taken between the overlap
  // check and this lease's write.
  const reads: Read[] = [{ index: 'unreleasedLeasesByRepo', key: repo, with: { c: 'runs', field: 'run_id' } }]
  return onCoord(ctx, repo, reads, async (x) => {
    for (const l of await liveLeases(x, repo, x.now)) {
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
    const id = await x.nextId('lease', 'lease-')
    const lease: LeaseRec = {
      id,
      repo,
      paths,
      holder: caller.actor,
      principal: caller.principal,
      expires_at: deadline(x.now, ttlS ?? DEFAULT_TTL_S),
      created_at: x.now.toISOString(),
      released: false,
    }
    if (holderRun !== undefined) lease.run_id = holderRun
    x.write({ c: 'leases', k: id, v: lease })
    return lease
  })
}

export async function releaseLease(ctx: Ctx, caller: Caller, id: string): Promise<void> {
  const { repo } = inScope(caller, await ctx.state.get('leases', id), 'lease', id)
  const reads: Read[] = [
    { c: 'leases', k: id },
    { c: 'repos', k: repo },
  ]
  await onCoord(ctx, repo, reads, async (x) => {
    const l = inScope(caller, await x.get('leases', id), 'lease', id)
    await authorize(x, caller, 'coordinate', l.repo, 'contributor')
    if (l.principal !== caller.principal && !roleAtLeast(await roleOf(x, l.repo, caller.principal), 'maintainer'))
      throw forbidden('lease belongs to another principal', { lease: id, holder: l.holder })
    if (l.released) throw conflict('lease already released', { lease: id })
    x.write({ c: 'leases', k: id, v: { ...l, released: true } })
  })
}
