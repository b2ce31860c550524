import type { Ctx } from './context.ts'
import type { Caller } from './auth.ts'
import { authorize, inScope } from './auth.ts'
import { type AgwpError, conflict, forbidden, invalid, notFound } from './errors.ts'
import { listDir, encodeContent, diff, type TreeEntry } from './gitread.ts'
import { hashObject, isTreeMode } from './objects.ts'
import type { Op, Read, StateReader, Tx } from './state.ts'
import { ancestors, checkPath, checkReadPath } from './paths.ts'
import type { Repo } from './repos.ts'
import type { OverlayEntry, WorkspaceRec } from './types.ts'
import { nowIso } from './util.ts'
import { releaseWorkspaceRef, syncWorkspaceRef } from './wsrefs.ts'
import { buildTree } from './wstree.ts'

// Workspaces are overlays on a base commit kept in the store (path -> blob id or
// deletion); contents go into the repository's object database as blobs, so a
// workspace costs no checkout and proposing it is pure plumbing.

/**
 * fn in a transaction holding workspace id's lock, with its record (and its repository's, when
 * known: getWorkspace reads both) read as the lock is taken (State.tx).
 */
function onWorkspace<T>(ctx: Ctx, id: string, repo: string | undefined, fn: (t: Tx) => Promise<T>): Promise<T> {
  const reads: Read[] = [{ c: 'workspaces', k: id }, ...(repo === undefined ? [] : [{ c: 'repos', k: repo } as const])]
  return ctx.state.tx([`ws:${id}`], fn, reads)
}

export async function getWorkspace(
  ctx: Ctx,
  caller: Caller,
  id: string,
  write: boolean,
  state: StateReader = ctx.state,
): Promise<WorkspaceRec> {
  const ws = inScope(caller, await state.get('workspaces', id), 'workspace', id)
  await authorize(state, caller, write ? 'workspace' : 'read', ws.repo, write ? 'contributor' : 'reader')
  if (ws.owner !== caller.principal)
    throw forbidden('workspace belongs to another principal', { workspace: id, owner: ws.owner })
  if (write && ws.state !== 'open') throw conflict('workspace is discarded', { workspace: id })
  return ws
}

export function viewWorkspace(ws: WorkspaceRec): Record<string, unknown> {
  const changes = Object.entries(ws.changes)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([p, e]) => (e ? { path: p, op: 'write', blob: e.blob, size: e.size } : { path: p, op: 'delete' }))
  const out: Record<string, unknown> = {
    id: ws.id,
    repo: ws.repo,
    base: ws.base,
    base_ref: ws.base_ref,
    owner: ws.owner,
    state: ws.state,
    changes,
    proposals: ws.proposals,
    created_at: ws.created_at,
    updated_at: ws.updated_at,
  }
  if (ws.run_id !== undefined) out['run_id'] = ws.run_id
  return out
}

export async function createWorkspace(
  ctx: Ctx,
  caller: Caller,
  repoName: string,
  baseIn: string | undefined,
): Promise<WorkspaceRec> {
  await authorize(ctx.state, caller, 'workspace', repoName, 'contributor')
  const repo = ctx.repos.get(repoName)
  const baseRef = baseIn ?? (await repo.defaultBranch())
  let base: string | null
  if (baseIn === undefined && (await repo.branchHead(baseRef)) === null && (await repo.branches()).length === 0) {
    base = null // empty repository: the first proposal creates the root commit
  } else {
    base = await repo.resolve(baseRef, 'base')
    // Only reviewed work is built upon: a base is a branch or a commit a branch contains,
    // never another proposal's unintegrated commits (their diff would hide them).
    if (baseIn !== undefined && (await repo.branchHead(baseRef)) !== base && !(await repo.onSomeBranch(base)))
      throw invalid(
        `base '${baseRef}' is not on any branch: a workspace starts from a branch or a commit a branch contains (an open proposal's commits are not reviewed yet; revise that proposal instead, or wait until it is integrated)`,
        { field: 'base', base },
      )
  }
  const run = caller.run?.run_id
  return ctx.state.tx([], async (t) => {
    const id = await t.nextId('workspace', 'ws-')
    const now = t.now.toISOString()
    const ws: WorkspaceRec = {
      id,
      repo: repoName,
      base,
      base_ref: baseRef,
      owner: caller.principal,
      state: 'open',
      changes: {},
      proposals: [],
      created_at: now,
      updated_at: now,
    }
    if (run !== undefined) ws.run_id = run
    t.write({ c: 'workspaces', k: id, v: ws })
    return ws
  })
}

