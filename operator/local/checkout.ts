// Your checkouts: which work tree has a branch checked out, what is uncommitted there, and moving
// a branch to what the private server integrated (fast-forward only, the checkout with it).
import { LocalError, git, gitError, gitRaw } from './repo.ts'
import type { LocalState } from './setup.ts'
import { pinPrefix } from './sync.ts'

/** The work tree (main or linked) that has `branch` checked out, if one has. */
export function worktreeWith(s: Pick<LocalState, 'top'>, branch: string): string | undefined {
  const listed = git(s.top, ['worktree', 'list', '--porcelain', '-z'])
  let path: string | undefined
  for (const field of listed.split('\0')) {
    if (field.startsWith('worktree ')) path = field.slice('worktree '.length)
    else if (field === `branch refs/heads/${branch}`) return path
  }
  return undefined
}

/** Tracked files with uncommitted changes (staged or not) in the work tree `tree`. */
export function uncommitted(tree: string): string[] {
  const entries = gitRaw(tree, ['status', '--porcelain=v1', '-z', '--untracked-files=no']).split('\0')
  const files: string[] = []
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i] as string
    if (e.length < 4) continue
    files.push(e.slice(3))
    // A rename or copy is followed by its source path.
    if (/[RC]/.test(e.slice(0, 2))) i++
  }
  return files
}

/** "a, b, c (and 4 more)": the files a refusal names. */
export function nameFiles(files: readonly string[], max = 8): string {
  const shown = files.slice(0, max).join(', ')
  return files.length > max ? `${shown} (and ${files.length - max} more)` : shown
}

/** Why integrating into `branch` now would not land cleanly on your checkout of it, if it would not. */
export function blockedCheckout(s: LocalState, branch: string): string | undefined {
  const tree = worktreeWith(s, branch)
  if (!tree) return undefined
  const files = uncommitted(tree)
  if (files.length === 0) return undefined
  return `${branch} is checked out in ${tree}, which has uncommitted changes in ${nameFiles(files)}: commit or stash them (git stash), then integrate again`
}

/**
 * Your branch follows the private server's after an integration: fast-forward only, the checkout
 * too where it is checked out. If it cannot (you committed or changed files meanwhile), the
 * result stays reachable as refs/ag/<repo>/integrated/<id> and the error says how to take it.
 */
export function followIntegration(
  s: LocalState,
  id: string,
  r: { target: string; commit: string; previous_target_head: string | null },
): void {
  const kept = `${pinPrefix(s)}integrated/${id}`
  if (!/^[0-9a-f]{40}$/.test(r.commit))
    throw new LocalError(`the private server answered ${JSON.stringify(r.commit)} as ${id}'s integration commit`)
  // By id, not by the branch's name: a session's mirror of your branches (watchYourRefs, for a
  // commit you made just before) may have set the server's branch back to yours meanwhile, and
  // the name then brought your own commit, not the integration. Protocol v2 serves any id
  // ("wants can be anything"); v0 only advertised ones, whatever your git config says.
  git(s.top, [
    '-c',
    'protocol.version=2',
    'fetch',
    '--quiet',
    '--no-tags',
    '--no-write-fetch-head',
    '--no-auto-gc',
    s.bare,
    `+${r.commit}:${kept}`,
  ])
  const tree = worktreeWith(s, r.target)
  try {
    if (tree) git(tree, ['merge', '--quiet', '--ff-only', r.commit])
    else git(s.top, ['update-ref', `refs/heads/${r.target}`, r.commit, r.previous_target_head ?? '0'.repeat(40)])
  } catch (e) {
    throw new LocalError(
      `the private server integrated ${id} into ${r.target} (${r.commit.slice(0, 10)}), but your ${r.target} could not follow: ${gitError(e)}; take it with git merge --ff-only ${kept}${tree ? ` in ${tree}` : ''}`,
    )
  }
  git(s.top, ['update-ref', '-d', kept])
}
