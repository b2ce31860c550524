// Checkpoints: `checkpoints/<stamp>/` with checkpoint.json, git-status.txt, diff.patch and
// resume.md; state.json takes the new status and next actions; one `checkpoint` event.
// Git costs one `git status` and, when the pack keeps diffs and tracked files changed, one
// `git diff` (the short HEAD is memoised per commit).
import { join } from 'node:path'
import { refuse } from './errors.ts'
import { buildResume } from './resume.ts'
import { ensureDir, readJson, stamp, writeFilePrivate, writeJson } from './pack-files.ts'
import type { Pack } from './store.ts'

export interface CheckpointOptions {
  summary?: string | undefined
  status?: string | undefined
  nextActions?: string[] | undefined
  /** Extra records another group contributed (staged AGIT thoughts), stored as given. */
  attachments?: Record<string, unknown> | undefined
}

export interface CheckpointManifest {
  schemaVersion: number
  id: string
  createdAt: string
  summary: string
  status: string
  nextActions: string[]
  git: { available: boolean; branch: string | null; head: string | null }
  attachments?: Record<string, unknown>
}

export async function createCheckpoint(
  pack: Pack,
  o: CheckpointOptions = {},
): Promise<{ id: string; manifest: CheckpointManifest }> {
  const r = await pack.redactor()
  const summary = r.redact(o.summary?.trim() || 'Checkpoint created.')
  const status = o.status?.trim() ? r.redact(o.status.trim()) : undefined
  const nextActions = (o.nextActions ?? []).map((a) => r.redact(a)).filter((a) => a.trim())
  return pack.write(async () => {
    const config = await pack.config()
    const keepDiff = config.includeGitDiff !== false
    const [state, refs, head, st] = await Promise.all([
      pack.state(),
      pack.git.refs(),
      pack.git.short(),
      pack.git.status(),
    ])
    const tracked = st.lines.some((l) => !l.startsWith('??'))
    const diff = keepDiff && tracked ? await pack.git.diff() : ''
    // Checkpoint ids are timestamps; two in the same millisecond would share a folder.
    let id = stamp()
    while ((await pack.listCheckpoints()).includes(id)) {
      await new Promise((res) => setTimeout(res, 2))
      id = stamp()
    }
    const dir = pack.path('checkpoints', id)
    await ensureDir(dir)
    if (status) state.currentStatus = status
    if (nextActions.length) state.nextActions = nextActions
    state.currentCheckpoint = id
    await pack.writeState(state)
    const manifest: CheckpointManifest = {
      schemaVersion: 1,
      id,
      createdAt: new Date().toISOString(),
      summary,
      status: state.currentStatus,
      nextActions: state.nextActions ?? [],
      git: { available: refs.available, branch: refs.branch, head },
      ...(o.attachments && Object.keys(o.attachments).length ? { attachments: r.redactDeep(o.attachments) } : {}),
    }
    await writeJson(join(dir, 'checkpoint.json'), manifest)
    await writeFilePrivate(join(dir, 'git-status.txt'), r.redact(st.lines.join('\n')))
    if (keepDiff) await writeFilePrivate(join(dir, 'diff.patch'), r.redact(diff))
    const resume = await buildResume(pack, { budget: config.defaultBudget || 4000 })
    await writeFilePrivate(join(dir, 'resume.md'), resume.markdown)
    await pack.appendEvent('checkpoint', { checkpointId: id, summary, status: state.currentStatus })
    return { id, manifest }
  })
}

export async function diffCheckpoints(pack: Pack, from?: string, to?: string): Promise<string> {
  const all = await pack.listCheckpoints()
  if (all.length === 0) return 'No checkpoints yet.'
  for (const id of [from, to])
    if (id !== undefined && !all.includes(id))
      throw refuse('not_found', `no checkpoint ${id}; known: ${all.slice(-5).join(', ')}`)
  const toId = to ?? (all[all.length - 1] as string)
  const fromId = from ?? all[all.length - 2] ?? toId
  const read = (id: string) =>
    readJson<Partial<CheckpointManifest>>(pack.path('checkpoints', id, 'checkpoint.json'), {})
  const [a, b] = await Promise.all([read(fromId), read(toId)])
  const ref = (g: Partial<CheckpointManifest['git']> | undefined) =>
    g?.available ? `${g.branch ?? 'unknown'} @ ${g.head ?? 'unknown'}` : 'not available'
  return [
    '# Agentpack Checkpoint Diff',
    '',
    `From: ${fromId}`,
    `To: ${toId}`,
    '',
    '## Summary',
    `- From: ${a.summary || 'No summary'}`,
    `- To: ${b.summary || 'No summary'}`,
    '',
    '## Status',
    `- From: ${a.status || 'No status'}`,
    `- To: ${b.status || 'No status'}`,
    '',
    '## Git',
    `- From: ${ref(a.git)}`,
    `- To: ${ref(b.git)}`,
  ].join('\n')
}
