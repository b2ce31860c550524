import type { Ctx } from './context.ts'
import { authorize, inScope, roleAtLeast, roleOf, type Caller } from './auth.ts'
import { conflict, forbidden, invalid } from './errors.ts'
import { casWithIntent } from './intents.ts'
import { formatCommit, type RawObject } from './objects.ts'
import type { Op, StateReader, Tx } from './state.ts'
import { checkBranch } from './paths.ts'
import type { Repo } from './repos.ts'
import type { ProposalRec, WorkspaceRec } from './types.ts'
import { nowIso, page } from './util.ts'
import { attachRecord } from './provenance.ts'
import { releaseWorkspaceRef } from './wsrefs.ts'
import { getWorkspace } from './workspaces.ts'
import { buildTree } from './wstree.ts'

// Proposals are real commits on refs/proposals/<id> whose parent is the workspace base.
// Metadata (reviews, provenance, state) lives in the store; the ref is the truth for head.

export const refOf = (id: string): string => `refs/proposals/${id}`

export function emailOf(principal: string): string {
  const [kind, name] = principal.split(':')
  return `${name ?? 'unknown'}@${kind ?? 'unknown'}.agwp.invalid`
}

/** Who the caller's commits are by: the token's identity (repos.ts), else its actor. */
export const identityOf = (repo: Repo, caller: Caller) =>
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

export async function getProposal(
  ctx: Ctx,
  caller: Caller,
  id: string,
  state: StateReader = ctx.state,
): Promise<ProposalRec> {
  const p = inScope(caller, await state.get('proposals', id), 'proposal', id)
  await authorize(state, caller, 'read', p.repo, 'reader')
  return p
}