/** A submodule (a gitlink) is another repository's commit: its files are not this repository's to write. */
const GITLINK = '160000'

/** What a path is, seen through the overlay. */
async function lookup(
  repo: Repo,
  ws: WorkspaceRec,
  p: string,
): Promise<
  { kind: 'file'; blob: string; mode: string } | { kind: 'dir' } | { kind: 'submodule'; commit: string } | null
> {
  if (Object.hasOwn(ws.changes, p)) {
    const e = ws.changes[p]
    return e ? { kind: 'file', blob: e.blob, mode: e.mode } : null
  }
  const prefix = p + '/'
  const overlayChild = Object.entries(ws.changes).some(([k, e]) => e !== null && k.startsWith(prefix))
  if (ws.base === null) return overlayChild ? { kind: 'dir' } : null
  // Base trees are read through the repository's parsed-tree cache: no git process.
  const it = await repo.entryAt(ws.base, p)
  if (!it) return overlayChild ? { kind: 'dir' } : null
  if (isTreeMode(it.mode)) {
    if (overlayChild) return { kind: 'dir' }
    // A base directory whose every file was deleted in the overlay no longer exists.
    return (await baseDirLive(repo, ws, it.oid, prefix)) ? { kind: 'dir' } : null
  }
  if (it.mode === GITLINK) return { kind: 'submodule', commit: it.oid }
  // Deleting a parent directory's files one by one never hides a file itself. The mode
  // is the base entry's: an executable stays executable, a symlink stays a symlink.
  return { kind: 'file', blob: it.oid, mode: it.mode }
}

/** Does a base directory (tree `oid` at `prefix`) keep a file the overlay did not delete? */
async function baseDirLive(repo: Repo, ws: WorkspaceRec, oid: string, prefix: string): Promise<boolean> {
  const deleted = Object.entries(ws.changes).some(([k, e]) => e === null && k.startsWith(prefix))
  if (!deleted) return true // git never stores an empty tree below the root
  for (const it of (await repo.treeItems(oid)).values()) {
    const p = prefix + it.name
    if (isTreeMode(it.mode)) {
      if (await baseDirLive(repo, ws, it.oid, p + '/')) return true
    } else if (!(Object.hasOwn(ws.changes, p) && ws.changes[p] === null)) return true
  }
  return false
}

async function liveChildren(repo: Repo, ws: WorkspaceRec, dir: string, base: TreeEntry[]): Promise<TreeEntry[]> {
  const out: TreeEntry[] = []
  for (const e of base) {
    if (Object.hasOwn(ws.changes, e.path)) {
      if (ws.changes[e.path]) out.push(e)
      continue
    }
    if (e.type === 'dir') {
      const sub = await lookup(repo, ws, e.path)
      if (sub) out.push(e)
    } else out.push(e)
  }
  void dir
  return out
}

export async function readWorkspacePath(
  ctx: Ctx,
  caller: Caller,
  id: string,
  rawPath: string | undefined,
): Promise<Record<string, unknown>> {
  const ws = await getWorkspace(ctx, caller, id, false)
  const repo = ctx.repos.get(ws.repo)
  const p = checkReadPath(rawPath ?? '', 'path', true)
  if (p === '' || (await lookup(repo, ws, p))?.kind === 'dir') {
    return { kind: 'dir', path: p, commit: ws.base, workspace: ws.id, entries: await overlayListing(repo, ws, p) }
  }
  const hit = await lookup(repo, ws, p)
  if (!hit || hit.kind !== 'file') throw notFound(`'${p}' does not exist in workspace`, { path: p })
  const o = await repo.object(hit.blob)
  if (!o) throw notFound('blob missing', { path: p })
  return {
    kind: 'file',
    path: p,
    commit: ws.base,
    workspace: ws.id,
    blob: o.oid,
    mode: hit.mode,
    size: o.size,
    ...encodeContent(o.data, ctx.limits.maxFileBytes),
  }
}

