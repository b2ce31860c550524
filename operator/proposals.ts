// `ag-mcp proposals list|show|diff|integrate|reject`: the person's side of local mode. It holds
// the repository's private ag-server (the one the sessions use, or one started for this command)
// and talks to it as human:owner, the repository's maintainer, with a token minted for this
// command and revoked after. One function per subcommand (COMMANDS); `run` does what they share.
import { closest } from '../lib/closest.ts'
import { Usage, subcommand } from './subcommand.ts'
import { ApiError, client, listProposals } from './local/api.ts'
import type { Api } from './local/api.ts'
import { blockedCheckout, followIntegration } from './local/checkout.ts'
import { personIdentity, removeIdentity, writeIdentity } from './local/identity.ts'
import { LocalError, git } from './local/repo.ts'
import { holdServer } from './local/server.ts'
import type { PrivateServer } from './local/server.ts'
import { prepareLocal } from './local/setup.ts'
import type { LocalState } from './local/setup.ts'
import { syncBranchesIn, syncOut } from './local/sync.ts'
import { OWNER, grantOwner, mintToken, revokeToken } from './local/tokens.ts'
import type { Token } from './local/tokens.ts'

export interface Io {
  out(s: string): void
  err(s: string): void
  cwd: string
}

const STRATEGIES = ['merge', 'fast_forward', 'squash'] as const
type Strategy = (typeof STRATEGIES)[number]

export const USAGE = `usage: ag-mcp proposals list [--all]
       ag-mcp proposals show|diff <id>
       ag-mcp proposals review <id> --approve|--request-changes|--comment [--message TEXT]
       ag-mcp proposals integrate <id> [--strategy merge|fast_forward|squash]
       ag-mcp proposals reject <id> [--reason TEXT]
       ag-mcp proposals open [--browser]          the review page, signed in
  (in a repository where ag-mcp --local has run; --repo-dir PATH names another; with
  --upstream URL --token-file FILE each acts on a shared ag-server: ag-mcp proposals --help-remote)
  integrate fast-forwards when it can and merges otherwise, in your name (git var GIT_AUTHOR_IDENT);
  an integrated or rejected proposal's refs/proposals/<id> is removed from your repository.`

interface ProposalView {
  id: string
  title: string
  state: string
  author: string
  target: string
  target_head: string | null
  base: string | null
  head: string
  description: string
  mergeable: boolean
  mergeability: string
  conflicts: string[]
  integration_blockers: { code: string; message: string }[]
}

interface Args {
  verb: keyof typeof COMMANDS
  id: string | undefined
  all: boolean
  strategy: Strategy | undefined
  reason: string | undefined
  repoDir: string | undefined
}

/** What a subcommand works with. */
interface Ctx {
  s: LocalState
  api: Api
  token: Token
  io: Io
}

