import {
  canonicalMode,
  hashObject,
  isTreeMode,
  serializeTree,
  writeObjects,
  type RawObject,
  type TreeItem,
} from './objects.ts'
import type { Repo } from './repos.ts'

// Most merges the server makes need no content merge: each side changed files the other did
// not touch. Git answers those exactly as a path-by-path three-way choice, so the server
// makes them in process instead of starting `git merge-tree` (a fork of the whole server
// process: 2-3 ms of its event loop each, more as its memory grows).
//
// Only when git's answer is certain to be that choice. merge-ort follows renames, and a
// rename is a deletion paired with an addition (a directory rename, a directory that
// disappears): so any deletion on either side, a file that became a directory or the
// reverse, a path both sides changed differently, or an entry whose mode git would rewrite
// sends the merge to git. So does every history that is not plain (mergeBase declines).

/** The entry as a tree would hold it, or '' for none: equal keys mean the same content. */
const key = (e: TreeItem | undefined): string => (e === undefined ? '' : `${canonicalMode(e.mode)} ${e.oid}`)

/**
 * The tree git's merge of `ours` and `theirs` (root trees, over the root tree `base` of their
 * one merge base) would write, with its new tree objects written; undefined when the merge is
 * not a path-by-path choice (see above) and git must make it.
 */
export async function trivialMerge(
  repo: Repo,
  base: string,
  ours: string,
  theirs: string,
): Promise<string | undefined> {
  const trees: RawObject[] = []
  const merged = await mergeTrees(repo, base, ours, theirs, trees)
  if (merged === undefined) return undefined
  await writeObjects(repo.gitDir, trees)
  return merged
}

async function mergeTrees(
  repo: Repo,
  base: string,
  ours: string,
  theirs: string,
  out: RawObject[],
): Promise<string | undefined> {
  if (ours === theirs || base === theirs) return ours
  if (base === ours) return theirs
  const [b, o, t] = await Promise.all([repo.treeItems(base), repo.treeItems(ours), repo.treeItems(theirs)])
  const items: TreeItem[] = []
  for (const name of new Set([...b.keys(), ...o.keys(), ...t.keys()])) {
    const be = b.get(name)
    const oe = o.get(name)
    const te = t.get(name)
    if (be !== undefined) {
      // a deletion, or a file that became a directory (or the reverse): git may see a rename
      if (oe === undefined || te === undefined) return undefined
      if (isTreeMode(be.mode) !== isTreeMode(oe.mode) || isTreeMode(be.mode) !== isTreeMode(te.mode)) return undefined
    }
    let pick: TreeItem | undefined
    if (key(oe) === key(te) || key(be) === key(te)) pick = oe
    else if (key(be) === key(oe)) pick = te
    // (a base entry has both sides of the same kind: checked above)
    else if (be !== undefined && oe !== undefined && te !== undefined && isTreeMode(be.mode)) {
      const sub = await mergeTrees(repo, be.oid, oe.oid, te.oid, out)
      if (sub === undefined) return undefined
      pick = { mode: '40000', name, oid: sub }
    } else return undefined // changed on both sides, or added on both with different content
    if (pick === undefined) continue
    // a tree git would write differently (a mode it normalizes): leave the bytes to git
    if (pick.mode !== canonicalMode(pick.mode)) return undefined
    items.push(pick)
  }
  const body = serializeTree(items)
  out.push({ type: 'tree', body })
  return hashObject('tree', body)
}
