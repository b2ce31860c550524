import { minimatch } from 'minimatch'
import type { Ctx } from './context.ts'
import { authorize, inScope, policyOf, roleAtLeast, roleOf, type Caller } from './auth.ts'
import { conflict, forbidden, invalid } from './errors.ts'
import { casWithIntent } from './intents.ts'
import { formatCommit, writeObject, type RawObject } from './objects.ts'
import type { Op } from './store.ts'
import { diff, mergeability, mergeTree } from './gitread.ts'
import { checkBranch, checkPath } from './paths.ts'
import type { MergeInfo, Repo } from './repos.ts'
import type { ProposalRec, ReviewRec, WorkspaceRec } from './types.ts'
import { nowIso, page } from './util.ts'
import { attachRecord, provenanceStatus } from './provenance.ts'
import { releaseWorkspaceRef } from './wsrefs.ts'
import { getWorkspace } from './workspaces.ts'
import { buildTree } from './wstree.ts'

// Proposals are real commits on refs/proposals/<id> whose parent is the workspace base.
// Metadata (reviews, provenance, state) lives in the store; the ref is the truth for head.

const refOf = (id: string): string => `refs/proposals/${id}`

function emailOf(principal: string): string {
  const [kind, name] = principal.split(':')
  return `${name ?? 'unknown'}@${kind ?? 'unknown'}.agwp.invalid`
}

/** Who the caller's commits are by: the token's identity (repos.ts), else its actor. */
const identityOf = (repo: Repo, caller: Caller) =>
  repo.identityFor(caller.token.id, { name: caller.actor, email: emailOf(caller.principal) })

async function commitWorkspace(repo: Repo, ws: WorkspaceRec, caller: Caller, message: string): Promise<string> {
  // The commit object is written in-process (objects.ts) in the same batch as the trees:
  // author and committer come from the token (or its principal), never from a git configuration.
  const { author, committer } = identityOf(repo, caller)
  const commit = (tree: string): RawObject => ({
    type: 'commit',
    body: formatCommit({ tree, parents: ws.base ? [ws.base] : [], author, committer, message }),
  })
  return (await buildTree(repo, ws, commit)).extra as string
}

function messageFor(
  p: { id: string; title: string; description: string; task?: string | undefined },
  caller: Caller,
): string {
  const trailers = [`AGWP-Proposal: ${p.id}`]
  if (p.task) trailers.push(`AGWP-Task: ${p.task}`)
  if (caller.run) trailers.push(`AGWP-Run: ${caller.run.run_id}`)
  return `${p.title}\n\n${p.description ? p.description + '\n\n' : ''}${trailers.join('\n')}\n`
}

export function getProposal(ctx: Ctx, caller: Caller, id: string): ProposalRec {
  const p = inScope(caller, ctx.store.get('proposals', id), 'proposal', id)
  authorize(ctx.store, caller, 'read', p.repo, 'reader')
  return p
}

export async function createProposal(
  ctx: Ctx,
  caller: Caller,
  wsId: string,
  body: { title: string; description?: string; task?: string; reasoning?: string; target?: string },
): Promise<ProposalRec> {
  const ws0 = getWorkspace(ctx, caller, wsId, false)
  authorize(ctx.store, caller, 'propose', ws0.repo, 'contributor')
  if (ws0.state !== 'open') throw conflict('workspace is discarded', { workspace: wsId })
  if (body.task !== undefined) {
    const t = ctx.store.get('tasks', body.task)
    if (!t || t.repo !== ws0.repo)
      throw invalid(`task '${body.task.slice(0, 64)}' not found in this repository`, { field: 'task' })
  }
  const repo = ctx.repos.get(ws0.repo)
  const target = checkBranch(body.target ?? (await defaultTarget(repo, ws0)), 'target')
  await requireBranchBase(repo, ws0, await repo.branchHead(target))
  // No repository lock: the id is reserved up front (a failed attempt burns it), so the
  // new ref cannot collide and commit building runs in parallel with other proposals.
  {
    const ws = ws0
    if (Object.keys(ws.changes).length === 0) throw invalid('workspace has no changes to propose', { workspace: wsId })
    const { id, op } = ctx.store.nextId('proposal', 'pr-')
    ctx.store.commit([op])
    const description = body.description ?? ''
    const head = await commitWorkspace(
      repo,
      ws,
      caller,
      messageFor({ id, title: body.title, description, task: body.task }, caller),
    )
    const now = nowIso()
    const p: ProposalRec = {
      id,
      repo: ws.repo,
      title: body.title,
      description,
      reasoning: body.reasoning ?? '',
      state: 'open',
      author: caller.actor,
      author_principal: caller.principal,
      target,
      base: ws.base,
      head,
      workspace: ws.id,
      revisions: [{ number: 1, head, base: ws.base, workspace: ws.id, by: caller.actor, created_at: now }],
      created_at: now,
      updated_at: now,
    }
    if (body.task !== undefined) p.task = body.task
    // What changes, never a copy of the list: an intent replayed at start-up must not
    // drop proposals other requests added to the workspace in the meantime.
    const record = (): Op[] => [
      { c: 'proposals', k: id, v: p },
      { c: 'workspaces', k: ws.id, at: ['proposals'], add: id },
    ]
    if (!(await casWithIntent(ctx, repo, refOf(id), head, null, 'exact', record)))
      throw conflict('proposal ref already exists', { ref: refOf(id) })
    // The proposal ref keeps what was proposed: the workspace ref goes unless writes followed.
    await releaseWorkspaceRef(ctx, repo, ws.id)
    return p
  }
}