function parse(argv: readonly string[]): Args {
  const { verb, rest } = subcommand(argv, Object.keys(COMMANDS) as Args['verb'][], 'proposals', USAGE)
  const a: Args = {
    verb,
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
    if (flag === 'strategy') {
      if (!(STRATEGIES as readonly string[]).includes(value))
        throw new Usage(`proposals ${verb}: --strategy is one of ${STRATEGIES.join(', ')}, got "${value}"`)
      a.strategy = value as Strategy
    } else if (flag === 'reason') a.reason = value
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
  let server: PrivateServer | undefined
  let token: Token | undefined
  try {
    server = await holdServer(s, { slot: false })
    // The server's branches are yours as they are now: integration lands on your latest commit.
    syncBranchesIn(s)
    await grantOwner(s, server)
    token = await mintToken(s, server, OWNER, 600)
    return await COMMANDS[a.verb]({ s, api: client(server.url, token.file), token, io }, a)
  } catch (e) {
    io.err(`ag-mcp proposals ${a.verb}: ${(e as Error).message}`)
    return 1
  } finally {
    if (token) removeIdentity(s, token.id)
    if (server && token) await revokeToken(s, server, token)
    server?.stop()
  }
}

const enc = encodeURIComponent
const short = (oid: string | null): string => (oid ? oid.slice(0, 10) : '(none)')

const getProposal = async (c: Ctx, id: string): Promise<ProposalView> =>
  (await c.api('GET', `/proposals/${enc(id)}`)) as ProposalView

/** Your repository's refs/proposals/* and refs/ag/ as the server's proposals are now. */
async function publish(c: Ctx): Promise<void> {
  await syncOut(
    c.s,
    (await listProposals(c.api, c.s.repo, 'open')).map((p) => p.id),
  )
}

const COMMANDS = {
  async list(c: Ctx, a: Args): Promise<number> {
    const all = await listProposals(c.api, c.s.repo, a.all ? undefined : 'open')
    await publish(c)
    if (all.length === 0) {
      c.io.out(a.all ? 'no proposals yet' : 'no open proposals (--all shows integrated and withdrawn ones)')
      return 0
    }
    for (const p of all) {
      const ref = p.state === 'open' ? `; refs/proposals/${p.id}` : ''
      c.io.out(`${p.id}  ${p.state.padEnd(10)} ${p.title}  (by ${p.author}, onto ${p.target}${ref})`)
    }
    return 0
  },

  async show(c: Ctx, a: Args): Promise<number> {
    const p = await getProposal(c, a.id as string)
    await publish(c)
    const ref = p.state === 'open' ? ` (refs/proposals/${p.id})` : ''
    c.io.out(
      `${p.id}: ${p.title}\n  state    ${p.state}\n  author   ${p.author}\n  target   ${p.target}\n  base     ${short(p.base)}\n  head     ${short(p.head)}${ref}`,
    )
    c.io.out(
      `  ${p.mergeable ? 'can be integrated' : `blocked: ${p.integration_blockers.map((b) => b.message).join('; ')}`}`,
    )
    if (p.description) c.io.out(`\n${p.description.replace(/^/gm, '  ')}`)
    c.io.out(`\n${git(c.s.top, ['-c', 'core.quotePath=false', 'diff', '--stat=160', ...range(p)])}`)
    return 0
  },

  async diff(c: Ctx, a: Args): Promise<number> {
    const p = await getProposal(c, a.id as string)
    await publish(c)
    c.io.out(git(c.s.top, ['-c', 'core.quotePath=false', 'diff', ...range(p)]))
    return 0
  },

  async integrate(c: Ctx, a: Args): Promise<number> {
    const id = a.id as string
    // You, as git knows you: the integration commit (a merge, a squash) is in your name.
    writeIdentity(c.s, c.token.id, personIdentity(c.s.top))
    for (let attempt = 0; ; attempt++) {
      const p = await getProposal(c, id)
      if (p.state !== 'open') throw new LocalError(`${id} is ${p.state}; only an open proposal can be integrated`)
      const blocked = blockedCheckout(c.s, p.target)
      if (blocked) throw new LocalError(blocked)
      const strategy = a.strategy ?? (p.mergeability === 'fast_forward' ? 'fast_forward' : 'merge')
      let r: { target: string; commit: string; previous_target_head: string | null; strategy: string }
      try {
        r = (await c.api('POST', `/proposals/${enc(id)}/integrate`, {
          strategy,
          ...(p.target_head ? { expected_target_head: p.target_head } : {}),
        })) as typeof r
      } catch (e) {
        // Someone moved the branch between our look and the integration: look again, once.
        if (e instanceof ApiError && e.code === 'conflict' && /moved/.test(e.message) && attempt === 0) continue
        throw new LocalError(whyNot(p, strategy, e))
      }
      followIntegration(c.s, id, r)
      await publish(c)
      const how =
        r.strategy === 'fast_forward' ? 'fast-forward' : r.strategy === 'squash' ? 'squash commit' : 'merge commit'
      c.io.out(`integrated ${id} into ${r.target} (${how}): ${short(r.previous_target_head)}..${short(r.commit)}`)
      return 0
    }
  },

  async reject(c: Ctx, a: Args): Promise<number> {
    const id = a.id as string
    await c.api('POST', `/proposals/${enc(id)}/withdraw`, a.reason === undefined ? {} : { reason: a.reason })
    await publish(c)
    c.io.out(`rejected ${id}: withdrawn; the agent sees it as withdrawn${a.reason ? ` ("${a.reason}")` : ''}`)
    return 0
  },
}

/** git's empty tree: the base of a proposal with no parent. */
const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904'

/** What the proposal changes: from its base (or nothing, for a proposal with no parent). */
const range = (p: ProposalView): string[] => [p.base ?? EMPTY_TREE, p.head]

/** A refused integration, said with the strategies that would work. */
function whyNot(p: ProposalView, tried: Strategy, e: unknown): string {
  const base = e instanceof Error ? e.message : String(e)
  const works = (p.mergeability === 'fast_forward' ? STRATEGIES : p.mergeability === 'clean' ? ['merge', 'squash'] : [])
    .filter((x) => x !== tried)
    .map((x) => `--strategy ${x}`)
  if (p.mergeability === 'conflicts')
    return `${base}; no strategy works: ${p.id} conflicts with ${p.target} in ${p.conflicts.join(', ')}; ask the agent to revise it onto ${p.target}, or reject it`
  if (p.mergeability === 'up_to_date') return `${base}; ${p.target} already has everything ${p.id} proposes`
  return works.length ? `${base}; ${works.join(' or ')} would work` : base
}
