import type { Router, Req } from './router.ts'
import { authorize, policyOf, roleOf, tokenCoversRepo } from './auth.ts'
import { invalid, notFound } from './errors.ts'
import { commitDetail, diff, encodeContent, listDir, log } from './gitread.ts'
import { search } from './search.ts'
import { checkReadPath, checkRepoName } from './paths.ts'
import { page, parseLimit } from './util.ts'
import * as ws from './workspaces.ts'
import * as pr from './proposals.ts'
import * as rv from './reviews.ts'
import { integrate } from './integrate.ts'
import * as co from './coordination.ts'
import type { Ctx } from './context.ts'
import type { Caller } from './auth.ts'
import type { Repo } from './repos.ts'
import type { RunRec } from './types.ts'

// The AGWP v1 agent-facing endpoints. Each handler: authorize, call one service, shape.

const q = (r: Req, k: string): string | undefined => r.query.get(k) ?? undefined

async function readableRepo(ctx: Ctx, caller: Caller, name: string): Promise<Repo> {
  checkRepoName(name)
  await authorize(ctx.state, caller, 'read', name, 'reader')
  return ctx.repos.get(name)
}

function pathsParam(r: Req): string[] {
  return r.query
    .getAll('path')
    .filter((p) => p !== '')
    .map((p) => checkReadPath(p))
}