/**
 * A proposal's parent must be on a branch. A workspace based on unreviewed commits (another
 * proposal's) would carry them into the target behind a diff that shows only its own change.
 * Workspaces are created on branches only; this also refuses a workspace whose base has left
 * every branch since, or that was created before the rule.
 */
async function requireBranchBase(repo: Repo, ws: WorkspaceRec, targetHead: string | null): Promise<void> {
  if (ws.base === null || ws.base === targetHead || (await repo.onSomeBranch(ws.base))) return
  throw conflict(
    `workspace ${ws.id} is based on ${ws.base.slice(0, 12)}, which no branch contains: only work on a branch can be proposed (create a workspace on a branch and write the change there)`,
    { workspace: ws.id, base: ws.base },
  )
}

async function defaultTarget(repo: Repo, ws: WorkspaceRec): Promise<string> {
  if (ws.base === null) return repo.defaultBranch()
  const head = await repo.branchHead(ws.base_ref).catch(() => null)
  return head !== null && !/^[0-9a-f]{40}$/.test(ws.base_ref) ? ws.base_ref : repo.defaultBranch()
}

export async function reviseProposal(
  ctx: Ctx,
  caller: Caller,
  id: string,
  body: { workspace: string; note?: string },
): Promise<ProposalRec> {
  const p0 = getProposal(ctx, caller, id)
  authorize(ctx.store, caller, 'propose', p0.repo, 'contributor')
  if (p0.author_principal !== caller.principal)
    throw forbidden('only the author can revise a proposal', { author: p0.author_principal })
  const ws = getWorkspace(ctx, caller, body.workspace, false)
  if (ws.repo !== p0.repo) throw invalid('workspace belongs to another repository', { field: 'workspace' })
  const repo = ctx.repos.get(p0.repo)
  await requireBranchBase(repo, ws, await repo.branchHead(p0.target))
  return ctx.mutex.run(`repo:${p0.repo}`, async () => {
    const p = ctx.store.get('proposals', id) as ProposalRec
    if (p.state !== 'open') throw conflict(`proposal is ${p.state}`, { state: p.state })
    const head = await commitWorkspace(
      repo,
      ws,
      caller,
      messageFor({ id, title: p.title, description: p.description, task: p.task }, caller),
    )
    const now = nowIso()
    const rev = {
      number: p.revisions.length + 1,
      head,
      base: ws.base,
      workspace: ws.id,
      by: caller.actor,
      created_at: now,
      ...(body.note !== undefined ? { note: body.note } : {}),
    }
    const next: ProposalRec = {
      ...p,
      head,
      base: ws.base,
      workspace: ws.id,
      revisions: [...p.revisions, rev],
      updated_at: now,
    }
    const record = (): Op[] => {
      const at = (field: keyof ProposalRec, v: unknown): Op => ({ c: 'proposals', k: id, at: [field], v })
      return [
        at('head', head),
        at('base', ws.base),
        at('workspace', ws.id),
        { c: 'proposals', k: id, at: ['revisions'], add: rev },
        at('updated_at', now),
        { c: 'workspaces', k: ws.id, at: ['proposals'], add: id },
      ]
    }
    if (!(await casWithIntent(ctx, repo, refOf(id), head, p.head, 'exact', record)))
      throw conflict('proposal head moved', { ref: refOf(id) })
    await releaseWorkspaceRef(ctx, repo, ws.id)
    return ctx.store.get('proposals', id) ?? next
  })
}

