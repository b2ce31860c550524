// Who local mode's commits are by. The private server writes every commit itself; for a token
// it reads the identity from <bare repo>/agwp-identities/<token id>.json (server/src/repos.ts),
// which the process that minted the token writes here and removes when it revokes it:
//  - your integrations: you, as git resolves you (GIT_AUTHOR_*/GIT_COMMITTER_* in the
//    environment, then the repository's config, then your global config: `git var`);
//  - an agent's proposals: an identity that says it is an agent, "<name> (agent) <email>",
//    from --agent-name/--agent-email, else git config ag-mcp.agentName/ag-mcp.agentEmail,
//    else "ag-mcp (agent) <local@agent.agwp.invalid>" (the email names the session's principal).
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { LocalError, git } from './repo.ts'
import type { LocalState } from './setup.ts'

export interface Ident {
  name: string
  email: string
}

export interface Identity {
  author: Ident
  committer: Ident
}

const IDENTITIES = 'agwp-identities'

/** "Name <email> 1700000000 +0000" → { name, email }. */
function parseIdent(line: string): Ident | undefined {
  const m = /^(.*?)\s*<([^<>]*)>/.exec(line)
  return m?.[1] && m[2] !== undefined ? { name: m[1], email: m[2] } : undefined
}

/** You, as git would sign a commit you make in `top`; a LocalError with the fix if git cannot. */
export function personIdentity(top: string): Identity {
  const read = (what: 'GIT_AUTHOR_IDENT' | 'GIT_COMMITTER_IDENT'): Ident => {
    let line: string
    try {
      line = git(top, ['var', what])
    } catch {
      line = ''
    }
    const id = parseIdent(line)
    if (!id)
      throw new LocalError(
        `git does not know who you are, and integrating makes a commit in your name: run git config user.name "Your Name" and git config user.email you@example.com in ${top} (add --global for every repository), or set GIT_AUTHOR_NAME and GIT_AUTHOR_EMAIL`,
      )
    return id
  }
  return { author: read('GIT_AUTHOR_IDENT'), committer: read('GIT_COMMITTER_IDENT') }
}

/** ag-mcp.agentName and ag-mcp.agentEmail from git config (the repository's, then yours), in one git run. */
function agentConfig(top: string): { name?: string; email?: string } {
  let text = ''
  try {
    text = git(top, ['config', '--null', '--get-regexp', '^ag-mcp\\.agent(name|email)$'])
  } catch {
    return {} // neither is set
  }
  const out: { name?: string; email?: string } = {}
  for (const entry of text.split('\0')) {
    const nl = entry.indexOf('\n')
    const key = entry.slice(0, nl).toLowerCase()
    if (key === 'ag-mcp.agentname') out.name = entry.slice(nl + 1)
    else if (key === 'ag-mcp.agentemail') out.email = entry.slice(nl + 1)
  }
  return out
}

/** The agent's identity for a session whose principal is `principal` (agent:<name>). */
export function agentIdentity(
  top: string,
  principal: string,
  flags: { name?: string | undefined; email?: string | undefined },
): Identity {
  const config = flags.name !== undefined && flags.email !== undefined ? {} : agentConfig(top)
  const name = flags.name ?? config.name ?? 'ag-mcp'
  const email = flags.email ?? config.email ?? `${principal.replace(/^agent:/, '')}@agent.agwp.invalid`
  if (/[<>\n]/.test(name) || /[<>\n]/.test(email))
    throw new LocalError(`the agent's name and email cannot contain <, > or a line break (got "${name} <${email}>")`)
  // It says it is an agent, once.
  const ident = { name: /\bagent\b/i.test(name) ? name : `${name} (agent)`, email }
  return { author: ident, committer: ident }
}

/** Gives the token `tokenId` this identity in the private server's repository. */
export function writeIdentity(s: Pick<LocalState, 'bare'>, tokenId: string, id: Identity): void {
  const dir = join(s.bare, IDENTITIES)
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, `${tokenId}.json`), `${JSON.stringify(id)}\n`)
}

export function removeIdentity(s: Pick<LocalState, 'bare'>, tokenId: string): void {
  rmSync(join(s.bare, IDENTITIES, `${tokenId}.json`), { force: true })
}

/** Removes the identities of tokens that are no longer live. */
export function pruneIdentities(s: Pick<LocalState, 'bare'>, live: Set<string>): void {
  let files: string[]
  try {
    files = readdirSync(join(s.bare, IDENTITIES))
  } catch {
    return
  }
  for (const f of files) if (f.endsWith('.json') && !live.has(f.slice(0, -5))) removeIdentity(s, f.slice(0, -5))
}
