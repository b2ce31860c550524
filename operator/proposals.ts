// `ag-mcp proposals list|show|diff|integrate|reject`: the person's side of local mode. It talks to
// the repository's private ag-server (the running session's, or one started for this command) as
// human:owner, the repository's maintainer, with a token minted for this command and revoked after.
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { closest } from '../lib/closest.ts'
import {
  LocalError,
  OWNER,
  mintToken,
  prepareLocal,
  revokeToken,
  startServer,
  syncBranchesIn,
  syncProposalsOut,
} from './local.ts'
import type { LocalState } from './local.ts'

export interface Io {
  out(s: string): void
  err(s: string): void
  cwd: string
}

const VERBS = ['list', 'show', 'diff', 'integrate', 'reject'] as const
type Verb = (typeof VERBS)[number]
const USAGE = `usage: ag-mcp proposals list [--all]
       ag-mcp proposals show|diff <id>
       ag-mcp proposals review <id> --approve|--request-changes|--comment [--message TEXT]
       ag-mcp proposals integrate <id> [--strategy merge|fast_forward|squash]
       ag-mcp proposals reject <id> [--reason TEXT]
       ag-mcp proposals open [--browser]          the review page, signed in
  (in a repository where ag-mcp --local has run; --repo-dir PATH names another; with
  --upstream URL --token-file FILE each acts on a shared ag-server: ag-mcp proposals --help-remote)`

interface ProposalView {
  id: string
  title: string
  state: string
  author: string
  target: string
  base: string
  head: string
  description: string
  mergeable: boolean
  integration_blockers: { code: string; message: string }[]
}

class Usage extends Error {}

interface Args {
  verb: Verb
  id: string | undefined
  all: boolean
  strategy: string | undefined
  reason: string | undefined
  repoDir: string | undefined
}

function parse(argv: readonly string[]): Args {
  const [verb, ...rest] = argv
  if (verb === undefined || verb === '--help') throw new Usage(USAGE)
  if (!(VERBS as readonly string[]).includes(verb)) {
    const near = closest(verb, VERBS)
    throw new Usage(`proposals: unknown command "${verb}"${near ? ` (did you mean ${near}?)` : ''}\n${USAGE}`)
  }
  const a: Args = {
    verb: verb as Verb,
    id: undefined,
    all: false,
    strategy: undefined,
    reason: undefined,
    repoDir: undefined,
  }
  const known = ['all', 'strategy', 'reason', 'repo-dir']
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i] as string
    if (!arg.startsWith('--')) {
      if (a.id !== undefined) throw new Usage(`proposals ${verb}: one proposal id, got "${a.id}" and "${arg}"`)
      a.id = arg
      continue
    }
    const flag = arg.slice(2)
    if (flag === 'all') {
      a.all = true
      continue
    }
    if (!known.includes(flag)) {
      const near = closest(flag, known)
      throw new Usage(`proposals ${verb}: unknown flag ${arg}${near ? ` (did you mean --${near}?)` : ''}`)
    }
    const value = rest[++i]
    if (value === undefined) throw new Usage(`proposals ${verb}: --${flag} needs a value`)
    if (flag === 'strategy') a.strategy = value
    else if (flag === 'reason') a.reason = value
    else a.repoDir = value
  }
  if (a.verb !== 'list' && a.id === undefined)
    throw new Usage(`proposals ${verb}: name the proposal (ag-mcp proposals list shows the ids)`)
  return a
}

export async function proposals(argv: readonly string[], io: Io): Promise<number> {
  // The review page, the review verb and any verb against a shared server have modules of their own.
  if (argv[0] === 'open') return (await import('./proposals-open.ts')).openReview(argv.slice(1), io)
  if (argv[0] === '--help-remote') {
    io.out((await import('./proposals-remote.ts')).REMOTE_USAGE)
    return 0
  }
  if (argv[0] === 'review' || argv.some((x) => /^--(upstream|token-file|token-env)(=|$)/.test(x)))
    return (await import('./proposals-remote.ts')).remoteProposals(argv, io)
  let a: Args
  try {
    a = parse(argv)
  } catch (e) {
    io.err(`ag-mcp ${(e as Error).message}`)
    return 2
  }
  let s: LocalState
  try {
    s = prepareLocal(a.repoDir, io.cwd, { create: false })
  } catch (e) {
    if (!(e instanceof LocalError)) throw e
    io.err(`ag-mcp proposals: ${e.message}`)
    return 2
  }
  // Integration lands on your branch as it is now, and only on a clean working tree.
  if (a.verb === 'integrate') {
    const blocked = dirtyCheckout(s, a.id as string)
    if (blocked) {
      io.err(`ag-mcp proposals integrate: ${blocked}`)
      return 1
    }
    syncBranchesIn(s)
  }
  const server = await startServer(s)
  let token: { file: string; id: string } | undefined
  try {
    token = await mintToken(s, server, OWNER, 600)
    const api = client(server.url, readFileSync(token.file, 'utf8').trim())
    return await run(a, s, api, io)
  } catch (e) {
    io.err(`ag-mcp proposals ${a.verb}: ${(e as Error).message}`)
    return 1
  } finally {
    if (token) await revokeToken(s, server, token)
    await server.stop()
  }
}