export async function createProposal(
  ctx: Ctx,
  caller: Caller,
  wsId: string,
  body: { title: string; description?: string; task?: string; reasoning?: string; target?: string },
): Promise<ProposalRec> {
  const ws0 = await getWorkspace(ctx, caller, wsId, false)
  await authorize(ctx.state, caller, 'propose', ws0.repo, 'contributor')
  if (ws0.state !== 'open') throw conflict('workspace is discarded', { workspace: wsId })
  if (body.task !== undefined) {
    const t = await ctx.state.get('tasks', body.task)
    if (!t || t.repo !== ws0.repo)
      throw invalid(`task '${body.task.slice(0, 64)}' not found in this repository`, { field: 'task' })
  }
  const repo = ctx.repos.get(ws0.repo)
  const target = checkBranch(body.target ?? (await defaultTarget(repo, ws0)), 'target')
  await requireBranchBase(repo, ws0, await repo.branchHead(target))
  // The id is reserved up front (a failed attempt burns it), so the new ref cannot collide
  // and commit building runs outside the repository's lock, in parallel with other
  // proposals; only the ref update and its record take the lock.
  {
    const ws = ws0
    if (Object.keys(ws.changes).length === 0) throw invalid('workspace has no changes to propose', { workspace: wsId })
    const id = await ctx.state.tx([], (t) => t.nextId('proposal', 'pr-'))
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
    // The workspace's lock too: a discard cannot slip in between this check and the record.
    const recordIt = async (t: Tx): Promise<void> => {
      if ((await t.get('workspaces', ws.id))?.state !== 'open')
        throw conflict('workspace is discarded', { workspace: wsId })
      if (!(await casWithIntent(ctx, t, repo, refOf(id), head, null, 'exact', record)))
        throw conflict('proposal ref already exists', { ref: refOf(id) })
    }
    await ctx.state.tx([`repo:${ws.repo}`, `ws:${ws.id}`], recordIt, [{ c: 'workspaces', k: ws.id }])
    // Committed: the proposal ref keeps what was proposed: the workspace ref goes unless writes followed.
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
  const p0 = await getProposal(ctx, caller, id)
  await authorize(ctx.state, caller, 'propose', p0.repo, 'contributor')
  if (p0.author_principal !== caller.principal)
    throw forbidden('only the author can revise a proposal', { author: p0.author_principal })
  const ws = await getWorkspace(ctx, caller, body.workspace, false)
  if (ws.repo !== p0.repo) throw invalid('workspace belongs to another repository', { field: 'workspace' })
  const repo = ctx.repos.get(p0.repo)
  await requireBranchBase(repo, ws, await repo.branchHead(p0.target))
  const next = await ctx.state.tx([`repo:${p0.repo}`], async (t) => {
    const p = (await t.get('proposals', id)) as ProposalRec
    if (p.state !== 'open') throw conflict(`proposal is ${p.state}`, { state: p.state })
    const head = await commitWorkspace(
      repo,
      ws,
      caller,
      messageFor({ id, title: p.title, description: p.description, task: p.task }, caller),
    )
    const now = t.now.toISOString()
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
    if (!(await casWithIntent(ctx, t, repo, refOf(id), head, p.head, 'exact', record)))
      throw conflict('proposal head moved', { ref: refOf(id) })
    return next
  })
  // After the commit, so the ref sync sees the workspace's proposal recorded.
  await releaseWorkspaceRef(ctx, repo, ws.id)
  return (await ctx.state.get('proposals', id)) ?? next
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
  const p0 = await getProposal(ctx, caller, id)
  await authorize(ctx.state, caller, 'propose', p0.repo, 'contributor')
  if (
    p0.author_principal !== caller.principal &&
    !roleAtLeast(await roleOf(ctx.state, p0.repo, caller.principal), 'maintainer')
  )
    throw forbidden('only the author or a maintainer can withdraw', {})
  const withdraw = async (t: Tx): Promise<void> => {
    const p = (await t.get('proposals', id)) as ProposalRec
    if (p.state !== 'open') throw conflict(`proposal is ${p.state}`, { state: p.state })
    const at = (field: keyof ProposalRec, v: unknown): Op => ({ c: 'proposals', k: id, at: [field], v })
    t.write(
      at('state', 'withdrawn'),
      at('updated_at', t.now.toISOString()),
      ...(reason !== undefined ? [at('withdrawn_reason', reason)] : []),
    )
  }
  await ctx.state.tx([`repo:${p0.repo}`], withdraw, [{ c: 'proposals', k: id }])
  return (await ctx.state.get('proposals', id)) as ProposalRec
}

const PROPOSAL_STATES: ProposalRec['state'][] = ['open', 'integrated', 'withdrawn']

/** One page of a repository's proposals (of one state, if given), oldest first; only that page is read. */
export async function listProposals(
  ctx: Ctx,
  caller: Caller,
  repo: string,
  state: string | undefined,
  cursor: string | undefined,
  limit: number,
): Promise<{ items: ProposalRec[]; next_cursor?: string }> {
  await authorize(ctx.state, caller, 'read', repo, 'reader')
  ctx.repos.get(repo)
  if (state !== undefined && !(PROPOSAL_STATES as string[]).includes(state))
    throw invalid('state must be open, integrated or withdrawn', { field: 'state' })
  const lists = await Promise.all(
    (state === undefined ? PROPOSAL_STATES : [state]).map((s) =>
      ctx.state.idsByIndex('proposalsByRepoState', `${repo}\n${s}`),
    ),
  )
  const ids = lists.flat().sort((a, b) => Number(a.slice(3)) - Number(b.slice(3)))
  const pg = page(ids, cursor, limit)
  const items = await ctx.state.getMany('proposals', pg.items)
  return { ...pg, items: items as ProposalRec[] }
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

export async function attachProvenance(
  ctx: Ctx,
  caller: Caller,
  id: string,
  body: { key_id: string; signature: string; statement: string; head?: string },
): Promise<ProposalRec> {
  const p = inScope(caller, await ctx.state.get('proposals', id), 'proposal', id)
  // Only the operator's credential (admin scope, no role needed) reaches this; ag-mcp has no
  // admin group. The record itself is verified: the credential vouches for nothing.
  await authorize(ctx.state, caller, 'admin', p.repo, null)
  return attachRecord(ctx, id, caller.principal, body)
}
