import { git, GitError } from './git.ts'
import { mergeBase } from './history.ts'
import {
  canonicalMode,
  hashObject,
  isTreeMode,
  quarantined,
  serializeTree,
  writeObjects,
  type RawObject,
  type TreeItem,
} from './objects.ts'
import type { Repo } from './repos.ts'

// What a proposal's merge into its target gives: mergeability() and mergeTree() answer as
// `git merge-base` and `git merge-tree` would.
//
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

/** merge-base based classification plus merge-tree for real merges. */
export async function mergeability(
  repo: Repo,
  target: string,
  head: string,
): Promise<{
  mergeability: 'fast_forward' | 'clean' | 'conflicts' | 'up_to_date'
  conflicts: string[]
  /** null: the two have no common history */
  merge_base: string | null
  tree?: string
}> {
  // In process when the answer is unique (history.ts); git otherwise.
  const unique = await mergeBase(repo, target, head)
  let base = unique
  if (base === undefined) {
    const out = (await git(repo.gitDir, ['merge-base', target, head], { okCodes: [1] })).stdout.toString('utf8').trim()
    base = /^[0-9a-f]{40}$/.test(out) ? out : null
  }
  if (base === head) return { mergeability: 'up_to_date', conflicts: [], merge_base: base }
  if (base === target) return { mergeability: 'fast_forward', conflicts: [], merge_base: base }
  // (one of several bases is no base for a merge: git merges them first)
  const m = await mergeTree(repo, target, head, unique ?? null)
  return m.conflicts.length
    ? { mergeability: 'conflicts', conflicts: m.conflicts, merge_base: base }
    : { mergeability: 'clean', conflicts: [], merge_base: base, tree: m.tree }
}

/**
 * `git merge-tree --write-tree ours theirs`: the merged tree, or the conflicting paths. In
 * process when the merge is a path-by-path choice (merge.ts); `base` is the two commits' one
 * merge base if the caller knows it (null: none, or not one). With `unwritten`, the objects
 * the merge made (git's too) are left there for the caller to write with what refers to them.
 */
export async function mergeTree(
  repo: Repo,
  ours: string,
  theirs: string,
  base?: string | null,
  unwritten?: RawObject[],
): Promise<{ tree: string; conflicts: string[] }> {
  const b = base === undefined ? await mergeBase(repo, ours, theirs) : base
  if (b) {
    const [bt, ot, tt] = await Promise.all([repo.commitTree(b), repo.commitTree(ours), repo.commitTree(theirs)])
    const tree = await trivialMerge(repo, bt, ot, tt, unwritten)
    if (tree !== undefined) return { tree, conflicts: [] }
  }
  // Its trees and merged blobs come back to be written as a pack, with what refers to them.
  const { result: r, objects } = await quarantined(repo.gitDir, (env) =>
    git(
      repo.gitDir,
      ['merge-tree', '--write-tree', '--name-only', '--no-messages', '-z', '--allow-unrelated-histories', ours, theirs],
      { okCodes: [1], env },
    ),
  )
  if (unwritten) unwritten.push(...objects)
  else await writeObjects(repo.gitDir, objects)
  const parts = r.stdout.toString('utf8').split('\0').filter(Boolean)
  const tree = (parts[0] ?? '').trim()
  // Exit 1 is a conflict only with a tree: git also exits 1 on a commit it cannot read.
  if (!/^[0-9a-f]{40}$/.test(tree)) throw new GitError('merge-tree', r.code, r.stderr)
  const conflicts = r.code === 1 ? [...new Set(parts.slice(1))] : []
  return { tree, conflicts: r.code === 1 && conflicts.length === 0 ? ['(unknown)'] : conflicts }
}

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
  unwritten?: RawObject[],
): Promise<string | undefined> {
  const trees: RawObject[] = []
  const merged = await mergeTrees(repo, base, ours, theirs, trees)
  if (merged === undefined) return undefined
  if (unwritten) unwritten.push(...trees)
  else await writeObjects(repo.gitDir, trees)
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
    if (key(oe) === key(te)) {
      // The same change on both sides; but a deletion inside it can pair with an addition
      // elsewhere as a rename that git then reports as a conflict (renamed on one side, deleted
      // on the other): such a merge goes to git.
      if (be !== undefined && oe !== undefined && isTreeMode(be.mode) && (await deletesIn(repo, be.oid, oe.oid)))
        return undefined
      pick = oe
    } else if (key(be) === key(te)) pick = oe
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

/** Does the tree `side` lack a path the tree `base` has (or hold a file where it had a directory)? */
async function deletesIn(repo: Repo, base: string, side: string): Promise<boolean> {
  if (base === side) return false
  const [b, o] = await Promise.all([repo.treeItems(base), repo.treeItems(side)])
  for (const [name, be] of b) {
    const oe = o.get(name)
    if (oe === undefined || isTreeMode(be.mode) !== isTreeMode(oe.mode)) return true
    if (isTreeMode(be.mode) && oe.oid !== be.oid && (await deletesIn(repo, be.oid, oe.oid))) return true
  }
  return false
}
