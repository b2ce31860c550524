// `ag-mcp agit sync --hook <name>`: what each git hook asks of the log.
import type { AgitRepo } from './repo.ts'

export interface SyncReport {
  linked?: { count: number; gitHash: string; neural: string }
  switched?: { from: string; to: string }
  snapped?: { from: string; to: string | undefined }
}

export async function syncHook(repo: AgitRepo, hook: string | undefined): Promise<SyncReport> {
  if (!repo.initialized) return {} // AGIT: a repository without .agit/ is left alone, silently
  const report: SyncReport = {}
  const s = await repo.ensureSync()
  if (s.switched) report.switched = s.switched
  if (hook === 'post-commit' || hook === 'post-merge') {
    const head = await repo.gitHeadCommit()
    // After an amend the old neural commit may name the replaced commit: snap back first.
    const snapped = await repo.snapBack()
    if (snapped) report.snapped = snapped
    if (head) {
      const linked = await repo.linkPending(head)
      if (linked) report.linked = { count: linked.count, gitHash: linked.gitHash, neural: linked.neural }
    }
  } else {
    const snapped = await repo.snapBack()
    if (snapped) report.snapped = snapped
  }
  return report
}

export function describeSync(r: SyncReport): string[] {
  const lines: string[] = []
  if (r.switched) lines.push(`[agit] Switched thoughts from branch '${r.switched.from}' to '${r.switched.to}'`)
  if (r.snapped) lines.push('[agit] Git history rewound. Snapped agit HEAD back to valid ancestor.')
  if (r.linked) lines.push(`[agit] Linked ${r.linked.count} thought(s) to commit ${r.linked.gitHash.slice(0, 7)}`)
  return lines
}
