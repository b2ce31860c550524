// The `staged_reasoning` attachment (manifests/agit.json): when the agent proposes a change
// while thoughts are pending, they travel as the proposal's `reasoning`, and once the proposal
// exists they become a neural commit linked to its commit, so they are not sent twice.
// Only the thoughts that were sent are consumed: one logged meanwhile stays pending.
import type { AttachmentSupport } from '../../core/src/plugin-api.ts'
import type { Entry } from './entry.ts'
import { effectiveLocations } from './entry.ts'
import type { AgitRepo } from './repo.ts'
import { formatTrace, synthesizeSummary, truncateChars } from './text.ts'

/** A proposal's reasoning stays readable: at most this many characters of thoughts. */
const MAX_CHARS = 16_000

const key = (e: Entry) => JSON.stringify([e.timestamp, e.role, e.category, e.content])

export function reasoningText(entries: readonly Entry[]): string {
  const lines = formatTrace(entries)
    .split('\n')
    .map((line, i) => {
      const locs = effectiveLocations(entries[i] as Entry)
        .map(
          (l) =>
            `${l.file}${l.start_line !== undefined ? `:${l.start_line}${l.end_line !== undefined ? `-${l.end_line}` : ''}` : ''}`,
        )
        .join(', ')
      return locs ? `${line} (${locs})` : line
    })
  return truncateChars(
    `${synthesizeSummary(entries)}\n\nAGIT thoughts (${entries.length}):\n${lines.join('\n')}`,
    MAX_CHARS,
  )
}

export const stagedReasoning: AttachmentSupport<{ repo: AgitRepo }> = {
  async provide(_call, ctx) {
    const repo = ctx.state.repo
    if (!repo.initialized) return undefined
    const { entries } = await repo.pending()
    if (entries.length === 0) return undefined
    return { value: reasoningText(entries), receipt: entries.map(key) }
  },
  async settle(receipt, result, ctx) {
    const commit = result.commit
    if (typeof commit !== 'string' || !Array.isArray(receipt)) return
    const sent = new Set(receipt as string[])
    const linked = await ctx.state.repo.linkPending(commit.toLowerCase(), { only: (e) => sent.has(key(e)) })
    if (linked)
      ctx.log.info('agit thoughts sent with a proposal recorded as consumed', {
        proposal: result.proposal,
        commit,
        thoughts: linked.count,
      })
  },
}

/**
 * The `staged_thoughts` attachment (manifests/agit.json): a continuity checkpoint records the
 * pending thoughts under `attachments.agit`. Recording is not sending: they stay pending for the
 * next commit or proposal, so there is nothing to settle. Other groups' records are kept.
 */
export const stagedThoughts: AttachmentSupport<{ repo: AgitRepo }> = {
  async provide(call, ctx) {
    const repo = ctx.state.repo
    if (!repo.initialized) return undefined
    const { entries } = await repo.pending()
    if (entries.length === 0) return undefined
    const own = call.args['attachments']
    const others = typeof own === 'object' && own !== null && !Array.isArray(own) ? own : {}
    return { value: { ...others, agit: { thoughts: entries } } }
  },
}
