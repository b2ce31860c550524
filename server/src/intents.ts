import type { Ctx } from './context.ts'
import type { Op, Tx } from './state.ts'
import type { Repo } from './repos.ts'
import type { IntentRec } from './types.ts'
import { settleRepository } from './refs.ts'

// Crash-consistent ref updates. A ref move (git) and the record of it (journal) are two
// writes; a crash between them must not leave the branch holding a merge the store
// says never happened. So: (1) journal an intent (fsync'd), (2) compare-and-swap the
// ref, (3) journal the record and drop the intent in one line. At start-up every intent
// still pending is settled by looking at the ref: moved -> the record is applied; not
// moved -> the intent is dropped. Either way store and repository agree.

const keyOf = (repo: string, ref: string): string => `${repo}:${ref}`

/**
 * CAS `ref` from `expected` to `next` under a journaled intent, inside the transaction t
 * that decided the update (holding the repository's lock). The intent is committed on its
 * own and made durable before the ref moves; the record of the update (`complete()`, built
 * again after the move so it sees the latest state) and the intent's removal are queued on
 * t, so they commit with t's other writes. Returns false, with the intent removed and
 * nothing else recorded, when the ref no longer holds `expected`.
 */
export async function casWithIntent(
  ctx: Ctx,
  t: Tx,
  repo: Repo,
  ref: string,
  next: string,
  expected: string | null,
  accept: IntentRec['accept'],
  complete: () => Op[],
): Promise<boolean> {
  // Before anything is written, the intent too: an instance that lost the repository writes nothing.
  await ctx.owners?.fence(t, repo.name)
  const k = keyOf(repo.name, ref)
  const intent: IntentRec = {
    repo: repo.name,
    ref,
    expected,
    next,
    accept,
    ops: complete(),
    created_at: t.now.toISOString(),
  }
  // Its own transaction: the intent must be on disk before the ref moves, whatever t does.
  await ctx.state.commit([], [{ c: 'intents', k, v: intent }])
  await ctx.state.flush()
  const drop = (): Promise<void> => ctx.state.commit([], [{ c: 'intents', k, v: null }])
  let moved: boolean
  try {
    moved = await repo.casRef(ref, next, expected)
  } catch (e) {
    // The update-ref process failed in an unknown way: the ref itself says what happened.
    moved = (await repo.refValue(ref).catch(() => undefined)) === next
    if (!moved) {
      await drop()
      throw e
    }
  }
  if (!moved) {
    await drop()
    return false
  }
  // If t's commit fails now, the intent stays and start-up completes it from the ref.
  t.write(...complete(), { c: 'intents', k, v: null })
  return true
}

/**
 * Settle the intents a crash left behind (only those of repository `only`, when given); run
 * before the server, or the repository's new owner, serves them.
 */
export async function reconcileIntents(
  ctx: Ctx,
  log: (m: string) => void = () => undefined,
  only?: string,
): Promise<{ completed: string[]; dropped: string[] }> {
  const completed: string[] = []
  const dropped: string[] = []
  for (const [k, it] of await ctx.state.entries('intents')) {
    if (only !== undefined && it.repo !== only) continue
    let happened = false
    if (ctx.repos.exists(it.repo)) {
      const repo = ctx.repos.get(it.repo)
      const cur = await repo.refValue(it.ref)
      happened = cur === it.next || (it.accept === 'contains' && cur !== null && (await repo.isAncestor(it.next, cur)))
    }
    await ctx.state.commit([`repo:${it.repo}`], [...(happened ? (it.ops as Op[]) : []), { c: 'intents', k, v: null }])
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
  await ctx.state.flush()
  for (const name of ctx.repos.names()) settleLocks(ctx, name, log)
}

/**
 * What a repository's new owner settles before serving it (several instances): the previous
 * owner's pending intents, then the lock files it left. Only the owner writes a repository,
 * and the previous one is fenced, so no live writer's lock is removed but a fenced one's.
 */
export async function settleForOwner(ctx: Ctx, repo: string, log: (m: string) => void): Promise<void> {
  await reconcileIntents(ctx, log, repo)
  if (ctx.repos.exists(repo)) settleLocks(ctx, repo, log)
}

function settleLocks(ctx: Ctx, name: string, log: (m: string) => void): void {
  const removed = settleRepository(ctx.repos.dirOf(name))
  if (removed.length)
    log(
      `ag-server: removed ${removed.length} file(s) a killed process left in ${name}: ${removed.slice(0, 10).join(', ')}`,
    )
}
