import type { RepoRegistry } from './repos.ts'
import type { Ownership } from './owners.ts'
import type { State } from './state.ts'

export interface Limits {
  maxBodyBytes: number
  maxFileBytes: number
  maxPatchBytes: number
}

export const DEFAULT_LIMITS: Limits = {
  maxBodyBytes: 8 * 1024 * 1024,
  maxFileBytes: 1024 * 1024,
  maxPatchBytes: 256 * 1024,
}

/** Everything a handler needs; one per server. */
export interface Ctx {
  /** every record the server keeps; each check-then-write is one state.tx (state.ts) */
  state: State
  repos: RepoRegistry
  limits: Limits
  tmpDir: string
  /** several instances on one PostgreSQL: who owns each repository (owners.ts); one instance: absent */
  owners?: Ownership
}
