// Your repository and the private server's, kept in step. The server's repository borrows your
// objects (git alternates: nothing is copied, so .ag/ stays small) and writes only into its own
// object store; it never writes into, repacks or prunes yours. What keeps this safe is one rule:
// everything the server's refs reach is reachable from refs in YOUR repository, so no `git gc`
// here can prune it:
//  - its branches and tags mirror yours (set from yours at every start, every `ag-mcp
//    proposals` command, and whenever your refs change while a session runs);
//  - its own refs (proposals, and workspaces holding written files) are copied into your
//    repository as refs/ag/<repo>/proposals/* and refs/ag/<repo>/agwp/*, whenever they change
//    while a session runs, together with the few objects the agent wrote;
//  - an open proposal is also refs/proposals/<id> for you to review; an integrated or rejected
//    one's refs/proposals/<id> goes (its commits are on your branch, or were rejected), while
//    refs/ag/ keeps what the server still points at.
import { mirrorRefs } from '../../lib/mirror.ts'
import { GIT_ENV, branchAt, git, gitAsync } from './repo.ts'
import type { LocalState } from './setup.ts'

const env = (): NodeJS.ProcessEnv => ({ ...process.env, ...GIT_ENV })

/** Your branches and tags, as they are now, become the server's; its HEAD is the branch checked out here. */
export function syncBranchesIn(s: LocalState): string {
  s.branch = branchAt(s.top)
  return mirrorRefs(s.top, s.bare, s.branch, env()).head
}

/** refs/ag/<repo>/: where your repository keeps what the server's own refs reach. */
export const pinPrefix = (s: Pick<LocalState, 'repo'>): string => `refs/ag/${s.repo}/`

/** Copies the server's own refs into refs/ag/<repo>/ (and the objects only it had); drops stale ones. */
export async function pinServerRefs(s: LocalState): Promise<void> {
  const pins = pinPrefix(s)
  await gitAsync(s.top, [
    'fetch',
    '--quiet',
    '--no-tags',
    '--no-write-fetch-head',
    '--no-auto-gc',
    '--prune',
    s.bare,
    `+refs/proposals/*:${pins}proposals/*`,
    `+refs/agwp/*:${pins}agwp/*`,
  ])
}

/**
 * refs/proposals/<id> in your repository: exactly this repository's open proposals. `open`
 * are their ids; the rest of the server's proposals (integrated, withdrawn) lose theirs.
 */
export async function publishProposals(s: LocalState, open: readonly string[]): Promise<void> {
  const pinsAt = `${pinPrefix(s)}proposals/`
  const listed = parseRefs(await gitAsync(s.top, ['for-each-ref', FORMAT, pinsAt, 'refs/proposals/']))
  const pinned = under(listed, pinsAt)
  const published = under(listed, 'refs/proposals/')
  const lines: string[] = []
  for (const id of open) {
    const oid = pinned.get(id)
    if (oid && published.get(id) !== oid) lines.push(`update refs/proposals/${id} ${oid}`)
  }
  const keep = new Set(open)
  for (const [id, oid] of published)
    if (pinned.has(id) && !keep.has(id)) lines.push(`delete refs/proposals/${id} ${oid}`)
  if (lines.length) await gitAsync(s.top, ['update-ref', '--stdin'], `${lines.join('\n')}\n`)
}

const FORMAT = '--format=%(objectname) %(refname)'

function parseRefs(text: string): Map<string, string> {
  const out = new Map<string, string>()
  for (const line of text.split('\n')) if (line.length > 41) out.set(line.slice(41), line.slice(0, 40))
  return out
}

function under(refs: Map<string, string>, prefix: string): Map<string, string> {
  const out = new Map<string, string>()
  for (const [ref, oid] of refs) if (ref.startsWith(prefix)) out.set(ref.slice(prefix.length), oid)
  return out
}

/** The refs under `prefix` in your repository, by the rest of their name. */
export function refsUnder(s: Pick<LocalState, 'top'>, prefix: string): Map<string, string> {
  return under(parseRefs(git(s.top, ['for-each-ref', FORMAT, prefix])), prefix)
}

/** Pins, then proposals: what a session does whenever the server's refs change. */
export async function syncOut(s: LocalState, open: readonly string[]): Promise<void> {
  await pinServerRefs(s)
  await publishProposals(s, open)
}
