import type { Ctx } from '../context.ts'
import { authorize, roleAtLeast, roleOf, tokenCoversRepo, type Caller } from '../auth.ts'
import { invalid } from '../errors.ts'
import { commitDetail } from '../gitread.ts'
import { checkRepoName } from '../paths.ts'
import * as pr from '../proposals.ts'
import * as rv from '../reviews.ts'
import { integrate } from '../integrate.ts'
import { effectiveRun, effectiveTask, getRun, getTask } from '../coordination.ts'
import type { ProposalRec } from '../types.ts'

// What the review page reads and does, for a signed-in person: the same services and the same
// authority checks as AGWP's endpoints (a refusal carries the server's own reason), shaped for
// one page each. Scrubbing is left to the caller (index.ts), over everything answered.

const STATES: readonly ProposalRec['state'][] = ['open', 'integrated', 'withdrawn']
const num = (id: string): number => Number(id.slice(id.indexOf('-') + 1))

/** The repositories the caller may read: the token covers them and the principal has a role there. */
export async function readableRepos(ctx: Ctx, caller: Caller): Promise<{ name: string; role: string }[]> {
  const out: { name: string; role: string }[] = []
  if (!caller.token.scopes.includes('read')) return out
  for (const name of ctx.repos.names()) {
    const role = await roleOf(ctx.state, name, caller.principal)
    if (role !== null && tokenCoversRepo(caller.token, name)) out.push({ name, role })
  }
  return out
}

function count(m: Map<string, number>, k: string | undefined): void {
  if (k !== undefined) m.set(k, (m.get(k) ?? 0) + 1)
}
const facet = (m: Map<string, number>): { value: string; count: number }[] =>
  [...m].map(([value, n]) => ({ value, count: n })).sort((a, b) => a.value.localeCompare(b.value))

function intParam(q: URLSearchParams, k: string, def: number, max: number): number {
  const raw = q.get(k)
  if (raw === null || raw === '') return def
  if (!/^[0-9]{1,7}$/.test(raw)) throw invalid(`${k} must be a non-negative integer`, { field: k })
  return Math.min(Number(raw), max)
}

/**
 * One page of the proposals the caller may read, newest first, filtered by state (default open;
 * `all`), repository, author (principal) and task, with the values each filter can take.
 */
export async function listView(ctx: Ctx, caller: Caller, q: URLSearchParams): Promise<Record<string, unknown>> {
  const state = q.get('state') || 'open'
  if (state !== 'all' && !(STATES as readonly string[]).includes(state))
    throw invalid('state must be open, integrated, withdrawn or all', { field: 'state' })
  const repo = q.get('repo') || undefined
  const author = q.get('author') || undefined
  const task = q.get('task') || undefined
  const offset = intParam(q, 'offset', 0, 10_000_000)
  const limit = Math.max(1, intParam(q, 'limit', 50, 200))
  const repos = (await readableRepos(ctx, caller)).map((r) => r.name)
  if (repo !== undefined) {
    checkRepoName(repo)
    await authorize(ctx.state, caller, 'read', repo, 'reader')
    ctx.repos.get(repo)
  }
  const states = state === 'all' ? STATES : [state]
  const all: ProposalRec[] = []
  for (const r of repo !== undefined ? [repo] : repos)
    for (const s of states) all.push(...(await ctx.state.byIndex('proposalsByRepoState', `${r}\n${s}`)))
  all.sort((a, b) => num(b.id) - num(a.id))
  const authors = new Map<string, number>()
  const tasks = new Map<string, number>()
  const inRepo = new Map<string, number>()
  for (const p of all) {
    count(authors, p.author_principal)
    count(tasks, p.task)
    count(inRepo, p.repo)
  }
  const hits = all.filter(
    (p) => (author === undefined || p.author_principal === author) && (task === undefined || p.task === task),
  )
  return {
    proposals: hits
      .slice(offset, offset + limit)
      .map((p) => ({ ...pr.summary(p), author_principal: p.author_principal })),
    total: hits.length,
    offset,
    limit,
    facets: {
      repos: repos.map((name) => ({ value: name, count: inRepo.get(name) ?? 0 })),
      authors: facet(authors),
      tasks: facet(tasks),
    },
  }
}

type Allowed = { allowed: true } | { allowed: false; reason: string }

async function allowedIf(check: () => Promise<void>): Promise<Allowed> {
  try {
    await check()
    return { allowed: true }
  } catch (e) {
    return { allowed: false, reason: (e as Error).message }
  }
}

/** Which actions the caller may take, each with the server's reason when it may not. */
async function actionsFor(ctx: Ctx, caller: Caller, p: ProposalRec): Promise<Record<string, Allowed>> {
  const open = (): void => {
    if (p.state !== 'open') throw new Error(`proposal is ${p.state}`)
  }
  return {
    review: await allowedIf(async () => {
      await authorize(ctx.state, caller, 'review', p.repo, 'reviewer')
      open()
      if (p.author_principal === caller.principal)
        throw new Error('the author of a proposal cannot approve or reject it')
    }),
    integrate: await allowedIf(async () => {
      await authorize(ctx.state, caller, 'integrate', p.repo, 'maintainer')
      open()
    }),
    reject: await allowedIf(async () => {
      await authorize(ctx.state, caller, 'propose', p.repo, 'contributor')
      if (
        p.author_principal !== caller.principal &&
        !roleAtLeast(await roleOf(ctx.state, p.repo, caller.principal), 'maintainer')
      )
        throw new Error('only the author or a maintainer can withdraw')
      open()
    }),
  }
}

