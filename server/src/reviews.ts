import type { Ctx } from './context.ts'
import { authorize, policyOf, type Caller } from './auth.ts'
import { conflict, forbidden } from './errors.ts'
import { diff } from './gitread.ts'
import { mergeability } from './merge.ts'
import { checkPath } from './paths.ts'
import { getProposal, refOf } from './proposals.ts'
import { provenanceStatus } from './provenance.ts'
import type { MergeInfo, Repo } from './repos.ts'
import type { ProposalRec, ReviewRec } from './types.ts'

// Reviews of a proposal and the evaluation that counts them: approvals that cover what
// integration brings in, provenance, mergeability, and the blockers they add up to.

async function reviewsOf(ctx: Ctx, id: string): Promise<ReviewRec[]> {
  return (await ctx.state.byIndex('reviewsByProposal', id)).sort(
    (a, b) => Number(a.id.slice(7)) - Number(b.id.slice(7)),
  )
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
  const policy = await policyOf(ctx.state, p.repo)
  const reviews = await reviewsOf(ctx, p.id)
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
  const provenance = await provenanceStatus(ctx.state, repo, p, provRequired)

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
  const p = await getProposal(ctx, caller, id)
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
  const p0 = await getProposal(ctx, caller, id)
  await authorize(ctx.state, caller, 'review', p0.repo, 'reviewer')
  // Comment paths are repository paths like any other (the contract's RepoPath): 422.
  for (const [i, c] of (body.comments ?? []).entries()) checkPath(c.path, `comments[${i}].path`)
  if (p0.state !== 'open') throw conflict(`proposal is ${p0.state}`, { state: p0.state })
  if (body.verdict !== 'comment' && p0.author_principal === caller.principal)
    throw forbidden('the author of a proposal cannot approve or reject it', { author: p0.author_principal })
  // The review covers what the diff shows now: the target's merge base to the head.
  const { merge } = await targetRange(ctx.repos.get(p0.repo), p0)
  // Checked again under the repository's lock, which revise holds too: a review is
  // recorded for the head it covers, never for one a revision replaced meanwhile.
  return ctx.state.tx([`repo:${p0.repo}`], async (t) => {
    const p = (await t.get('proposals', id)) as ProposalRec
    if (p.state !== 'open') throw conflict(`proposal is ${p.state}`, { state: p.state })
    if (p.head !== p0.head)
      throw conflict('the proposal was revised while the review was being recorded; review its new head', {
        head: p.head,
      })
    const rid = await t.nextId('review', 'review-')
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
      created_at: t.now.toISOString(),
    }
    t.write({ c: 'reviews', k: rid, v: r })
    return r
  })
}
