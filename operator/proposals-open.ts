// `ag-mcp proposals open [--browser]`: the review page of your repository's private ag-server. It
// reuses the server of a running local session, or starts one and serves until Ctrl-C; mints a
// token for human:owner (its 0600 file is removed as soon as it is read back; it lives the
// session's 8 hours at most), trades it with the server for a one-time sign-in link and prints
// that loopback URL. The link's secret
// rides in the fragment (no request or log carries it), is good for one sign-in within two
// minutes, and becomes an HttpOnly session cookie; a long-lived token never appears in a URL.
import { spawn } from 'node:child_process'
import { readFileSync, rmSync } from 'node:fs'
import { closest } from '../lib/closest.ts'
import { LocalError } from './local/repo.ts'
import { holdServer, listHolders } from './local/server.ts'
import { prepareLocal } from './local/setup.ts'
import { OWNER, grantOwner, mintToken, revokeToken } from './local/tokens.ts'
import type { Token } from './local/tokens.ts'

export interface OpenIo {
  out(s: string): void
  err(s: string): void
  cwd: string
}

/** As long as a review-page session lasts (ag-server serve --ui-session-ttl, default 8h). */
const SESSION_S = 8 * 3600

const USAGE = 'usage: ag-mcp proposals open [--browser] [--repo-dir PATH]'

function parse(argv: readonly string[]): { browser: boolean; repoDir: string | undefined } {
  let browser = false
  let repoDir: string | undefined
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string
    if (a === '--browser') browser = true
    else if (a === '--repo-dir' && argv[i + 1] !== undefined) repoDir = argv[++i]
    else {
      const near = a.startsWith('--') ? closest(a.slice(2), ['browser', 'repo-dir']) : undefined
      throw new LocalError(`proposals open: unexpected ${a}${near ? ` (did you mean --${near}?)` : ''}\n${USAGE}`)
    }
  }
  return { browser, repoDir }
}

/** Opens the URL in the desktop's browser; a machine without one only misses the convenience. */
function openInBrowser(url: string, io: OpenIo): void {
  const [cmd, ...args] =
    process.platform === 'darwin'
      ? ['open', url]
      : process.platform === 'win32'
        ? ['cmd', '/c', 'start', '', url]
        : ['xdg-open', url]
  const child = spawn(cmd as string, args, { stdio: 'ignore', detached: true })
  child.once('error', (e) =>
    io.err(`ag-mcp proposals open: could not start a browser (${e.message}); open the URL yourself`),
  )
  child.unref()
}

export async function openReview(argv: readonly string[], io: OpenIo): Promise<number> {
  let o: ReturnType<typeof parse>
  let s: ReturnType<typeof prepareLocal>
  try {
    o = parse(argv)
    s = prepareLocal(o.repoDir, io.cwd, { create: false })
  } catch (e) {
    if (!(e instanceof LocalError)) throw e
    io.err(`ag-mcp ${e.message}`)
    return 2
  }
  const server = await holdServer(s, { slot: false })
  let token: Token | undefined
  try {
    await grantOwner(s, server)
    token = await mintToken(s, server, OWNER, SESSION_S)
    const secret = readFileSync(token.file, 'utf8').trim()
    // Only the server keeps it from here (by its hash); the session is bound to it.
    rmSync(token.file, { force: true })
    const res = await fetch(`${server.url}/ui/api/links`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}` },
      redirect: 'error',
    })
    const body = (await res.json().catch(() => ({}))) as { path?: string; error?: { message?: string } }
    if (!res.ok || typeof body.path !== 'string')
      throw new LocalError(
        res.status === 404
          ? 'the running local session’s server has no review page (an older ag-mcp started it): end that session and run this again'
          : `the private ag-server refused a sign-in link: ${body.error?.message ?? res.status}`,
      )
    const url = `${server.url}${body.path}`
    io.out(`review page: ${url}`)
    io.out('  (a one-time link: it signs you in as human:owner once, within 2 minutes; your session lasts 8 hours)')
    if (o.browser) openInBrowser(url, io)
  } catch (e) {
    if (token) await revokeToken(s, server, token)
    server.stop()
    io.err(`ag-mcp proposals open: ${(e as Error).message}`)
    return 1
  }
  // A local session holds the server too: the page stays with it, and the token expires with the
  // page's session. Alone, this process holds the server until Ctrl-C.
  if (((await listHolders(s)) ?? []).some((h) => h.slot !== undefined)) {
    server.stop()
    return 0
  }
  io.out('serving the review page until Ctrl-C')
  // The hold on the server is an unref'd socket: this timer keeps the process (and so the hold).
  const alive = setInterval(() => undefined, 2 ** 30)
  await new Promise<void>((done) => {
    process.once('SIGINT', done)
    process.once('SIGTERM', done)
  })
  clearInterval(alive)
  await revokeToken(s, server, token)
  server.stop()
  return 0
}
