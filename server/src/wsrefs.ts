import type { Ctx } from './context.ts'
import { gitText } from './git.ts'
import { formatCommit, gitDate, writeObjects, type RawObject } from './objects.ts'
import type { Repo } from './repos.ts'
import type { Tx } from './state.ts'
import type { WorkspaceRec } from './types.ts'
import { buildTree } from './wstree.ts'

// Workspace contents are blobs no branch reaches: git gc (by an operator, cron, or
// git's own gc --auto) would prune them once older than gc.pruneExpire, at once with
// --prune=now. So every workspace that holds written content has a ref,
// refs/agwp/workspaces/<id>, on a commit of its current state (its overlay as a tree,
// parent = its base). The ref follows the workspace under its lock; it goes away when
// nothing needs it: the workspace is discarded, holds no written file, or is exactly what
// one of its proposals proposed (refs/proposals/<id> keeps that reachable). Start-up
// brings every ref in line with the store (data directories from before the refs, and
// whatever a crash between a write and its ref left).

export const WORKSPACE_REFS = 'refs/agwp/workspaces/'
export const workspaceRef = (id: string): string => `${WORKSPACE_REFS}${id}`

const WHO = { name: 'ag-server', email: 'workspaces@agwp.invalid' }

/** The state commit: dated at the workspace's creation, so one overlay is one commit id. */
function stateCommit(ws: WorkspaceRec): (tree: string) => RawObject {
  return (tree) => ({
    type: 'commit',
    body: formatCommit({
      tree,
      parents: ws.base ? [ws.base] : [],
      author: WHO,
      committer: WHO,
      message: `AGWP workspace ${ws.id}\n`,
      date: gitDate(new Date(ws.created_at)),
    }),
  })
}

async function needsRef(ctx: Ctx, repo: Repo, ws: WorkspaceRec, tree: () => Promise<string>): Promise<boolean> {
  if (ws.state !== 'open' || !Object.values(ws.changes).some((e) => e !== null)) return false
  for (const id of ws.proposals) {
    const p = await ctx.state.get('proposals', id)
    if (p && p.workspace === ws.id && (await repo.commitTree(p.head)) === (await tree())) return false
  }
  return true
}

/**
 * Bring refs/agwp/workspaces/<id> in line with `ws` (undefined: the workspace is gone).
 * Call inside t, holding the workspace's lock. A write calls it with the state it is about to
 * commit, before the commit: a write that cannot protect its objects fails and changes nothing.
 * `objects`: what that state refers to and is not written yet (a written file's blob): they go
 * into the pack of its tree, or alone if it needs no ref.
 */
export async function syncWorkspaceRef(
  ctx: Ctx,
  t: Tx,
  repo: Repo,
  id: string,
  ws: WorkspaceRec | undefined,
  objects: RawObject[] = [],
): Promise<void> {
  // Every ref the server moves is fenced (owners.ts), this one too.
  await ctx.owners?.fence(t, repo.name)
  const ref = workspaceRef(id)
  const cur = await repo.refValue(ref)
  let built: { tree: string; extra?: string } | undefined
  const build = async (w: WorkspaceRec): Promise<{ tree: string; extra?: string }> =>
    (built ??= await buildTree(repo, w, stateCommit(w), objects))
  if (ws && (await needsRef(ctx, repo, ws, async () => (await build(ws)).tree))) {
    const commit = (await build(ws)).extra as string
    if (cur !== commit && !(await repo.casRef(ref, commit, cur)))
      throw new Error(`workspace ref ${ref} moved under the workspace lock`)
    return
  }
  if (objects.length && !built) await writeObjects(repo.gitDir, objects)
  if (cur !== null) await repo.deleteRef(ref, cur)
}

/**
 * After a discard or a proposal (already committed): drop the ref if nothing needs it. A
 * failure only keeps objects reachable a while longer; start-up settles the ref.
 */
export async function releaseWorkspaceRef(ctx: Ctx, repo: Repo, id: string): Promise<void> {
  await ctx.state
    .tx([`ws:${id}`], async (t) => syncWorkspaceRef(ctx, t, repo, id, await t.get('workspaces', id)), [
      { c: 'workspaces', k: id },
    ])
    .catch(() => undefined)
}

/** Blob ids (of `oids`) the repository does not have. */
async function missingObjects(repo: Repo, oids: string[]): Promise<Set<string>> {
  if (oids.length === 0) return new Set()
  const out = await gitText(repo.gitDir, ['cat-file', '--batch-check=%(objectname)'], { input: oids.join('\n') + '\n' })
  return new Set(
    out
      .split('\n')
      .filter((l) => l.endsWith(' missing'))
      .map((l) => l.slice(0, 40)),
  )
}

/**
 * Start-up: every workspace ref as the store says. Creates the refs a data directory from
 * before them lacks, except for a workspace whose blobs git already pruned: a ref on it
 * would make every later gc fail, so it is logged for the operator instead.
 */
export async function settleWorkspaceRefs(ctx: Ctx, log: (m: string) => void): Promise<void> {
  for (const name of ctx.repos.names()) {
    const repo = ctx.repos.get(name)
    const listed = await gitText(repo.gitDir, ['for-each-ref', '--format=%(refname)', WORKSPACE_REFS])
    const ids = new Set(
      listed
        .split('\n')
        .filter(Boolean)
        .map((r) => r.slice(WORKSPACE_REFS.length)),
    )
    const open = (await ctx.state.all('workspaces')).filter((w) => w.repo === name && w.state === 'open')
    const lacking = open.filter((w) => !ids.has(w.id))
    const blobs = lacking.flatMap((w) => Object.values(w.changes).flatMap((e) => (e ? [e.blob] : [])))
    const missing = await missingObjects(repo, [...new Set(blobs)])
    let created = 0
    for (const ws of lacking) {
      const lost = Object.entries(ws.changes).filter(([, e]) => e !== null && missing.has(e.blob))
      if (lost.length) {
        log(
          `ag-server: ${name}: workspace ${ws.id} lost ${lost.length} file(s) to git gc before workspace refs existed (e.g. ${lost[0]?.[0] ?? ''}); left without a ref: write those files again`,
        )
        continue
      }
      await ctx.state.tx([`ws:${ws.id}`], (t) => syncWorkspaceRef(ctx, t, repo, ws.id, ws))
      if ((await repo.refValue(workspaceRef(ws.id))) !== null) created++
    }
    // Refs of workspaces that were discarded or proposed while a crash kept the ref.
    for (const id of ids)
      await ctx.state.tx([`ws:${id}`], async (t) => syncWorkspaceRef(ctx, t, repo, id, await t.get('workspaces', id)))
    if (created) log(`ag-server: ${name}: ${created} workspace ref(s) created under ${WORKSPACE_REFS}`)
  }
}
