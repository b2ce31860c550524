import { minimatch } from 'minimatch'
import type { Ctx } from './context.ts'
import { authorize, policyOf, type Caller } from './auth.ts'
import { conflict, forbidden } from './errors.ts'
import { mergeTree } from './merge.ts'
import { casWithIntent } from './intents.ts'
import { formatCommit, writeObjects, type RawObject } from './objects.ts'
import { emailOf, getProposal, identityOf } from './proposals.ts'
import { evaluate } from './reviews.ts'
import type { Op } from './state.ts'
import type { Repo } from './repos.ts'
import type { ProposalRec } from './types.ts'

type Strategy = 'merge' | 'fast_forward' | 'squash'

export async function integrate(
  ctx: Ctx,
  caller: Caller,
  id: string,
  body: { strategy?: Strategy; expected_target_head?: string },
): Promise<Record<string, unknown>> {
  const p0 = await getProposal(ctx, caller, id)
  await authorize(ctx.state, caller, 'integrate', p0.repo, 'maintainer')
  if (caller.kind === 'agent' && p0.author_principal === caller.principal)
    throw forbidden('an agent can never integrate its own proposal', { author: p0.author_principal })
  const policy = await policyOf(ctx.state, p0.repo)
  if (policy.protected_branches.some((g) => minimatch(p0.target, g)) && caller.kind !== 'human') {
    throw forbidden(`'${p0.target}' is protected: only a human maintainer can integrate into it`, { target: p0.target })
  }
  const repo = ctx.repos.get(p0.repo)
  const strategy = body.strategy ?? 'merge'
  // Under the repository's lock (withdraw, revise and review take it too): the proposal's
  // state, the branch update and its record are decided and committed together.
  return ctx.state.tx([`repo:${p0.repo}`], async (t) => {
    const p = (await t.get('proposals', id)) as ProposalRec
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
    const next = await integrationCommit(repo, caller, p, ev, T, strategy)
    const used = T === null || next === p.head ? 'fast_forward' : strategy
    const now = t.now.toISOString()
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
    if (!(await casWithIntent(ctx, t, repo, `refs/heads/${p.target}`, next, T, 'contains', record)))
      throw conflict('target branch moved during integration', { target: p.target })
    return { proposal: id, target: p.target, commit: next, previous_target_head: T, strategy: used }
  })
}

/**
 * The commit the target moves to: the proposal's head when that is a fast-forward, else a
 * merge or squash commit written in-process. Refuses a strategy the histories do not allow.
 */
async function integrationCommit(
  repo: Repo,
  caller: Caller,
  p: ProposalRec,
  ev: Record<string, unknown>,
  T: string | null,
  strategy: Strategy,
): Promise<string> {
  if (T === null || (ev['mergeability'] === 'fast_forward' && strategy === 'fast_forward')) return p.head
  if (strategy === 'fast_forward')
    throw conflict('not a fast-forward: the target has commits the proposal lacks', { target_head: T })
  if (ev['mergeability'] === 'up_to_date') throw conflict('target already contains the proposal', { target_head: T })
  // The merge's new trees go into the pack of the commit on them.
  const trees: RawObject[] = []
  const m = await mergeTree(repo, T, p.head, undefined, trees)
  if (m.conflicts.length) throw conflict('proposal does not merge cleanly into its target', { conflicts: m.conflicts })
  // The integration commit is written in-process like proposal commits (objects.ts):
  // one git process fewer per integration, same bytes as commit-tree would write.
  // The integrator is the merge's author and committer; a squash keeps the proposal
  // commit's author (who wrote the change) and is committed by the integrator.
  const integrator = identityOf(repo, caller)
  const squash = strategy === 'squash'
  const proposed = squash ? await repo.commitInfo(p.head) : undefined
  const commit = formatCommit({
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
  })
  const oids = await writeObjects(repo.gitDir, [...trees, { type: 'commit', body: commit }])
  return oids[oids.length - 1] as string
}