export function registerRoutes(router: Router): void {
  router.add('GET', '/whoami', async ({ ctx, caller }) => {
    const repos = caller.token.repos.includes('*') ? ctx.repos.names() : caller.token.repos
    const roles: Record<string, string> = {}
    for (const n of repos) {
      const role = await roleOf(ctx.state, n, caller.principal)
      if (role) roles[n] = role
    }
    const body: Record<string, unknown> = {
      principal: caller.principal,
      kind: caller.kind,
      actor: caller.actor,
      scopes: caller.token.scopes,
      repos: caller.token.repos,
      expires_at: caller.token.expires_at,
      roles,
    }
    if (caller.run) body['run_id'] = caller.run.run_id
    return { body }
  })

  router.add('GET', '/repos', async ({ ctx, caller }) => {
    const names: string[] = []
    for (const n of ctx.repos.names())
      if (
        (caller.repoScope === undefined || n === caller.repoScope) &&
        tokenCoversRepo(caller.token, n) &&
        (await roleOf(ctx.state, n, caller.principal)) !== null
      )
        names.push(n)
    const repos = await Promise.all(
      names.map(async (n) => ({
        name: n,
        default_branch: await ctx.repos.get(n).defaultBranch(),
        role: await roleOf(ctx.state, n, caller.principal),
      })),
    )
    return { body: { repos } }
  })

  router.add('GET', '/repos/:repo', async ({ ctx, caller, params }) => {
    const repo = await readableRepo(ctx, caller, params['repo'] ?? '')
    const def = await repo.defaultBranch()
    return {
      body: {
        name: repo.name,
        default_branch: def,
        head: await repo.branchHead(def),
        branches: await repo.branches(),
        role: await roleOf(ctx.state, repo.name, caller.principal),
        policy: await policyOf(ctx.state, repo.name),
      },
    }
  })

  router.add('GET', '/repos/:repo/log', async (r) => {
    const repo = await readableRepo(r.ctx, r.caller, r.params['repo'] ?? '')
    const p = q(r, 'path')
    const ref = q(r, 'ref') ?? (await repo.defaultBranch())
    return {
      body: await log(repo, ref, p ? checkReadPath(p) : undefined, parseLimit(q(r, 'limit'), 50, 500), q(r, 'cursor')),
    }
  })

  router.add('GET', '/repos/:repo/commits/:id', async (r) => {
    const repo = await readableRepo(r.ctx, r.caller, r.params['repo'] ?? '')
    return { body: await commitDetail(repo, r.params['id'] ?? '') }
  })

  const readPath = async (r: Req): Promise<Record<string, unknown>> => {
    const repo = await readableRepo(r.ctx, r.caller, r.params['repo'] ?? '')
    const commit = await repo.resolve(q(r, 'ref') ?? (await repo.defaultBranch()))
    const p = checkReadPath(q(r, 'path') ?? '', 'path', true)
    const entries = await listDir(repo, commit, p)
    if (entries) {
      const pg = page(entries, q(r, 'cursor'), parseLimit(q(r, 'limit'), 1000, 5000))
      return {
        kind: 'dir',
        path: p,
        commit,
        entries: pg.items,
        ...(pg.next_cursor ? { next_cursor: pg.next_cursor } : {}),
      }
    }
    // The path is walked through the parsed-tree cache; only the blob itself is fetched.
    const it = await repo.entryAt(commit, p)
    if (it?.mode === '160000')
      throw notFound(
        `'${p}' is a submodule (commit ${it.oid.slice(0, 12)}): its files live in its own repository, not in this one`,
        { path: p, commit, submodule: it.oid },
      )
    const o = it ? await repo.object(it.oid) : null
    if (!o || o.type !== 'blob') throw notFound(`'${p}' does not exist at ${commit.slice(0, 12)}`, { path: p, commit })
    return {
      kind: 'file',
      path: p,
      commit,
      blob: o.oid,
      size: o.size,
      ...encodeContent(o.data, r.ctx.limits.maxFileBytes),
    }
  }
  router.add('GET', '/repos/:repo/file', async (r) => ({ body: await readPath(r) }))
  router.add('GET', '/repos/:repo/tree', async (r) => {
    const out = await readPath(r)
    if (out['kind'] !== 'dir') throw invalid(`'${String(out['path'])}' is a file; use /file`, { path: out['path'] })
    return { body: out }
  })

  router.add('GET', '/repos/:repo/diff', async (r) => {
    const repo = await readableRepo(r.ctx, r.caller, r.params['repo'] ?? '')
    const baseRef = q(r, 'base')
    const headRef = q(r, 'head')
    if (!baseRef || !headRef) throw invalid('base and head are required', { field: baseRef ? 'head' : 'base' })
    const base = await repo.resolve(baseRef, 'base')
    const head = await repo.resolve(headRef, 'head')
    return { body: { base, head, ...(await diff(repo, base, head, pathsParam(r), r.ctx.limits.maxPatchBytes)) } }
  })

  router.add('GET', '/repos/:repo/search', async (r) => {
    const repo = await readableRepo(r.ctx, r.caller, r.params['repo'] ?? '')
    const text = q(r, 'q')
    if (!text || text.length > 1000 || text.includes('\0') || text.includes('\n'))
      throw invalid('q is required (one line, at most 1000 characters)', { field: 'q' })
    const commit = await repo.resolve(q(r, 'ref') ?? (await repo.defaultBranch()))
    return {
      body: { commit, ...(await search(repo, commit, text, pathsParam(r), parseLimit(q(r, 'limit'), 100, 1000))) },
    }
  })

  // workspaces
  router.add(
    'POST',
    '/repos/:repo/workspaces',
    async (r) => {
      checkRepoName(r.params['repo'])
      const b = r.body as { base?: string }
      return {
        status: 201,
        body: ws.viewWorkspace(await ws.createWorkspace(r.ctx, r.caller, r.params['repo'] ?? '', b.base)),
      }
    },
    'WorkspaceCreateRequest',
  )
  router.add('GET', '/workspaces/:id', async (r) => ({
    body: ws.viewWorkspace(await ws.getWorkspace(r.ctx, r.caller, r.params['id'] ?? '', false)),
  }))
  router.add('GET', '/workspaces/:id/file', async (r) => ({
    body: await ws.readWorkspacePath(r.ctx, r.caller, r.params['id'] ?? '', q(r, 'path')),
  }))
  router.add(
    'PUT',
    '/workspaces/:id/files',
    async (r) => ({
      body: await ws.writeFile(r.ctx, r.caller, r.params['id'] ?? '', r.body as Parameters<typeof ws.writeFile>[3]),
    }),
    'WorkspaceFileWriteRequest',
  )
  router.add('DELETE', '/workspaces/:id/files', async (r) => ({
    body: await ws.deleteFile(r.ctx, r.caller, r.params['id'] ?? '', q(r, 'path'), q(r, 'if_match')),
  }))
  router.add(
    'POST',
    '/workspaces/:id/moves',
    async (r) => ({
      body: await ws.moveFile(r.ctx, r.caller, r.params['id'] ?? '', r.body as Parameters<typeof ws.moveFile>[3]),
    }),
    'WorkspaceMoveRequest',
  )
  router.add('GET', '/workspaces/:id/diff', async (r) => ({
    body: await ws.workspaceDiff(r.ctx, r.caller, r.params['id'] ?? ''),
  }))
  router.add('DELETE', '/workspaces/:id', async (r) => ({
    body: await ws.discardWorkspace(r.ctx, r.caller, r.params['id'] ?? ''),
  }))

  // proposals
  router.add(
    'POST',
    '/workspaces/:id/proposals',
    async (r) => {
      const p = await pr.createProposal(
        r.ctx,
        r.caller,
        r.params['id'] ?? '',
        r.body as Parameters<typeof pr.createProposal>[3],
      )
      return { status: 201, body: await rv.evaluate(r.ctx, p) }
    },
    'ProposalCreateRequest',
  )
  router.add('GET', '/repos/:repo/proposals', async (r) => {
    checkRepoName(r.params['repo'])
    const limit = parseLimit(q(r, 'limit'), 50, 500)
    const pg = await pr.listProposals(r.ctx, r.caller, r.params['repo'] ?? '', q(r, 'state'), q(r, 'cursor'), limit)
    return { body: { proposals: pg.items.map(pr.summary), ...(pg.next_cursor ? { next_cursor: pg.next_cursor } : {}) } }
  })
  router.add('GET', '/proposals/:id', async (r) => ({
    body: await rv.evaluate(r.ctx, await pr.getProposal(r.ctx, r.caller, r.params['id'] ?? '')),
  }))
  router.add('GET', '/proposals/:id/diff', async (r) => ({
    body: await rv.proposalDiff(r.ctx, r.caller, r.params['id'] ?? ''),
  }))
  router.add(
    'POST',
    '/proposals/:id/revisions',
    async (r) => ({
      body: await rv.evaluate(
        r.ctx,
        await pr.reviseProposal(r.ctx, r.caller, r.params['id'] ?? '', r.body as { workspace: string }),
      ),
    }),
    'ProposalRevisionRequest',
  )
  router.add(
    'POST',
    '/proposals/:id/withdraw',
    async (r) => ({
      body: await rv.evaluate(
        r.ctx,
        await pr.withdrawProposal(r.ctx, r.caller, r.params['id'] ?? '', (r.body as { reason?: string }).reason),
      ),
    }),
    'ProposalWithdrawRequest',
  )
  router.add(
    'POST',
    '/proposals/:id/reviews',
    async (r) => ({
      status: 201,
      body: rv.viewReview(
        await rv.createReview(r.ctx, r.caller, r.params['id'] ?? '', r.body as Parameters<typeof rv.createReview>[3]),
      ),
    }),
    'ReviewCreateRequest',
  )
  router.add(
    'POST',
    '/proposals/:id/provenance',
    async (r) => ({
      body: await rv.evaluate(
        r.ctx,
        await pr.attachProvenance(
          r.ctx,
          r.caller,
          r.params['id'] ?? '',
          r.body as Parameters<typeof pr.attachProvenance>[3],
        ),
      ),
    }),
    'ProvenanceAttachRequest',
  )
  router.add(
    'POST',
    '/proposals/:id/integrate',
    async (r) => ({
      body: await integrate(r.ctx, r.caller, r.params['id'] ?? '', r.body as Parameters<typeof integrate>[3]),
    }),
    'IntegrateRequest',
  )

  // coordination
  router.add('GET', '/repos/:repo/tasks', async (r) => {
    checkRepoName(r.params['repo'])
    const now = await r.ctx.state.now()
    const list = await co.listTasks(r.ctx, r.caller, r.params['repo'] ?? '', q(r, 'state'), now)
    const pg = page(list, q(r, 'cursor'), parseLimit(q(r, 'limit'), 50, 500))
    return {
      body: {
        tasks: await Promise.all(pg.items.map((t) => co.viewTask(r.ctx, t, now))),
        ...(pg.next_cursor ? { next_cursor: pg.next_cursor } : {}),
      },
    }
  })
  router.add('GET', '/tasks/:id', async (r) => ({
    body: await co.viewTask(r.ctx, await co.getTask(r.ctx, r.caller, r.params['id'] ?? ''), await r.ctx.state.now()),
  }))
  const runView = ({ run, now }: { run: RunRec; now: Date }): Record<string, unknown> => co.viewRun(run, now)
  router.add(
    'POST',
    '/tasks/:id/claim',
    async (r) => ({
      status: 201,
      body: runView(await co.claimTask(r.ctx, r.caller, r.params['id'] ?? '', (r.body as { ttl_s?: number }).ttl_s)),
    }),
    'TaskClaimRequest',
  )
  router.add('GET', '/runs/:id', async (r) => ({
    body: co.viewRun(await co.getRun(r.ctx, r.caller, r.params['id'] ?? ''), await r.ctx.state.now()),
  }))
  router.add(
    'POST',
    '/runs/:id/heartbeat',
    async (r) => ({
      body: runView(await co.heartbeat(r.ctx, r.caller, r.params['id'] ?? '', (r.body as { ttl_s?: number }).ttl_s)),
    }),
    'RunHeartbeatRequest',
  )
  router.add(
    'POST',
    '/runs/:id/notes',
    async (r) => ({
      status: 201,
      body: await co.addNote(r.ctx, r.caller, r.params['id'] ?? '', (r.body as { body: string }).body),
    }),
    'RunNoteRequest',
  )
  router.add(
    'POST',
    '/runs/:id/release',
    async (r) => {
      const b = r.body as { outcome: 'done' | 'blocked' | 'abandoned'; note?: string }
      return { body: runView(await co.releaseRun(r.ctx, r.caller, r.params['id'] ?? '', b.outcome, b.note)) }
    },
    'RunReleaseRequest',
  )
  router.add('GET', '/repos/:repo/leases', async (r) => {
    checkRepoName(r.params['repo'])
    const list = await co.listLeases(r.ctx, r.caller, r.params['repo'] ?? '')
    const pg = page(list, q(r, 'cursor'), parseLimit(q(r, 'limit'), 100, 1000))
    return { body: { leases: pg.items.map(co.viewLease), ...(pg.next_cursor ? { next_cursor: pg.next_cursor } : {}) } }
  })
  router.add(
    'POST',
    '/repos/:repo/leases',
    async (r) => {
      checkRepoName(r.params['repo'])
      const b = r.body as { paths: string[]; ttl_s?: number }
      return {
        status: 201,
        body: co.viewLease(await co.acquireLease(r.ctx, r.caller, r.params['repo'] ?? '', b.paths, b.ttl_s)),
      }
    },
    'LeaseCreateRequest',
  )
  router.add('DELETE', '/leases/:id', async (r) => {
    await co.releaseLease(r.ctx, r.caller, r.params['id'] ?? '')
    return { body: { ok: true } }
  })
}