/**
 * Withdraw: a state transition, so a compare-and-set under the repository's lock, the
 * same one integrate and revise hold across their git work. Whichever of withdraw and
 * integrate comes second sees the state the first one left and gets 409 naming it.
 */
export async function withdrawProposal(
  ctx: Ctx,
  caller: Caller,
  id: string,
  reason: string | undefined,
): Promise<ProposalRec> {
  const p0 = getProposal(ctx, caller, id)
  authorize(ctx.store, caller, 'propose', p0.repo, 'contributor')
  if (
    p0.author_principal !== caller.principal &&
    !roleAtLeast(roleOf(ctx.store, p0.repo, caller.principal), 'maintainer')
  )
    throw forbidden('only the author or a maintainer can withdraw', {})
  return ctx.mutex.run(`repo:${p0.repo}`, async () => {
    const p = ctx.store.get('proposals', id) as ProposalRec
    if (p.state !== 'open') throw conflict(`proposal is ${p.state}`, { state: p.state })
    const now = nowIso()
    const at = (field: keyof ProposalRec, v: unknown): Op => ({ c: 'proposals', k: id, at: [field], v })
    ctx.store.commit([
      at('state', 'withdrawn'),
      at('updated_at', now),
      ...(reason !== undefined ? [at('withdrawn_reason', reason)] : []),
    ])
    return ctx.store.get('proposals', id) as ProposalRec
  })
}

const PROPOSAL_STATES: ProposalRec['state'][] = ['open', 'integrated', 'withdrawn']

/** One page of a repository's proposals (of one state, if given), oldest first; only that page is read. */
export function listProposals(
  ctx: Ctx,
  caller: Caller,
  repo: string,
  state: string | undefined,
  cursor: string | undefined,
  limit: number,
): { items: ProposalRec[]; next_cursor?: string } {
  authorize(ctx.store, caller, 'read', repo, 'reader')
  ctx.repos.get(repo)
  if (state !== undefined && !(PROPOSAL_STATES as string[]).includes(state))
    throw invalid('state must be open, integrated or withdrawn', { field: 'state' })
  const ids = (state === undefined ? PROPOSAL_STATES : [state])
    .flatMap((s) => ctx.store.idsByIndex('proposalsByRepoState', `${repo}\n${s}`))
    .sort((a, b) => Number(a.slice(3)) - Number(b.slice(3)))
  const pg = page(ids, cursor, limit)
  return { ...pg, items: pg.items.map((id) => ctx.store.get('proposals', id) as ProposalRec) }
}

export function summary(p: ProposalRec): Record<string, unknown> {
  const s: Record<string, unknown> = {
    id: p.id,
    repo: p.repo,
    title: p.title,
    state: p.state,
    author: p.author,
    target: p.target,
    base: p.base,
    head: p.head,
    created_at: p.created_at,
    updated_at: p.updated_at,
  }
  if (p.task !== undefined) s['task'] = p.task
  return s
}

function reviewsOf(ctx: Ctx, id: string): ReviewRec[] {
  return ctx.store.byIndex('reviewsByProposal', id).sort((a, b) => Number(a.id.slice(7)) - Number(b.id.slice(7)))
}

/**
 * The target's head and how the proposal's head merges into it. merge_base..head is what
 * integration brings into the target: the diff shows that range and approvals must cover it
 * (not merely the proposal's own commit on its workspace base).
 */
