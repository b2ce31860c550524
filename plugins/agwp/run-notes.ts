// The `run_notes` attachment (manifests/read.json): the continuity group's task_handoff asks for
// the notes of the AGWP run its passport names, and this answers with them, read from the
// upstream as any read is (the read scope, the call's deadline and cancellation). The ask's
// schema (manifests/continuity.json) bounds the answer: the latest notes are kept.
import type { AttachmentSupport } from '../../core/src/plugin-api.ts'
import type { AgwpClient } from './client.ts'
import { execute } from './executor.ts'

/** The ask's value schema allows this many notes; a longer run gives its latest. */
const MAX_NOTES = 200

export const runNotes: AttachmentSupport<AgwpClient> = {
  async provide(call, ctx) {
    const run = call.input?.['run']
    if (typeof run !== 'string') return undefined
    const answer = await execute(ctx, { run }, { method: 'GET', path: '/runs/{run}' })
    const notes = Array.isArray(answer['notes']) ? (answer['notes'] as unknown[]) : []
    return {
      value: {
        notes: notes.slice(-MAX_NOTES).map((n) => {
          const x = (typeof n === 'object' && n !== null ? n : {}) as Record<string, unknown>
          return { author: text(x['author']), createdAt: text(x['created_at']), body: text(x['body']) }
        }),
      },
    }
  },
}

const text = (v: unknown): string => (typeof v === 'string' ? v : '')
