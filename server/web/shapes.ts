// The JSON the review page reads from /ui/api, one place for the page's modules to share (the
// server's ui/api.ts writes it).

export interface SessionInfo {
  principal: string
  expires_at: string
  csrf: string
  scopes: string[]
  repos: { name: string; role: string }[]
}
export interface Review {
  id: string
  reviewer: string
  verdict: string
  body: string
  head: string
  created_at: string
}
export interface ProposalData {
  proposal: {
    id: string
    repo: string
    title: string
    description: string
    reasoning: string
    state: string
    author: string
    target: string
    target_head: string | null
    base: string | null
    merge_base: string | null
    head: string
    mergeable: boolean
    mergeability: string
    conflicts: string[]
    approvals: string[]
    approvals_required: number
    reviews: Review[]
    provenance: Record<string, unknown>
    integration_blockers: { code: string; message: string }[]
    revisions: { number: number; head: string; by: string; created_at: string; note?: string }[]
    task?: string
    withdrawn_reason?: string
    integrated?: { commit: string; strategy: string; by: string; at: string }
    created_at: string
    updated_at: string
  }
  task?: { id: string; title: string; body: string; state: string }
  run?: {
    run_id: string
    state: string
    outcome?: string
    principal: string
    notes: { id: string; author: string; body: string; created_at: string }[]
  }
  commits: { id: string; subject: string; message: string; author: { name: string; email: string; date: string } }[]
  signer?: { key_id: string; principal: string; label?: string; revoked_at?: string }
  actions: Record<'review' | 'integrate' | 'reject', { allowed: boolean; reason?: string }>
}
