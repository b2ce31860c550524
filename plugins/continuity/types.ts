// The shapes Agentpack keeps under `.agentpack/` (1.6/1.7), with its field names in its order:
// JSON.stringify keeps insertion order, so building objects in this order keeps files
// byte-compatible with what Agentpack writes and reads.

export type GateMode = 'off' | 'warn' | 'block'

export interface PackConfig {
  schemaVersion: number
  projectName: string
  redactions: string[]
  defaultBudget: number
  includeGitDiff: boolean
  gateMode?: GateMode
}

export interface PackState {
  schemaVersion: number
  goal: string | null
  currentStatus: string
  nextActions: string[]
  currentCheckpoint: string | null
  createdAt: string
  updatedAt: string
}

export interface SourceRecord {
  path: string
  hash: string
  size: number
  mtimeMs: number
  recordedAt: string
  summary: string
  snippet: string
}

export interface SourcesFile {
  schemaVersion: number
  sources: SourceRecord[]
}

/** `completed` and `abandoned` are the closed states. */
export type TaskStatus = 'active' | 'parked' | 'blocked' | 'verifying' | 'completed' | 'abandoned'
export type TaskRisk = 'low' | 'medium' | 'high' | 'unknown'
export type VerificationStatus = 'unknown' | 'pending' | 'passed' | 'failed' | 'accepted'

export interface TaskVerification {
  status: VerificationStatus
  evidence: string[]
  summary: string
}

export interface TaskPassport {
  schemaVersion: number
  id: string
  title: string
  status: TaskStatus
  createdAt: string
  updatedAt: string
  closedAt: string | null
  objective: string
  constraints: string[]
  branch: string | null
  baseHead: string | null
  currentHead: string | null
  worktree: string
  writeScope: string[]
  risk: TaskRisk
  verification: TaskVerification
  nextActions: string[]
  tags: string[]
  blockedReason?: string
  /**
   * ag-mcp's ties to the remote workflow (an AGWP task, run and proposal). Agentpack's reader
   * keeps unknown fields (it only strips `roles`), so the passport stays readable by both.
   */
  links?: PassportLinks
}

export interface PassportLinks {
  agwpTask?: string
  agwpRun?: string
  agwpProposal?: string
}

export interface PackEvent {
  id: string
  ts: string
  type: string
  [key: string]: unknown
}

export const TASK_STATUSES: readonly TaskStatus[] = [
  'active',
  'parked',
  'blocked',
  'verifying',
  'completed',
  'abandoned',
]
export const OPEN_STATUSES: readonly TaskStatus[] = ['active', 'parked', 'blocked', 'verifying']
export const VERIFICATION_STATUSES: readonly VerificationStatus[] = [
  'unknown',
  'pending',
  'passed',
  'failed',
  'accepted',
]
export const FINAL_VERDICTS: readonly VerificationStatus[] = ['passed', 'failed', 'accepted']
export const RISKS: readonly TaskRisk[] = ['low', 'medium', 'high', 'unknown']

export const isClosed = (s: TaskStatus): boolean => s === 'completed' || s === 'abandoned'
export const isFinalVerdict = (s: VerificationStatus): boolean => FINAL_VERDICTS.includes(s)