async function overlayListing(repo: Repo, ws: WorkspaceRec, dir: string): Promise<TreeEntry[]> {
  const base = (await listDir(repo, ws.base, dir)) ?? []
  const byName = new Map<string, TreeEntry>()
  for (const e of await liveChildren(repo, ws, dir, base)) byName.set(e.name, e)
  const prefix = dir === '' ? '' : dir + '/'
  for (const [p, e] of Object.entries(ws.changes)) {
    if (!e || !p.startsWith(prefix)) continue
    const rest = p.slice(prefix.length)
    const slash = rest.indexOf('/')
    if (slash < 0)
      byName.set(rest, {
        name: rest,
        path: p,
        type: e.mode === '120000' ? 'symlink' : 'file',
        mode: e.mode,
        id: e.blob,
        size: e.size,
      })
    else {
      const name = rest.slice(0, slash)
      if (!byName.has(name))
        byName.set(name, { name, path: prefix + name, type: 'dir', mode: '040000', id: 'workspace' })
    }
  }
  return [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}

function checkIfMatch(current: { kind: string; blob?: string } | null, ifMatch: string | undefined, p: string): void {
  if (ifMatch === undefined) return
  const cur = current && current.kind === 'file' ? (current.blob ?? null) : null
  if (ifMatch === 'absent' ? cur !== null : cur !== ifMatch)
    throw conflict(`'${p}' changed: if_match does not hold`, { path: p, expected: ifMatch, actual: cur ?? 'absent' })
}

function inSubmodule(p: string, at: string, commit: string): AgwpError {
  return conflict(
    `'${at}' is a submodule (commit ${commit.slice(0, 12)}): its files live in its own repository, so '${p}' cannot be changed here; work in that repository instead`,
    { path: p, submodule: at },
  )
}

/** A file may not sit where a directory is, under a path that is a file, or inside a submodule. */
async function checkPlaceable(repo: Repo, ws: WorkspaceRec, p: string): Promise<void> {
  for (const a of ancestors(p)) {
    const hit = await lookup(repo, ws, a)
    if (hit?.kind === 'submodule') throw inSubmodule(p, a, hit.commit)
    if (hit && hit.kind === 'file')
      throw conflict(`'${a}' is a file, so '${p}' cannot be created`, { path: p, blocking: a })
  }
}

export async function writeFile(
  ctx: Ctx,
  caller: Caller,
  id: string,
  body: { path: string; content: string; encoding?: 'utf8' | 'base64'; if_match?: string },
): Promise<Record<string, unknown>> {
  const ws0 = await getWorkspace(ctx, caller, id, true)
  const p = checkPath(body.path)
  const data = body.encoding === 'base64' ? Buffer.from(body.content, 'base64') : Buffer.from(body.content, 'utf8')
  if (
    body.encoding === 'base64' &&
    data.toString('base64').replace(/=+$/, '') !== body.content.replace(/=+$/, '').replace(/\s+/g, '')
  )
    throw invalid('content is not valid base64', { field: 'content' })
  const repo = ctx.repos.get(ws0.repo)
  // The check and the overlay update happen under the lock so if_match is a true
  // compare-and-swap; the blob is written with the workspace's new tree, in one pack.
  const blob = hashObject('blob', data)
  return onWorkspace(ctx, id, ws0.repo, async (t) => {
    const ws = await getWorkspace(ctx, caller, id, true, t)
    const cur = await lookup(repo, ws, p)
    if (cur?.kind === 'dir') throw conflict(`'${p}' is a directory`, { path: p })
    if (cur?.kind === 'submodule') throw inSubmodule(p, p, cur.commit)
    checkIfMatch(cur, body.if_match, p)
    await checkPlaceable(repo, ws, p)
    // Overwriting keeps the file's mode (100755, 120000); a new file is 100644.
    const mode = cur?.kind === 'file' ? cur.mode : '100644'
    const delta = { [p]: { blob, mode, size: data.length } }
    await syncWorkspaceRef(ctx, t, repo, id, withChanges(ws, delta), [{ type: 'blob', body: data }])
    t.write(...changeOps(id, delta, t.now))
    return { workspace: id, path: p, blob, size: data.length, created: cur === null }
  })
}

/**
 * Journal only what changed: one op per overlay path (undefined = drop the path from the
 * overlay, null = a deletion of a base path) plus the new updated_at.
 */
function changeOps(id: string, changes: Record<string, OverlayEntry | null | undefined>, now: Date): Op[] {
  const ops: Op[] = Object.entries(changes).map(([p, e]) =>
    e === undefined
      ? { c: 'workspaces', k: id, at: ['changes', p] }
      : { c: 'workspaces', k: id, at: ['changes', p], v: e },
  )
  ops.push({ c: 'workspaces', k: id, at: ['updated_at'], v: now.toISOString() })
  return ops
}

/** Record the removal of p: drop an overlay-only file, or mark a base file deleted. */
async function removal(
  repo: Repo,
  ws: WorkspaceRec,
  p: string,
): Promise<Record<string, OverlayEntry | null | undefined>> {
  const inBase = ws.base !== null && (await repo.entryAt(ws.base, p)) !== null
  return { [p]: inBase ? null : undefined }
}

/** The workspace with a delta applied (undefined drops a path from the overlay). */
function withChanges(ws: WorkspaceRec, rem: Record<string, OverlayEntry | null | undefined>): WorkspaceRec {
  const changes = { ...ws.changes }
  for (const [k, v] of Object.entries(rem)) {
    if (v === undefined) delete changes[k]
    else changes[k] = v
  }
  return { ...ws, changes, updated_at: nowIso() }
}

export async function deleteFile(
  ctx: Ctx,
  caller: Caller,
  id: string,
  rawPath: string | undefined,
  ifMatch: string | undefined,
): Promise<Record<string, unknown>> {
  const p = checkPath(rawPath)
  return onWorkspace(ctx, id, undefined, async (t) => {
    const ws = await getWorkspace(ctx, caller, id, true, t)
    const repo = ctx.repos.get(ws.repo)
    const cur = await lookup(repo, ws, p)
    if (!cur) throw notFound(`'${p}' does not exist in workspace`, { path: p })
    if (cur.kind === 'dir') throw invalid(`'${p}' is a directory; delete its files`, { path: p })
    if (cur.kind === 'submodule') throw inSubmodule(p, p, cur.commit)
    if (ifMatch !== undefined && !/^([0-9a-f]{40}|absent)$/.test(ifMatch))
      throw invalid('if_match must be a blob id', { field: 'if_match' })
    checkIfMatch(cur, ifMatch, p)
    const delta = await removal(repo, ws, p)
    await syncWorkspaceRef(ctx, t, repo, id, withChanges(ws, delta))
    t.write(...changeOps(id, delta, t.now))
    return { workspace: id, path: p, deleted: true }
  })
}

export async function moveFile(
  ctx: Ctx,
  caller: Caller,
  id: string,
  body: { from: string; to: string; overwrite?: boolean },
): Promise<Record<string, unknown>> {
  const from = checkPath(body.from, 'from')
  const to = checkPath(body.to, 'to')
  if (from === to) throw invalid('from and to are the same path', { field: 'to' })
  return onWorkspace(ctx, id, undefined, async (t) => {
    const ws = await getWorkspace(ctx, caller, id, true, t)
    const repo = ctx.repos.get(ws.repo)
    const src = await lookup(repo, ws, from)
    if (!src) throw notFound(`'${from}' does not exist in workspace`, { path: from })
    if (src.kind !== 'file') throw invalid('only files can be moved', { path: from })
    const dst = await lookup(repo, ws, to)
    if (dst?.kind === 'dir') throw conflict(`'${to}' is a directory`, { path: to })
    if (dst?.kind === 'submodule') throw inSubmodule(to, to, dst.commit)
    if (dst && !body.overwrite) throw conflict(`'${to}' exists (pass overwrite: true)`, { path: to })
    const rem = await removal(repo, ws, from)
    await checkPlaceable(repo, withChanges(ws, rem), to)
    const o = await repo.cat.get(src.blob)
    const delta = { ...rem, [to]: { blob: src.blob, mode: src.mode, size: o?.size ?? 0 } }
    await syncWorkspaceRef(ctx, t, repo, id, withChanges(ws, delta))
    t.write(...changeOps(id, delta, t.now))
    return { workspace: id, from, to, blob: src.blob }
  })
}

export async function discardWorkspace(ctx: Ctx, caller: Caller, id: string): Promise<Record<string, unknown>> {
  const ws0 = await getWorkspace(ctx, caller, id, true)
  try {
    return await onWorkspace(ctx, id, ws0.repo, async (t) => {
      const ws = await getWorkspace(ctx, caller, id, true, t)
      const next: WorkspaceRec = { ...ws, state: 'discarded', updated_at: t.now.toISOString() }
      t.write({ c: 'workspaces', k: id, v: next })
      return viewWorkspace(next)
    })
  } finally {
    // Its objects are no longer kept: a discarded workspace is never read again.
    await releaseWorkspaceRef(ctx, ctx.repos.get(ws0.repo), id)
  }
}

export async function workspaceDiff(ctx: Ctx, caller: Caller, id: string): Promise<Record<string, unknown>> {
  const ws = await getWorkspace(ctx, caller, id, false)
  const repo = ctx.repos.get(ws.repo)
  const { tree } = await buildTree(repo, ws)
  const baseTree = ws.base ? `${ws.base}^{tree}` : null
  const d = await diff(repo, baseTree, tree, [], ctx.limits.maxPatchBytes)
  return { base: ws.base, head: tree, ...d }
}
