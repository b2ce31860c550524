import http from 'node:http'
import { AgwpError } from './errors.ts'
import { notOwner, type Ownership } from './owners.ts'
import type { StateReader } from './state.ts'

// A request for a repository another instance owns is proxied to it whole (method, path,
// headers with Authorization, body) and its answer streamed back unchanged: the client never
// sees a redirect (ag-mcp follows none: its token would travel with it). The hop header
// marks a forwarded request; one that carries it is never forwarded again, so two instances
// that disagree about an owner answer 503 instead of passing a request back and forth.

export const FORWARDED_BY = 'agwp-forwarded-by'

/** Routes whose first segment is an object id of a collection with a `repo` field. */
const BY_ID: Readonly<Record<string, 'workspaces' | 'proposals' | 'tasks' | 'runs' | 'leases'>> = {
  workspaces: 'workspaces',
  proposals: 'proposals',
  tasks: 'tasks',
  runs: 'runs',
  leases: 'leases',
}

/**
 * The repository a request acts on: the path's {repo}, else the AGWP-Repo header, else the
 * repository of the object the path names by id (/proposals/{id}/…). undefined: none (token
 * admin, the repository list), served by whichever instance it reaches.
 */
export async function requestRepo(
  state: StateReader,
  rel: string,
  params: Record<string, string>,
  repoHeader: string | undefined,
): Promise<string | undefined> {
  if (params['repo'] !== undefined) return params['repo']
  if (repoHeader) return repoHeader
  const collection = BY_ID[rel.split('/')[1] ?? '']
  const id = params['id']
  if (collection === undefined || id === undefined) return undefined
  return (await state.get(collection, id))?.repo
}

// One pool of kept-alive connections to the other instances.
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 })

/** Headers that describe one connection, not the request (RFC 9110 §7.6.1). */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'upgrade'])

/**
 * Serve the request here (false), or answer it by forwarding it to repo's owner (true). A
 * request already forwarded once, for a repository this instance does not own, is refused
 * with 503 `not_owner`.
 */
export async function forwardIfElsewhere(
  owners: Ownership,
  repo: string,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<boolean> {
  const placed = await owners.place(repo)
  if (placed.serve) return false
  if (req.headers[FORWARDED_BY] !== undefined)
    throw notOwner(
      `instance ${owners.instance} does not own repository '${repo}' (instance ${placed.owner} does) and will not forward a request already forwarded by ${String(req.headers[FORWARDED_BY])}`,
      owners.leaseMs,
      { repo, owner: placed.owner },
    )
  if (placed.url === '')
    throw notOwner(`the owner of repository '${repo}' (${placed.owner}) has no address`, owners.leaseMs, { repo })
  await proxy(owners, repo, placed, req, res)
  return true
}

function proxy(
  owners: Ownership,
  repo: string,
  placed: { owner: string; url: string },
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<void> {
  const target = new URL(req.url ?? '/', placed.url)
  const headers: http.OutgoingHttpHeaders = {}
  for (const [k, v] of Object.entries(req.headers)) if (!HOP_BY_HOP.has(k) && v !== undefined) headers[k] = v
  headers['host'] = target.host
  headers[FORWARDED_BY] = owners.instance
  return new Promise<void>((resolve, reject) => {
    // A stopped owner (SIGSTOP, a frozen VM) accepts the connection and never answers: while
    // no answer has come, watch its heartbeat, and give up once its lease is out (a live owner
    // busy with a long request is waited for).
    let stopped = false
    const watch = setInterval(
      () =>
        void owners.ownerAlive(repo, placed.owner).then(
          (alive) => {
            if (alive || res.headersSent) return
            stopped = true
            up.destroy()
          },
          () => undefined,
        ),
      Math.max(100, Math.floor(owners.leaseMs / 3)),
    )
    const up = http.request(target, { method: req.method ?? 'GET', headers, agent }, (answer) => {
      clearInterval(watch)
      const out: http.OutgoingHttpHeaders = {}
      for (const [k, v] of Object.entries(answer.headers)) if (!HOP_BY_HOP.has(k) && v !== undefined) out[k] = v
      res.writeHead(answer.statusCode ?? 502, out)
      answer.pipe(res)
      answer.once('end', () => resolve())
      answer.once('error', reject)
      res.once('close', () => {
        answer.destroy()
        resolve()
      })
    })
    up.once('error', (e) => {
      clearInterval(watch)
      if (res.headersSent) {
        res.destroy(e)
        resolve()
        return
      }
      // Unreachable: once its lease is out, the next request takes the repository over.
      reject(
        notOwner(
          `the instance that owns repository '${repo}' (${placed.owner} at ${placed.url}) ${stopped ? 'stopped answering and heartbeating' : `cannot be reached (${(e as NodeJS.ErrnoException).code ?? e.message})`}; retry after its lease`,
          owners.leaseMs,
          { repo, owner: placed.owner },
        ),
      )
    })
    // The client went away: so does the forwarded request.
    req.once('aborted', () => up.destroy(new AgwpError('bad_request', 'the client closed the request')))
    req.pipe(up)
  })
}
