// Local mode: ag-mcp for the repository you are in, with nothing deployed. A private ag-server
// (operator/local/server.ts), shared by every session in the repository, keeps its state under
// <repo>/.ag/ (excluded from git through .git/info/exclude, so no tracked file changes) and
// borrows your objects instead of copying them (operator/local/sync.ts). Each session gets a
// principal and a token of its own that can only read, write into workspaces, propose and
// coordinate; its proposals are copied into your repository as refs/proposals/<id>, where
// `ag-mcp proposals` shows and integrates them in your name.
import { mkdirSync, watch } from 'node:fs'
import type { FSWatcher } from 'node:fs'
import { join } from 'node:path'
import { localServeArgs } from './local-args.ts'
import type { LocalRequest } from './local-args.ts'
import { client, listProposals } from './local/api.ts'
import { agentIdentity, pruneIdentities, removeIdentity, writeIdentity } from './local/identity.ts'
import { LocalError, gitError } from './local/repo.ts'
import { holdServer } from './local/server.ts'
import type { PrivateServer } from './local/server.ts'
import { prepareLocal } from './local/setup.ts'
import type { LocalState } from './local/setup.ts'
import { syncBranchesIn, syncOut } from './local/sync.ts'
import { AGENT_SCOPES, agentPrincipal, grantAgent, mintToken, revokeOrphans, revokeToken } from './local/tokens.ts'
import type { Token } from './local/tokens.ts'

export { EMBEDDED_AG_SERVER } from './local/setup.ts'

export interface LocalIo {
  err(s: string): void
  cwd: string
}

/** Copies the server's refs out and publishes the open proposals; retried while another process does the same. */
async function refreshOut(s: LocalState, server: PrivateServer, token: Token): Promise<void> {
  const open = (await listProposals(client(server.url, token.file), s.repo, 'open')).map((p) => p.id)
  for (let attempt = 0; ; attempt++) {
    try {
      return await syncOut(s, open)
    } catch (e) {
      // Another session's copy holds a ref lock: the next try sees its result.
      if (attempt >= 3) throw e
      await new Promise((r) => setTimeout(r, 100 * (attempt + 1)))
    }
  }
}

/** Copies proposals and workspaces into your repository whenever the private server records one. */
function watchServerRefs(s: LocalState, sync: () => Promise<void>, log: (m: string) => void): FSWatcher[] {
  let pending: NodeJS.Timeout | undefined
  const fire = (): void => {
    if (pending) return
    pending = setTimeout(() => {
      pending = undefined
      sync().catch((e: Error) => log(`could not copy proposals into ${s.top}: ${e.message}`))
    }, 100)
  }
  const watchers: FSWatcher[] = []
  for (const sub of ['proposals', 'agwp']) {
    const dir = join(s.bare, 'refs', sub)
    mkdirSync(dir, { recursive: true })
    try {
      const w = watch(dir, { recursive: true }, fire)
      w.unref()
      watchers.push(w)
    } catch {
      // no watcher: the copy at the end of the session still happens
    }
  }
  return watchers
}

/**
 * Your branches become the server's again whenever your refs change (a commit, a checkout, a
 * branch deleted): its copies never point for long at commits your repository no longer has.
 */
function watchYourRefs(s: LocalState, log: (m: string) => void): FSWatcher[] {
  let pending: NodeJS.Timeout | undefined
  const fire = (): void => {
    if (pending) return
    pending = setTimeout(() => {
      pending = undefined
      try {
        syncBranchesIn(s)
      } catch (e) {
        log(`could not give the private server your branches: ${(e as Error).message}`)
      }
    }, 200)
  }
  const watchers: FSWatcher[] = []
  const add = (dir: string, o: { recursive: boolean }, only?: (f: string) => boolean): void => {
    try {
      const w = watch(dir, o, (_e, f) => {
        if (!only || (f !== null && only(String(f)))) fire()
      })
      w.unref()
      watchers.push(w)
    } catch {
      // not watchable here: every start and proposals command still syncs
    }
  }
  add(join(s.common, 'refs', 'heads'), { recursive: true })
  add(join(s.common, 'refs', 'tags'), { recursive: true })
  // packed-refs (a deleted or packed branch) and HEAD (a checkout) sit in the git directory itself.
  add(s.common, { recursive: false }, (f) => f === 'packed-refs' || f === 'HEAD')
  return watchers
}

/**
 * `ag-mcp --local [REPO] [flags]`: sets up the repository, holds its private ag-server (starting
 * it if no other session has), mints this session's token and serves MCP on stdio through it;
 * at the end (stdin EOF, SIGTERM) copies the proposals out, revokes the token and lets go of the
 * server. A session killed outright cannot clean up, but its hold on the server ends with it,
 * and the next session revokes its token.
 */
export async function runLocal(
  request: LocalRequest,
  env: NodeJS.ProcessEnv,
  serve: (argv: readonly string[], env: NodeJS.ProcessEnv) => Promise<number>,
  io: LocalIo,
): Promise<number> {
  // The flags were checked (local-args.ts) before anything here runs.
  const log = (m: string): void => io.err(`ag-mcp --local: ${m}`)
  let s: LocalState
  let server: PrivateServer | undefined
  let token: Token
  try {
    s = prepareLocal(request.repo, io.cwd, { create: true })
    const held = holdServer(s, {
      slot: true,
      onLost: (e, next) => {
        if (next) server = next
        log(
          e
            ? `the private ag-server stopped and could not be restarted: ${e.message}`
            : 'the private ag-server restarted',
        )
      },
    })
    // While the server starts: your branches become its branches.
    held.catch(() => undefined)
    const head = syncBranchesIn(s)
    server = await held
    const principal = agentPrincipal(server.slot)
    const live = await revokeOrphans(s, server)
    if (live) pruneIdentities(s, live)
    token = await mintToken(s, server, { principal, scopes: AGENT_SCOPES }, 12 * 3600)
    await grantAgent(s, server, principal, token)
    writeIdentity(s, token.id, agentIdentity(s.top, principal, request.agent))
    if (s.branch === undefined) log(`HEAD is detached in ${s.top}; the agent's default branch is ${head}`)
  } catch (e) {
    server?.stop()
    // A git that failed in your repository (damaged, unreadable) is said as git said it.
    const failedGit = !(e instanceof LocalError) && (e as { stderr?: unknown }).stderr !== undefined
    if (!(e instanceof LocalError) && !failedGit) throw e
    io.err(`ag-mcp --local: ${failedGit ? `git failed in ${io.cwd}: ${gitError(e)}` : (e as Error).message}`)
    return 2
  }
  // One copy at a time in this process; the first runs while ag-mcp starts serving.
  let chain: Promise<void> = Promise.resolve()
  const sync = (): Promise<void> => {
    const next = chain.then(() => refreshOut(s, server as PrivateServer, token))
    chain = next.catch(() => undefined)
    return next
  }
  const watchers = [...watchServerRefs(s, sync, log), ...watchYourRefs(s, log)]
  sync().catch((e: Error) => log(`could not copy proposals into ${s.top}: ${e.message}`))
  try {
    return await serve(
      localServeArgs(request, { top: s.top, cwd: io.cwd, upstream: server.url, tokenFile: token.file }),
      env,
    )
  } finally {
    for (const w of watchers) w.close()
    await sync().catch((e: Error) => log(`could not copy proposals into ${s.top}: ${e.message}`))
    removeIdentity(s, token.id)
    await revokeToken(s, server, token)
    server.stop()
  }
}
