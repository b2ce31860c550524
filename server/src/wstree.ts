import crypto from 'node:crypto'
import { EMPTY_TREE } from './gitread.ts'
import { Lru } from './lru.ts'
import { hashObject, isTreeMode, writeObjects, serializeTree, type RawObject, type TreeItem } from './objects.ts'
import type { Repo } from './repos.ts'
import type { OverlayEntry, WorkspaceRec } from './types.ts'

// Tree ids are cached by the exact overlay (base + changes): a propose right after a
// diff reuses it, and any change, even within the same millisecond, misses. Only for
// CACHE_FRESH_MS: the trees may be unreachable (the workspace moved on), and maintenance
// keeps unreachable objects only so long after a request that reuses them began (its
// margin, maintenance.ts keptFor); an older state is built, and so written, again.
const treeCache = new Lru<string, { tree: string; at: number }>(500)
const CACHE_FRESH_MS = 5000

/**
 * Materialize the overlay as a git tree, in-process: only the trees on the path of a
 * change are rewritten (base trees come from the parsed-tree cache), written as one
 * pack, the rest are shared with the base by id. Same result as read-tree +
 * update-index + write-tree on a temporary index, without the three git processes.
 */
export async function buildTree(
  repo: Repo,
  ws: WorkspaceRec,
  extra?: (tree: string) => RawObject,
  /** objects the overlay refers to, not written yet (a file's new blob): written in the same pack */
  also: RawObject[] = [],
): Promise<{ tree: string; extra?: string }> {
  // Keyed by the repository's directory: a hit means the objects are in *this* repository.
  const key = crypto
    .createHash('sha1')
    .update(`${repo.gitDir}\0${ws.base ?? ''}\0${JSON.stringify(ws.changes)}`)
    .digest('hex')
  const hit = treeCache.get(key)
  let tree = hit && performance.now() - hit.at < CACHE_FRESH_MS ? hit.tree : undefined
  // A cached tree of an overlay state no ref keeps may have been pruned by git gc since.
  if (tree !== undefined && !(await repo.cat.get(tree))) tree = undefined
  const pending: RawObject[] = [...also]
  const built = tree === undefined
  if (tree === undefined) {
    const root = ws.base ? await repo.commitTree(ws.base) : null
    tree = (await rebuild(repo, root, Object.entries(ws.changes), pending)) ?? EMPTY_TREE
    if (tree === EMPTY_TREE) pending.push({ type: 'tree', body: Buffer.alloc(0) })
  }
  // One batch, one round of fsyncs: the trees and (for a proposal) the commit on top.
  if (extra) pending.push(extra(tree))
  const oids = await writeObjects(repo.gitDir, pending)
  // Built now: its objects were written now. A hit keeps the time they were written.
  if (built) treeCache.set(key, { tree, at: performance.now() })
  return extra ? { tree, extra: oids[oids.length - 1] as string } : { tree }
}

/** New id of tree `base` with `changes` (paths relative to it) applied; null if it ends up empty. */
async function rebuild(
  repo: Repo,
  base: string | null,
  changes: [string, OverlayEntry | null][],
  pending: RawObject[],
): Promise<string | null> {
  if (changes.length === 0) return base
  const items = new Map<string, TreeItem>(base ? await repo.treeItems(base) : [])
  const direct = new Map<string, OverlayEntry | null>()
  const nested = new Map<string, [string, OverlayEntry | null][]>()
  for (const [p, e] of changes) {
    const slash = p.indexOf('/')
    if (slash < 0) direct.set(p, e)
    else {
      const name = p.slice(0, slash)
      let list = nested.get(name)
      if (!list) {
        list = []
        nested.set(name, list)
      }
      list.push([p.slice(slash + 1), e])
    }
  }
  for (const name of new Set([...direct.keys(), ...nested.keys()])) {
    const d = direct.get(name)
    if (d) {
      // A live file at this name wins (the overlay never holds a file and a live file
      // below the same name: writes refuse that).
      items.set(name, { mode: d.mode, name, oid: d.blob })
      continue
    }
    const sub = nested.get(name)
    const cur = items.get(name)
    if (sub) {
      const subBase = cur && isTreeMode(cur.mode) ? cur.oid : null
      const t = await rebuild(repo, subBase, sub, pending)
      if (t === null) items.delete(name)
      else items.set(name, { mode: '40000', name, oid: t })
    } else items.delete(name) // d === null: deletion of a base file
  }
  if (items.size === 0) return null
  const body = serializeTree([...items.values()])
  pending.push({ type: 'tree', body })
  return hashObject('tree', body)
}