async function targetRange(repo: Repo, p: ProposalRec): Promise<{ targetHead: string | null; merge: MergeInfo }> {
  const targetHead = await repo.branchHead(p.target)
  if (p.state === 'integrated') {
    // What it brought in when it was integrated; records older than the field: its own commit.
    const from = p.integrated?.merge_base !== undefined ? p.integrated.merge_base : p.base
    return { targetHead, merge: { mergeability: 'not_open', conflicts: [], merge_base: from } }
  }
  let merge: MergeInfo
  if (targetHead === null)
    merge = { mergeability: p.base === null ? 'fast_forward' : 'target_missing', conflicts: [], merge_base: p.base }
  // A proposal head is a commit whose only parent is p.base: on an unmoved target it
  // fast-forwards, no git call needed.
  else if (targetHead === p.head) merge = { mergeability: 'up_to_date', conflicts: [], merge_base: p.head }
  else if (targetHead === p.base) merge = { mergeability: 'fast_forward', conflicts: [], merge_base: p.base }
  else {
    const key = `${targetHead}:${p.head}`
    const m = repo.cachedMerge(key) ?? (await mergeability(repo, targetHead, p.head))
    merge = { mergeability: m.mergeability, conflicts: m.conflicts, merge_base: m.merge_base }
    repo.rememberMerge(key, merge)
  }
  if (p.state !== 'open') merge = { ...merge, mergeability: 'not_open', conflicts: [] }
  return { targetHead, merge }
}

/**
 * Does review r cover everything integrating p into targetHead brings in? It covers
 * r.base..p.head; integration brings in what the target lacks of p.head, a subset of that
 * range exactly when r.base is already in the target.
 */
async function coversIntegration(
  repo: Repo,
  p: ProposalRec,
  r: ReviewRec,
  targetHead: string | null,
  mergeBase: string | null,
): Promise<boolean> {
  const from = r.base !== undefined ? r.base : p.base
  if (from === null || from === mergeBase) return true
  return targetHead !== null && (await repo.isAncestor(from, targetHead))
}

/** Policy evaluation independent of the caller: approvals, provenance, mergeability. */
export async function evaluate(ctx: Ctx, p: ProposalRec): Promise<Record<string, unknown>> {
  const repo = ctx.repos.get(p.repo)
  const policy = policyOf(ctx.store, p.repo)
  const reviews = reviewsOf(ctx, p.id)
  const { targetHead, merge } = await targetRange(repo, p)
  const current = reviews.filter((r) => r.head === p.head && r.reviewer_principal !== p.author_principal)
  // A reviewer's latest verdict on the current head is the one that counts.
  const latest = new Map<string, ReviewRec>()
  for (const r of current) if (r.verdict !== 'comment') latest.set(r.reviewer_principal, r)
  const approvals: string[] = []
  const partial: ReviewRec[] = []
  for (const r of latest.values()) {
    if (r.verdict !== 'approve') continue
    if (await coversIntegration(repo, p, r, targetHead, merge.merge_base)) approvals.push(r.reviewer_principal)
    else partial.push(r)
  }
  const changesRequested = [...latest.values()]
    .filter((r) => r.verdict === 'request_changes')
    .map((r) => r.reviewer_principal)

  const provRequired = policy.require_provenance_for_agents && p.author_principal.startsWith('agent:')
  const provenance = await provenanceStatus(ctx.store, repo, p, provRequired)

  const blockers: { code: string; message: string }[] = []
  if (p.state !== 'open') blockers.push({ code: 'not_open', message: `proposal is ${p.state}` })
  if (merge.mergeability === 'conflicts')
    blockers.push({ code: 'conflicts', message: `merge conflicts in ${merge.conflicts.length} path(s)` })
  if (merge.mergeability === 'target_missing')
    blockers.push({ code: 'target_missing', message: `target branch '${p.target}' does not exist` })
  if (approvals.length < policy.required_approvals)
    blockers.push({
      code: 'approvals_missing',
      message:
        `${approvals.length} of ${policy.required_approvals} required approval(s) from someone other than the author` +
        (partial.length
          ? `; ${partial.length} approval(s) cover only the commits after ${(partial[0]?.base ?? p.base ?? '').slice(0, 12)}, but integration brings in every commit after ${merge.merge_base?.slice(0, 12) ?? 'the root'}: the current diff needs a new review`
          : ''),
    })
  if (changesRequested.length)
    blockers.push({ code: 'changes_requested', message: `changes requested by ${changesRequested.join(', ')}` })
  if (provRequired && provenance['status'] !== 'verified')
    blockers.push({
      code: 'provenance_missing',
      message: `policy requires verified provenance for the current head of an agent proposal (${String(provenance['status'])}${provenance['reason'] !== undefined ? `: ${String(provenance['reason'])}` : ''})`,
    })

  const out: Record<string, unknown> = {
    id: p.id,
    repo: p.repo,
    title: p.title,
    description: p.description,
    reasoning: p.reasoning,
    state: p.state,
    author: p.author,
    author_principal: p.author_principal,
    target: p.target,
    target_head: targetHead,
    base: p.base,
    merge_base: merge.merge_base,
    head: p.head,
    ref: refOf(p.id),
    workspace: p.workspace,
    revisions: p.revisions,
    mergeable: ['fast_forward', 'clean', 'up_to_date'].includes(merge.mergeability),
    mergeability: merge.mergeability,
    conflicts: merge.conflicts,
    approvals,
    approvals_required: policy.required_approvals,
    reviews: reviews.map(viewReview),
    provenance,
    integration_blockers: blockers,
    created_at: p.created_at,
    updated_at: p.updated_at,
  }
  if (p.task !== undefined) out['task'] = p.task
  if (p.withdrawn_reason !== undefined) out['withdrawn_reason'] = p.withdrawn_reason
  if (p.integrated) out['integrated'] = p.integrated
  return out
}

