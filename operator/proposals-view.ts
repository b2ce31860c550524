// How `ag-mcp proposals` prints a shared server's proposals on a terminal (proposals-remote.ts
// scrubs the text and makes its hidden characters visible before it is printed).

export interface ProposalView {
  id: string
  repo: string
  title: string
  state: string
  author: string
  target: string
  base: string | null
  head: string
  task?: string
  description?: string
  reasoning?: string
  mergeable?: boolean
  mergeability?: string
  conflicts?: string[]
  approvals?: string[]
  approvals_required?: number
  reviews?: { reviewer: string; verdict: string; body: string; head: string }[]
  provenance?: { status?: string; key_id?: string; reason?: string }
  integration_blockers?: { code: string; message: string }[]
  integrated?: { commit: string; strategy: string; by: string }
  withdrawn_reason?: string
}

interface DiffView {
  base: string | null
  head: string
  files: {
    path: string
    old_path?: string
    status: string
    binary: boolean
    additions: number
    deletions: number
    patch: string
  }[]
  truncated: boolean
}

const short = (oid: string | null | undefined): string => (oid ? oid.slice(0, 10) : '(root)')
const indent = (s: string): string => s.replace(/^/gm, '    ')

export function formatList(list: ProposalView[], state: string): string {
  if (list.length === 0) return state === 'open' ? 'no open proposals (--state all shows every one)' : 'no proposals'
  return list
    .map(
      (p) =>
        `${p.id}  ${p.state.padEnd(10)} ${p.repo}  ${p.title}  (by ${p.author}, onto ${p.target}${p.task ? `, ${p.task}` : ''})`,
    )
    .join('\n')
}

export function formatShow(p: ProposalView, d: DiffView): string {
  const out = [
    `${p.id}: ${p.title}`,
    `  repo       ${p.repo}`,
    `  state      ${p.state}${p.withdrawn_reason ? ` (${p.withdrawn_reason})` : ''}`,
    `  author     ${p.author}`,
    `  target     ${p.target}`,
    `  range      ${short(d.base)}..${short(p.head)}`,
  ]
  if (p.task) out.push(`  task       ${p.task}`)
  out.push(`  merge      ${p.mergeability ?? 'unknown'}${p.conflicts?.length ? ` (${p.conflicts.join(', ')})` : ''}`)
  out.push(
    `  approvals  ${p.approvals?.length ?? 0} of ${p.approvals_required ?? 0}${p.approvals?.length ? `: ${p.approvals.join(', ')}` : ''}`,
  )
  const pv = p.provenance ?? {}
  out.push(
    `  provenance ${pv.status ?? 'unknown'}${pv.key_id ? ` (key ${pv.key_id})` : ''}${pv.reason ? `: ${pv.reason}` : ''}`,
  )
  if (p.integrated)
    out.push(`  integrated ${short(p.integrated.commit)} by ${p.integrated.by} (${p.integrated.strategy})`)
  const blockers = p.integration_blockers ?? []
  out.push(
    blockers.length === 0
      ? p.state === 'open'
        ? '  nothing blocks integration'
        : ''
      : `  blocked:\n${blockers.map((b) => `    ${b.code}: ${b.message}`).join('\n')}`,
  )
  if (p.description) out.push(`\ndescription:\n${indent(p.description)}`)
  if (p.reasoning) out.push(`\nreasoning:\n${indent(p.reasoning)}`)
  for (const r of p.reviews ?? [])
    out.push(
      `\nreview by ${r.reviewer}: ${r.verdict}${r.head !== p.head ? ` (on ${short(r.head)}, an older head)` : ''}${r.body ? `\n${indent(r.body)}` : ''}`,
    )
  out.push(`\nfiles (${d.files.length}):`)
  for (const f of d.files)
    out.push(
      ` ${f.old_path && f.old_path !== f.path ? `${f.old_path} => ` : ''}${f.path} | ${f.binary ? 'binary' : `+${f.additions} -${f.deletions}`}`,
    )
  if (d.truncated) out.push(' (the server cut the patch at its size limit)')
  return out.filter((l) => l !== '').join('\n')
}

export function formatDiff(d: DiffView): string {
  const parts = d.files.map((f) => (f.binary ? `diff --git a/${f.path} b/${f.path}\nBinary file ${f.path}\n` : f.patch))
  if (d.truncated) parts.push('# the server cut the patch at its size limit\n')
  return parts.join('').trimEnd()
}