type Api = (method: string, path: string, body?: unknown) => Promise<unknown>

function client(url: string, token: string): Api {
  return async (method, path, body) => {
    const res = await fetch(`${url}/agwp/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      redirect: 'error',
    })
    const json = (await res.json()) as { error?: { code: string; message: string } }
    if (!res.ok) throw new Error(`${json.error?.code ?? res.status}: ${json.error?.message ?? ''}`)
    return json
  }
}

function git(s: LocalState, args: string[]): string {
  return execFileSync('git', args, {
    cwd: s.top,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 64 * 1024 * 1024,
  })
}

const short = (oid: string): string => oid.slice(0, 10)

async function run(a: Args, s: LocalState, api: Api, io: Io): Promise<number> {
  const enc = encodeURIComponent
  switch (a.verb) {
    case 'list': {
      const r = (await api('GET', `/repos/${enc(s.repo)}/proposals${a.all ? '' : '?state=open'}`)) as {
        proposals: ProposalView[]
      }
      syncProposalsOut(s)
      if (r.proposals.length === 0) {
        io.out(a.all ? 'no proposals yet' : 'no open proposals (--all shows integrated and withdrawn ones)')
        return 0
      }
      for (const p of r.proposals)
        io.out(`${p.id}  ${p.state.padEnd(10)} ${p.title}  (by ${p.author}, onto ${p.target}; refs/proposals/${p.id})`)
      return 0
    }
    case 'show': {
      const p = (await api('GET', `/proposals/${enc(a.id as string)}`)) as ProposalView
      syncProposalsOut(s)
      io.out(
        `${p.id}: ${p.title}\n  state    ${p.state}\n  author   ${p.author}\n  target   ${p.target}\n  base     ${short(p.base)}\n  head     ${short(p.head)} (refs/proposals/${p.id})`,
      )
      io.out(
        `  ${p.mergeable ? 'can be integrated' : `blocked: ${p.integration_blockers.map((b) => b.message).join('; ')}`}`,
      )
      if (p.description) io.out(`\n${p.description.replace(/^/gm, '  ')}`)
      io.out(`\n${git(s, ['diff', '--stat', p.base, p.head]).trimEnd()}`)
      return 0
    }
    case 'diff': {
      const p = (await api('GET', `/proposals/${enc(a.id as string)}`)) as ProposalView
      syncProposalsOut(s)
      io.out(git(s, ['diff', p.base, p.head]).trimEnd())
      return 0
    }
    case 'integrate': {
      const body = a.strategy === undefined ? {} : { strategy: a.strategy }
      const r = (await api('POST', `/proposals/${enc(a.id as string)}/integrate`, body)) as {
        target: string
        commit: string
        previous_target_head: string | null
      }
      moveBranch(s, r.target, r.commit)
      syncProposalsOut(s)
      io.out(
        `integrated ${a.id as string} into ${r.target}: ${r.previous_target_head ? short(r.previous_target_head) : '(new)'}..${short(r.commit)}`,
      )
      return 0
    }
    case 'reject': {
      await api(
        'POST',
        `/proposals/${enc(a.id as string)}/withdraw`,
        a.reason === undefined ? {} : { reason: a.reason },
      )
      io.out(
        `rejected ${a.id as string}: withdrawn; the agent sees it as withdrawn${a.reason ? ` ("${a.reason}")` : ''}`,
      )
      return 0
    }
  }
}

/** Why integrating now would not land cleanly on your checkout, if it would not. */
function dirtyCheckout(s: LocalState, _id: string): string | undefined {
  const status = git(s, ['status', '--porcelain', '--untracked-files=no']).trim()
  return status === '' ? undefined : `your working tree has uncommitted changes in ${s.top}; commit or stash them first`
}

/** Your branch follows the private server's: fast-forward only, the checkout too if it is that branch. */
function moveBranch(s: LocalState, branch: string, commit: string): void {
  git(s, ['fetch', '--quiet', s.bare, `refs/heads/${branch}`])
  let current = ''
  try {
    current = git(s, ['symbolic-ref', '--quiet', '--short', 'HEAD']).trim()
  } catch {
    // a detached HEAD: no branch is checked out
  }
  if (current === branch) {
    git(s, ['merge', '--quiet', '--ff-only', commit])
    return
  }
  let old = ''
  try {
    old = git(s, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`]).trim()
  } catch {
    // a new branch
  }
  git(s, ['update-ref', `refs/heads/${branch}`, commit, ...(old ? [old] : [])])
}