export function viewReview(r: ReviewRec): Record<string, unknown> {
  const { reviewer_principal: _rp, ...rest } = r
  return rest
}

/** The diff a reviewer reviews: merge_base..head, everything integration brings into the target. */
export async function proposalDiff(ctx: Ctx, caller: Caller, id: string): Promise<Record<string, unknown>> {
  const p = getProposal(ctx, caller, id)
  const repo = ctx.repos.get(p.repo)
  const base = (await targetRange(repo, p)).merge.merge_base
  return { base, head: p.head, ...(await diff(repo, base, p.head, [], ctx.limits.maxPatchBytes)) }
}

export async function createReview(
  ctx: Ctx,
  caller: Caller,
  id: string,
  body: { verdict: ReviewRec['verdict']; body?: string; comments?: ReviewRec['comments'] },
): Promise<ReviewRec> {
  const p0 = getProposal(ctx, caller, id)
  authorize(ctx.store, caller, 'review', p0.repo, 'reviewer')
  // Comment paths are repository paths like any other (the contract's RepoPath): 422.
  for (const [i, c] of (body.comments ?? []).entries()) checkPath(c.path, `comments[${i}].path`)
  if (p0.state !== 'open') throw conflict(`proposal is ${p0.state}`, { state: p0.state })
  if (body.verdict !== 'comment' && p0.author_principal === caller.principal)
    throw forbidden('the author of a proposal cannot approve or reject it', { author: p0.author_principal })
  // The review covers what the diff shows now: the target's merge base to the head.
  const { merge } = await targetRange(ctx.repos.get(p0.repo), p0)
  // Checked again after the await, and committed with no await in between.
  const p = ctx.store.get('proposals', id) as ProposalRec
  if (p.state !== 'open') throw conflict(`proposal is ${p.state}`, { state: p.state })
  if (p.head !== p0.head)
    throw conflict('the proposal was revised while the review was being recorded; review its new head', {
      head: p.head,
    })
  const { id: rid, op } = ctx.store.nextId('review', 'review-')
  const r: ReviewRec = {
    id: rid,
    proposal: id,
    reviewer: caller.actor,
    reviewer_principal: caller.principal,
    verdict: body.verdict,
    body: body.body ?? '',
    comments: body.comments ?? [],
    head: p.head,
    base: merge.merge_base,
    created_at: nowIso(),
  }
  ctx.store.commit([op, { c: 'reviews', k: rid, v: r }])
  return r
}

export async function attachProvenance(
  ctx: Ctx,
  caller: Caller,
  id: string,
  body: { key_id: string; signature: string; statement: string; head?: string },
): Promise<ProposalRec> {
  const p = inScope(caller, ctx.store.get('proposals', id), 'proposal', id)
  // Only the operator's credential (admin scope, no role needed) reaches this; ag-mcp has no
  // admin group. The record itself is verified: the credential vouches for nothing.
  authorize(ctx.store, caller, 'admin', p.repo, null)
  return attachRecord(ctx, id, caller.principal, body)
}

