// Records kept in the durable store (everything that is not in git).
export type Scope = 'read' | 'workspace' | 'propose' | 'coordinate' | 'review' | 'integrate' | 'admin'
export const SCOPES: readonly Scope[] = ['read', 'workspace', 'propose', 'coordinate', 'review', 'integrate', 'admin']
export type Role = 'reader' | 'contributor' | 'reviewer' | 'maintainer' | 'admin'
export const ROLES: readonly Role[] = ['reader', 'contributor', 'reviewer', 'maintainer', 'admin']

export interface Policy {
  required_approvals: number
  require_provenance_for_agents: boolean
  protected_branches: string[]
}
export const DEFAULT_POLICY: Policy = {
  required_approvals: 1,
  require_provenance_for_agents: false,
  protected_branches: [],
}

export interface TokenRec {
  id: string
  hash: string // sha256 hex of the secret; the secret itself is never stored
  principal: string
  scopes: Scope[]
  repos: string[]
  label?: string
  expires_at: string
  created_at: string
  revoked: boolean
}

export interface RepoMeta {
  policy: Policy
  roles: Record<string, Role>
}

export interface OverlayEntry {
  blob: string
  mode: string
  size: number
}

export interface WorkspaceRec {
  id: string
  repo: string
  base: string | null
  base_ref: string
  owner: string
  run_id?: string
  state: 'open' | 'discarded'
  /** path -> new content, or null for a deletion of a base path */
  changes: Record<string, OverlayEntry | null>
  proposals: string[]
  created_at: string
  updated_at: string
}

export interface RevisionRec {
  number: number
  head: string
  base: string | null
  workspace: string
  by: string
  note?: string
  created_at: string
}

/** A principal's signing key (Ed25519). Revoked, never deleted: old signatures stay judgeable. */
export interface KeyRec {
  id: string
  principal: string
  algorithm: 'ed25519'
  /** raw 32-byte public key, base64 */
  public_key: string
  label?: string
  created_at: string
  revoked_at?: string
}

export interface ProvenanceRec {
  key_id: string
  signature: string
  statement: string
  head: string
  attached_by: string
  attached_at: string
}

export interface ProposalRec {
  id: string
  repo: string
  title: string
  description: string
  reasoning: string
  task?: string
  state: 'open' | 'integrated' | 'withdrawn'
  author: string // actor (may carry #run-N)
  author_principal: string
  target: string
  base: string | null
  head: string
  workspace: string
  revisions: RevisionRec[]
  provenance?: ProvenanceRec
  withdrawn_reason?: string
  integrated?: {
    commit: string
    strategy: 'merge' | 'fast_forward' | 'squash'
    by: string
    at: string
    /** where the range integration brought in started (absent in records older than the field) */
    merge_base?: string | null
  }
  created_at: string
  updated_at: string
}

export interface ReviewCommentRec {
  path: string
  line: number
  body: string
}

export interface ReviewRec {
  id: string
  proposal: string
  reviewer: string
  reviewer_principal: string
  verdict: 'approve' | 'request_changes' | 'comment'
  body: string
  comments: ReviewCommentRec[]
  head: string
  /**
   * Where the reviewed range starts: the merge base of the target and `head` when the review
   * was recorded (null: from the root). An approval covers base..head. Absent in records older
   * than the field: those covered the proposal's own base (its parent) only.
   */
  base?: string | null
  created_at: string
}

export interface TaskRec {
  id: string
  repo: string
  title: string
  body: string
  state: 'open' | 'claimed' | 'done' | 'blocked' | 'abandoned'
  paths: string[]
  run_id?: string
  created_by: string
  created_at: string
  updated_at: string
}

export interface NoteRec {
  id: string
  run_id: string
  author: string
  body: string
  created_at: string
}

export interface RunRec {
  run_id: string
  task: string
  repo: string
  principal: string
  state: 'active' | 'released' | 'expired'
  lease_expires_at: string
  outcome?: 'done' | 'blocked' | 'abandoned'
  notes: NoteRec[]
  created_at: string
  updated_at: string
}

export interface LeaseRec {
  id: string
  repo: string
  paths: string[]
  holder: string
  principal: string
  run_id?: string
  expires_at: string
  created_at: string
  released: boolean
}

/**
 * A ref update that is about to happen, journaled (fsync'd) before the compare-and-swap
 * `update-ref` so a crash between the ref moving and the record of it is repaired at
 * start-up: if the ref holds `next` (or, with accept 'contains', a descendant of it) the
 * recorded ops are applied, otherwise the intent is dropped. Keyed by `<repo>:<ref>`.
 */
export interface IntentRec {
  repo: string
  ref: string
  expected: string | null
  next: string
  accept: 'exact' | 'contains'
  /** store ops (see store.ts Op) that record the update once it is known to have happened */
  ops: unknown[]
  created_at: string
}

/** An Idempotency-Key seen from a principal (see idempotency.ts); keyed by a hash of both. */
export interface IdempotencyRec {
  principal: string
  /** sha256 of method, path and query, AGWP-Run, AGWP-Repo and body bytes */
  fingerprint: string
  /** applied: the request changed state and its answer is not (yet) recorded; answered: it is */
  state: 'applied' | 'answered'
  status?: number
  body?: unknown
  expires_at: string
}

export interface Collections {
  tokens: TokenRec
  repos: RepoMeta
  workspaces: WorkspaceRec
  proposals: ProposalRec
  reviews: ReviewRec
  tasks: TaskRec
  runs: RunRec
  leases: LeaseRec
  counters: number
  intents: IntentRec
  idempotency: IdempotencyRec
  keys: KeyRec
}
export type CollectionName = keyof Collections
export const COLLECTIONS: readonly CollectionName[] = [
  'tokens',
  'repos',
  'workspaces',
  'proposals',
  'reviews',
  'tasks',
  'runs',
  'leases',
  'counters',
  'intents',
  'idempotency',
  'keys',
]
