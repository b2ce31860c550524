// `ag-mcp proposals list|show|diff|review|integrate|reject --upstream URL --token-file FILE`: a
// person reviewing from a terminal against any ag-server, with their own token (never an
// agent's: the server refuses what the token's scopes and role do not allow, and that reason is
// printed). `review` works in local mode too, as human:owner through the private server.
// Everything the server returns was written by someone else: it is scrubbed of credential
// shapes and its hidden characters are printed as their codes, so it cannot drive the terminal.
import { checkUpstream } from '../core/src/config/config.ts'
import { createTokenSource } from '../core/src/pipeline/tokens.ts'
import type { Logger } from '../core/src/plugin-api.ts'
import { closest } from '../lib/closest.ts'
import { createScrub } from '../lib/scrub.ts'
import { showHidden } from '../lib/visible.ts'
import { LocalError } from './local/repo.ts'
import { holdServer } from './local/server.ts'
import { prepareLocal } from './local/setup.ts'
import { OWNER, grantOwner, mintToken, revokeToken } from './local/tokens.ts'
import type { Token } from './local/tokens.ts'
import { formatDiff, formatList, formatShow, type ProposalView } from './proposals-view.ts'

export interface RemoteIo {
  out(s: string): void
  err(s: string): void
  cwd: string
  env?: NodeJS.ProcessEnv
}

const VERBS = ['list', 'show', 'diff', 'review', 'integrate', 'reject'] as const
type Verb = (typeof VERBS)[number]
export const REMOTE_USAGE = `usage (against any ag-server, with your own token):
       ag-mcp proposals list [--repo NAME] [--state open|integrated|withdrawn|all] --upstream URL --token-file FILE
       ag-mcp proposals show|diff <id> --upstream URL --token-file FILE
       ag-mcp proposals review <id> --approve|--request-changes|--comment [--message TEXT] --upstream URL --token-file FILE
       ag-mcp proposals integrate <id> [--strategy merge|fast_forward|squash] --upstream URL --token-file FILE
       ag-mcp proposals reject <id> [--reason TEXT] --upstream URL --token-file FILE
  --token-env NAME reads the token from a variable instead; --allow-insecure-http permits http:// to a
  non-loopback host. Without --upstream, review acts in local mode (--repo-dir PATH names the repository).`

const VALUE_FLAGS = [
  'upstream',
  'token-file',
  'token-env',
  'repo',
  'state',
  'message',
  'strategy',
  'reason',
  'repo-dir',
]
const SWITCHES = ['approve', 'request-changes', 'comment', 'all', 'allow-insecure-http']

class Usage extends Error {}

interface Args {
  verb: Verb
  id: string | undefined
  flags: Record<string, string>
  switches: Set<string>
}

function parse(argv: readonly string[]): Args {
  const [verb, ...rest] = argv
  if (verb === undefined || !(VERBS as readonly string[]).includes(verb)) {
    const near = verb === undefined ? undefined : closest(verb, VERBS)
    throw new Usage(
      `proposals: unknown command "${verb ?? ''}"${near ? ` (did you mean ${near}?)` : ''}\n${REMOTE_USAGE}`,
    )
  }
  const a: Args = { verb: verb as Verb, id: undefined, flags: {}, switches: new Set() }
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i] as string
    if (!arg.startsWith('--')) {
      if (a.id !== undefined) throw new Usage(`proposals ${verb}: one proposal id, got "${a.id}" and "${arg}"`)
      a.id = arg
      continue
    }
    const eq = arg.indexOf('=')
    const name = arg.slice(2, eq < 0 ? undefined : eq)
    if (SWITCHES.includes(name) && eq < 0) {
      a.switches.add(name)
      continue
    }
    if (!VALUE_FLAGS.includes(name)) {
      const near = closest(name, [...VALUE_FLAGS, ...SWITCHES])
      throw new Usage(`proposals ${verb}: unknown flag --${name}${near ? ` (did you mean --${near}?)` : ''}`)
    }
    const value = eq < 0 ? rest[++i] : arg.slice(eq + 1)
    if (value === undefined) throw new Usage(`proposals ${verb}: --${name} needs a value`)
    a.flags[name] = value
  }
  if (a.verb !== 'list' && a.id === undefined)
    throw new Usage(`proposals ${verb}: name the proposal (ag-mcp proposals list shows the ids)`)
  if (a.verb === 'review') {
    const chosen = ['approve', 'request-changes', 'comment'].filter((v) => a.switches.has(v))
    if (chosen.length !== 1)
      throw new Usage('proposals review: give exactly one of --approve, --request-changes, --comment')
    if (chosen[0] === 'request-changes' && !a.flags['message'])
      throw new Usage('proposals review --request-changes: say what should change (--message TEXT)')
  }
  return a
}