export async function integrate(
  ctx: Ctx,
  caller: Caller,
  id: string,
  body: { strategy?: 'merge' | 'fast_forward' | 'squash'; expected_target_head?: string },
): Promise<Record<string, unknown>> {
  const p0 = getProposal(ctx, caller, id)
  authorize(ctx.store, caller, 'integrate', p0.repo, 'maintainer')
  if (caller.kind === 'agent' && p0.author_principal === caller.principal)
    throw forbidden('an agent can never integrate its own proposal', { author: p0.author_principal })
  const policy = policyOf(ctx.store, p0.repo)
  if (policy.protected_branches.some((g) => minimatch(p0.target, g)) && caller.kind !== 'human') {
    throw forbidden(`'${p0.target}' is protected: only a human maintainer can integrate into it`, { target: p0.target })
  }
  const repo = ctx.repos.get(p0.repo)
  const strategy = body.strategy ?? 'merge'
  return ctx.mutex.run(`repo:${p0.repo}`, async () => {
    const p = ctx.store.get('proposals', id) as ProposalRec
    const ev = await evaluate(ctx, p)
    const blockers = ev['integration_blockers'] as { code: string; message: string }[]
    const T = ev['target_head'] as string | null
    if (blockers.some((b) => b.code === 'not_open')) throw conflict(`proposal is ${p.state}`, { state: p.state })
    if (body.expected_target_head !== undefined && body.expected_target_head !== T)
      throw conflict('target branch moved past expected_target_head', {
        target: p.target,
        target_head: T,
        expected_target_head: body.expected_target_head,
      })
    if (blockers.some((b) => b.code === 'conflicts'))
      throw conflict('proposal does not merge cleanly into its target', { conflicts: ev['conflicts'] })
    if (blockers.length)
      throw forbidden(`integration refused by policy: ${blockers.map((b) => b.message).join('; ')}`, {
        integration_blockers: blockers,
      })
    let next: string
    if (T === null || (ev['mergeability'] === 'fast_forward' && strategy === 'fast_forward')) next = p.head
    else if (strategy === 'fast_forward')
      throw conflict('not a fast-forward: the target has commits the proposal lacks', { target_head: T })
    else if (ev['mergeability'] === 'up_to_date')
      throw conflict('target already contains the proposal', { target_head: T })
    else {
      const m = await mergeTree(repo, T, p.head)
      if (m.conflicts.length)
        throw conflict('proposal does not merge cleanly into its target', { conflicts: m.conflicts })
      // The integration commit is written in-process like proposal commits (objects.ts):
      // one git process fewer per integration, same bytes as commit-tree would write.
      // The integrator is the merge's author and committer; a squash keeps the proposal
      // commit's author (who wrote the change) and is committed by the integrator.
      const integrator = identityOf(repo, caller)
      const squash = strategy === 'squash'
      const proposed = squash ? await repo.commitInfo(p.head) : undefined
      next = await writeObject(
        repo.gitDir,
        'commit',
        formatCommit({
          tree: m.tree,
          parents: squash ? [T] : [T, p.head],
          author: squash
            ? proposed
              ? { name: proposed.author.name, email: proposed.author.email }
              : { name: p.author, email: emailOf(p.author_principal) }
            : integrator.author,
          committer: integrator.committer,
          message: squash
            ? `${p.title}\n\n${p.description ? p.description + '\n\n' : ''}AGWP-Proposal: ${p.id}\n`
            : `Integrate ${p.id}: ${p.title}\n\nAGWP-Proposal: ${p.id}\n`,
        }),
      )
    }
    const used = T === null || next === p.head ? 'fast_forward' : strategy
    const now = nowIso()
    const integrated = {
      commit: next,
      strategy: used,
      by: caller.actor,
      at: now,
      merge_base: ev['merge_base'] as string | null,
    }
    const record = (): Op[] => [
      { c: 'proposals', k: id, at: ['state'], v: 'integrated' },
      { c: 'proposals', k: id, at: ['integrated'], v: integrated },
      { c: 'proposals', k: id, at: ['updated_at'], v: now },
    ]
    // Compare-and-swap under a journaled intent: if anything moved the branch since we
    // read T, nobody wins silently; if the server dies after the ref moved, start-up
    // completes the record (intents.ts).
    if (!(await casWithIntent(ctx, repo, `refs/heads/${p.target}`, next, T, 'contains', record)))
      throw conflict('target branch moved during integration', { target: p.target })
    return { proposal: id, target: p.target, commit: next, previous_target_head: T, strategy: used }
  })
}
