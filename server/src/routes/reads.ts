import { invalid, notFound } from '../errors.ts'
import { commitDetail, diff, encodeContent, listDir, log } from '../gitread.ts'
import { search } from '../search.ts'
import { checkReadPath } from '../paths.ts'
import { page, parseLimit } from '../util.ts'
import type { Router, Req } from '../router.ts'
import { q, readableRepo } from './params.ts'

// Reading a repository at a commit: history, files and trees, diffs, search.

function pathsParam(r: Req): string[] {
  return r.query
    .getAll('path')
    .filter((p) => p !== '')
    .map((p) => checkReadPath(p))
}

export function registerReadRoutes(router: Router): void {
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
}

/** A directory listing or a file at `ref` (default: the default branch); /file and /tree answer with it. */
async function readPath(r: Req): Promise<Record<string, unknown>> {
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