type Api = (method: string, path: string, body?: unknown) => Promise<unknown>

/** An AGWP client with the person's token: redirects refused, a 401 re-reads the token file once. */
function client(
  base: string,
  token: { current(): Promise<string | undefined>; refresh(): Promise<string | undefined> },
): Api {
  const send = async (t: string | undefined, method: string, path: string, body: unknown) =>
    fetch(`${base}/agwp/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${t ?? ''}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      redirect: 'error',
    })
  return async (method, path, body) => {
    let res = await send(await token.current(), method, path, body)
    if (res.status === 401) res = await send(await token.refresh(), method, path, body)
    const json = (await res.json().catch(() => ({}))) as { error?: { code?: string; message?: string } }
    if (!res.ok) throw new Error(`${json.error?.code ?? res.status}: ${json.error?.message ?? res.statusText}`)
    return json
  }
}

const enc = encodeURIComponent

async function run(a: Args, api: Api, say: (s: string) => void, repoOf: () => Promise<string[]>): Promise<void> {
  const id = a.id as string
  switch (a.verb) {
    case 'list': {
      const state = a.switches.has('all') ? 'all' : (a.flags['state'] ?? 'open')
      const repos = a.flags['repo'] !== undefined ? [a.flags['repo']] : await repoOf()
      const all: ProposalView[] = []
      for (const repo of repos) {
        let cursor: string | undefined
        do {
          const q = new URLSearchParams({
            limit: '500',
            ...(state === 'all' ? {} : { state }),
            ...(cursor ? { cursor } : {}),
          })
          const r = (await api('GET', `/repos/${enc(repo)}/proposals?${q}`)) as {
            proposals: ProposalView[]
            next_cursor?: string
          }
          all.push(...r.proposals)
          cursor = r.next_cursor
        } while (cursor !== undefined)
      }
      say(formatList(all, state))
      return
    }
    case 'show': {
      const [p, d] = await Promise.all([api('GET', `/proposals/${enc(id)}`), api('GET', `/proposals/${enc(id)}/diff`)])
      say(formatShow(p as ProposalView, d as Parameters<typeof formatShow>[1]))
      return
    }
    case 'diff':
      say(formatDiff((await api('GET', `/proposals/${enc(id)}/diff`)) as Parameters<typeof formatDiff>[0]))
      return
    case 'review': {
      const verdict = a.switches.has('approve') ? 'approve' : a.switches.has('comment') ? 'comment' : 'request_changes'
      const body = a.flags['message']
      const r = (await api('POST', `/proposals/${enc(id)}/reviews`, { verdict, ...(body ? { body } : {}) })) as {
        head: string
      }
      const done = { approve: 'approved', comment: 'commented on', request_changes: 'requested changes on' }[verdict]
      say(`${done} ${id} at ${r.head.slice(0, 10)}`)
      return
    }
    case 'integrate': {
      const strategy = a.flags['strategy']
      const r = (await api('POST', `/proposals/${enc(id)}/integrate`, strategy ? { strategy } : {})) as {
        target: string
        commit: string
        previous_target_head: string | null
        strategy: string
      }
      say(
        `integrated ${id} into ${r.target} (${r.strategy}): ${r.previous_target_head?.slice(0, 10) ?? '(new)'}..${r.commit.slice(0, 10)}`,
      )
      return
    }
    case 'reject': {
      const reason = a.flags['reason']
      await api('POST', `/proposals/${enc(id)}/withdraw`, reason ? { reason } : {})
      say(`rejected ${id}: withdrawn${reason ? ` ("${reason}")` : ''}`)
    }
  }
}

const scrub = createScrub(() => [])

export async function remoteProposals(argv: readonly string[], io: RemoteIo): Promise<number> {
  let a: Args
  try {
    a = parse(argv)
  } catch (e) {
    io.err(`ag-mcp ${(e as Error).message}`)
    return 2
  }
  const secrets: string[] = []
  // What the server says is someone else's text: scrubbed, and unable to drive the terminal.
  const clean = (s: string): string => showHidden(scrub(secrets.reduce((t, x) => t.split(x).join('[REDACTED]'), s)))
  const say = (s: string): void => io.out(clean(s))
  const fail = (e: unknown): number => {
    io.err(clean(`ag-mcp proposals ${a.verb}: ${(e as Error).message}`))
    return 1
  }
  const upstream = a.flags['upstream']
  if (upstream === undefined) {
    if (a.verb !== 'review') {
      io.err(`ag-mcp proposals ${a.verb}: --token-file and --token-env go with --upstream URL\n${REMOTE_USAGE}`)
      return 2
    }
    return local(a, io, say, fail)
  }
  let base: string
  let tokens: Awaited<ReturnType<typeof createTokenSource>>
  try {
    if (a.flags['repo-dir'] !== undefined)
      throw new Usage('--repo-dir is for local mode; with --upstream, name the repository with --repo')
    base = checkUpstream(upstream, a.switches.has('allow-insecure-http'))
    if ((a.flags['token-file'] === undefined) === (a.flags['token-env'] === undefined))
      throw new Usage('give your token with exactly one of --token-file FILE or --token-env NAME')
    tokens = await createTokenSource({
      file: a.flags['token-file'],
      env: a.flags['token-env'],
      environment: io.env ?? process.env,
      log: logger(io),
    })
  } catch (e) {
    io.err(`ag-mcp proposals ${a.verb}: ${(e as Error).message}`)
    return 2
  }
  secrets.push(...tokens.secrets())
  const api = client(base, tokens)
  const repos = async (): Promise<string[]> =>
    ((await api('GET', '/repos')) as { repos: { name: string }[] }).repos.map((r) => r.name)
  try {
    await run(a, api, say, repos)
    return 0
  } catch (e) {
    return fail(e)
  }
}

/** `review` in local mode: as human:owner, with a token the private server mints and revokes after. */
async function local(a: Args, io: RemoteIo, say: (s: string) => void, fail: (e: unknown) => number): Promise<number> {
  let s: ReturnType<typeof prepareLocal>
  try {
    s = prepareLocal(a.flags['repo-dir'], io.cwd, { create: false })
  } catch (e) {
    if (!(e instanceof LocalError)) throw e
    io.err(`ag-mcp proposals: ${e.message}`)
    return 2
  }
  const server = await holdServer(s, { slot: false })
  let token: Token | undefined
  try {
    await grantOwner(s, server)
    token = await mintToken(s, server, OWNER, 600)
    const file = token.file
    const tokens = await createTokenSource({ file, env: undefined, environment: {}, log: logger(io) })
    await run(a, client(server.url, tokens), say, async () => [s.repo])
    return 0
  } catch (e) {
    return fail(e)
  } finally {
    if (token) await revokeToken(s, server, token)
    server.stop()
  }
}

function logger(io: RemoteIo): Logger {
  const warn = (msg: string, f?: Record<string, unknown>): void =>
    io.err(`ag-mcp proposals: ${msg}${f ? ` ${JSON.stringify(f)}` : ''}`)
  return { debug: () => undefined, info: () => undefined, warn, error: warn }
}
