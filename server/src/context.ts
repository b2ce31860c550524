import type { Store } from './store.ts'
import type { RepoRegistry } from './repos.ts'
import type { KeyedMutex } from './mutex.ts'

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
  store: Store
  repos: RepoRegistry
  mutex: KeyedMutex
  limits: Limits
  tmpDir: string
}
