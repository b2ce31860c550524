import type { Ctx } from './context.ts'
import type { Op } from './state.ts'
import type { Repo } from './repos.ts'
import type { IntentRec } from './types.ts'
import { nowIso } from './util.ts'
import { settleRepository } from './refs.ts'

// Crash-consistent ref updates. A ref move (git) and the record of it (journal) are two
// writes; a crash between them must not leave the branch holding a merge the store
// says never happened. So: (1) journal an intent (fsync'd), (2) compare-and-swap the
// ref, (3) journal the record and drop the intent in one line. At start-up every intent
// still pending is settled by looking at the ref: moved -> the record is applied; not
// moved -> the intent is dropped. Either way store and repository agree.

const keyOf = (repo: string, ref: string): string => `${repo}:${ref}`

/**
 * CAS `ref` from `expected` to `next` under a journaled intent. `complete` builds the ops
 * that record the update; it is called once before the update (the copy kept in the
 * intent, for recovery) and again after it succeeds (so the ops see the latest state).
 * Returns false, with nothing recorded, when the ref no longer holds `expected`.
 */
export async function casWithIntent(
  ctx: Ctx,
  repo: Repo,
  ref: string,
  next: string,
  expected: string | null,
  accept: IntentRec['accept'],
  complete: () => Op[],
): Promise<boolean> {
  const k = keyOf(repo.name, ref)
  const intent: IntentRec = { repo: repo.name, ref, expected, next, accept, ops: complete(), created_at: nowIso() }
  ctx.store.commit([{ c: 'intents', k, v: intent }])
  // The intent must be on disk before the ref moves (group commit defers the fsync).
  await ctx.store.flush()
  let moved: boolean
  try {
    moved = await repo.casRef(ref, next, expected)
  } catch (e) {
    // The update-ref process failed in an unknown way: the ref itself says what happened.
    moved = (await repo.refValue(ref).catch(() => undefined)) === next
    if (!moved) {
      ctx.store.commit([{ c: 'intents', k, v: null }])
      throw e
    }
  }
  ctx.store.commit(moved ? [...complete(), { c: 'intents', k, v: null }] : [{ c: 'intents', k, v: null }])
  return moved
}

/** Settle the intents a crash left behind; run before the server accepts requests. */
export async function reconcileIntents(
  ctx: Ctx,
  log: (m: string) => void = () => undefined,
): Promise<{ completed: string[]; dropped: string[] }> {
  const completed: string[] = []
  const dropped: string[] = []
  for (const [k, it] of ctx.store.entries('intents')) {
    let happened = false
    if (ctx.repos.exists(it.repo)) {
      const repo = ctx.repos.get(it.repo)
      const cur = await repo.refValue(it.ref)
      happened = cur === it.next || (it.accept === 'contains' && cur !== null && (await repo.isAncestor(it.next, cur)))
    }
    ctx.store.commit(happened ? [...(it.ops as Op[]), { c: 'intents', k, v: null }] : [{ c: 'intents', k, v: null }])
    ;(happened ? completed : dropped).push(k)
    log(
      `ag-server: ${happened ? 'completed' : 'dropped'} pending update of ${it.ref} in ${it.repo} (${it.next.slice(0, 12)})`,
    )
  }
  return { completed, dropped }
}

/**
 * Everything start-up settles before the first request: pending intents first (they
 * read refs), then what killed processes left in the repositories (stale `.lock` files
 * that would refuse every later update of their ref, temporary object files).
 */
export async function settleAtStartup(ctx: Ctx, log: (m: string) => void = () => undefined): Promise<void> {
  await reconcileIntents(ctx, log)
  await ctx.store.flush()
  for (const name of ctx.repos.names()) {
    const removed = settleRepository(ctx.repos.dirOf(name))
    if (removed.length)
      log(
        `ag-server: removed ${removed.length} file(s) a killed process left in ${name}: ${removed.slice(0, 10).join(', ')}`,
      )
  }
}