/** The run a proposal was made in: its author is `principal#run-N` when it was made within one. */
async function runOf(ctx: Ctx, caller: Caller, p: ProposalRec): Promise<Record<string, unknown> | undefined> {
  const id = p.author.includes('#')
    ? p.author.slice(p.author.indexOf('#') + 1)
    : (await ctx.state.get('workspaces', p.workspace))?.run_id
  if (id === undefined) return undefined
  try {
    const r = effectiveRun(await getRun(ctx, caller, id), await ctx.state.now())
    return {
      run_id: r.run_id,
      task: r.task,
      principal: r.principal,
      state: r.state,
      outcome: r.outcome,
      notes: r.notes,
      created_at: r.created_at,
      updated_at: r.updated_at,
    }
  } catch {
    return undefined
  }
}

async function taskOf(ctx: Ctx, caller: Caller, p: ProposalRec): Promise<Record<string, unknown> | undefined> {
  if (p.task === undefined) return undefined
  try {
    const t = await effectiveTask(ctx.state, await getTask(ctx, caller, p.task), await ctx.state.now())
    return { id: t.id, title: t.title, body: t.body, state: t.state, paths: t.paths }
  } catch {
    return undefined
  }
}

/** The commits integration brings in, newest first (first parents from head to the merge base), at most 20. */
async function commitsOf(ctx: Ctx, p: ProposalRec, mergeBase: string | null): Promise<Record<string, unknown>[]> {
  const repo = ctx.repos.get(p.repo)
  const out: Record<string, unknown>[] = []
  let id: string | undefined = p.head
  while (id !== undefined && id !== mergeBase && out.length < 20) {
    const c = await commitDetail(repo, id)
    out.push({ id: c.id, subject: c.subject, message: c.message, author: c.author, committer: c.committer })
    id = c.parents[0]
  }
  return out
}

/** Everything one proposal's page shows but its diff. */
export async function proposalView(ctx: Ctx, caller: Caller, id: string): Promise<Record<string, unknown>> {
  const p = await pr.getProposal(ctx, caller, id)
  const view = await rv.evaluate(ctx, p)
  const keyId = p.provenance?.key_id
  const key = keyId !== undefined ? await ctx.state.get('keys', keyId) : undefined
  return {
    proposal: view,
    task: await taskOf(ctx, caller, p),
    run: await runOf(ctx, caller, p),
    commits: await commitsOf(ctx, p, view['merge_base'] as string | null),
    signer: key
      ? { key_id: key.id, principal: key.principal, label: key.label, revoked_at: key.revoked_at }
      : undefined,
    actions: await actionsFor(ctx, caller, p),
  }
}

const VERDICTS = ['approve', 'request_changes', 'comment'] as const
const STRATEGIES = ['merge', 'fast_forward', 'squash'] as const

const text = (b: Record<string, unknown>, k: string, max: number): string | undefined => {
  const v = b[k]
  if (v === undefined || v === '') return undefined
  if (typeof v !== 'string' || v.length > max)
    throw invalid(`${k} must be text of at most ${max} characters`, { field: k })
  return v
}

export async function reviewAction(ctx: Ctx, caller: Caller, id: string, b: Record<string, unknown>): Promise<unknown> {
  const verdict = b['verdict']
  if (!(VERDICTS as readonly unknown[]).includes(verdict))
    throw invalid('verdict must be approve, request_changes or comment', { field: 'verdict' })
  const body = text(b, 'body', 65_536)
  if (verdict === 'request_changes' && body === undefined)
    throw invalid('say what should change: a comment is required', { field: 'body' })
  const r = await rv.createReview(ctx, caller, id, {
    verdict: verdict as (typeof VERDICTS)[number],
    ...(body !== undefined ? { body } : {}),
  })
  return rv.viewReview(r)
}

export async function integrateAction(
  ctx: Ctx,
  caller: Caller,
  id: string,
  b: Record<string, unknown>,
): Promise<unknown> {
  const strategy = b['strategy'] ?? 'merge'
  if (!(STRATEGIES as readonly unknown[]).includes(strategy))
    throw invalid('strategy must be merge, fast_forward or squash', { field: 'strategy' })
  const expected = b['expected_target_head']
  if (expected !== undefined && (typeof expected !== 'string' || !/^[0-9a-f]{40}$/.test(expected)))
    throw invalid('expected_target_head must be a commit id', { field: 'expected_target_head' })
  return integrate(ctx, caller, id, {
    strategy: strategy as (typeof STRATEGIES)[number],
    ...(expected !== undefined ? { expected_target_head: expected as string } : {}),
  })
}

export async function rejectAction(ctx: Ctx, caller: Caller, id: string, b: Record<string, unknown>): Promise<unknown> {
  const reason = text(b, 'reason', 4096)
  return pr.summary(await pr.withdrawProposal(ctx, caller, id, reason))
}
