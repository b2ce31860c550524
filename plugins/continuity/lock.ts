// The pack write lock, shared with Agentpack so both tools can write one pack at once: the
// directory `.agentpack/.lock`, created with mkdir (atomic on every local filesystem), polled
// every 25 ms for up to 10 s, broken when older than 5 minutes (a crashed holder), removed on
// release. Reads take no lock (files are replaced by rename, lines appended whole).
//
// Within this process the waiters queue on a promise chain instead of all polling mkdir, so
// concurrent calls cost one mkdir each; waiting is asynchronous and honours the call's signal.
import { mkdir, rm, stat } from 'node:fs/promises'
import { setTimeout as sleep } from 'node:timers/promises'
import { refuse } from './errors.ts'
import { isMissing, packPath } from './pack-files.ts'

export const LOCK_POLL_MS = 25
export const LOCK_TIMEOUT_MS = 10_000
export const STALE_LOCK_MS = 5 * 60_000

const queues = new Map<string, Promise<void>>()

export interface LockOptions {
  signal?: AbortSignal | undefined
  timeoutMs?: number
}

/** Runs `fn` holding the pack lock of `root`; the lock is released however `fn` ends. */
export async function withPackLock<T>(root: string, fn: () => Promise<T>, o: LockOptions = {}): Promise<T> {
  const lockDir = packPath(root, '.lock')
  const before = queues.get(lockDir) ?? Promise.resolve()
  let release!: () => void
  const mine = new Promise<void>((r) => {
    release = r
  })
  const tail = before.then(() => mine)
  queues.set(lockDir, tail)
  try {
    await waitTurn(before, o.signal)
    await acquire(lockDir, o)
    try {
      return await fn()
    } finally {
      await rm(lockDir, { recursive: true, force: true })
    }
  } finally {
    release()
    if (queues.get(lockDir) === tail) queues.delete(lockDir)
  }
}

async function waitTurn(before: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return before
  if (signal.aborted) throw refuse('cancelled', 'cancelled while waiting for the pack lock; nothing was written')
  let onAbort!: () => void
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(refuse('cancelled', 'cancelled while waiting for the pack lock; nothing was written'))
    signal.addEventListener('abort', onAbort, { once: true })
  })
  try {
    await Promise.race([before, aborted])
  } finally {
    signal.removeEventListener('abort', onAbort)
  }
}

async function acquire(lockDir: string, o: LockOptions): Promise<void> {
  const started = Date.now()
  const timeout = o.timeoutMs ?? LOCK_TIMEOUT_MS
  for (;;) {
    try {
      await mkdir(lockDir, { mode: 0o700 })
      return
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e
    }
    await breakIfStale(lockDir)
    if (Date.now() - started > timeout)
      throw refuse(
        'locked',
        `the pack lock ${lockDir} has been held by another process for over ${Math.round(timeout / 1000)} s; nothing was written (a lock older than 5 minutes is broken automatically)`,
      )
    try {
      await sleep(LOCK_POLL_MS, undefined, o.signal ? { signal: o.signal } : undefined)
    } catch {
      throw refuse('cancelled', 'cancelled while waiting for the pack lock; nothing was written')
    }
  }
}

async function breakIfStale(lockDir: string): Promise<void> {
  try {
    const s = await stat(lockDir)
    if (Date.now() - s.mtimeMs > STALE_LOCK_MS) await rm(lockDir, { recursive: true, force: true })
  } catch (e) {
    if (!isMissing(e)) throw e
  }
}
