// Keyed async mutex: the locks of the journal backend's transactions (journal-state.ts), and the
// in-process queue in front of the PostgreSQL backend's advisory locks (pg/pg-state.ts). A
// transaction holds its keys across every await of its check, git work and commit, so two
// transactions naming one key never interleave.
export class KeyedMutex {
  private tails = new Map<string, Promise<void>>()

  async run<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.tails.get(key) ?? Promise.resolve()
    let release!: () => void
    const mine = new Promise<void>((r) => (release = r))
    const tail = prev.then(() => mine)
    this.tails.set(key, tail)
    await prev
    try {
      return await fn()
    } finally {
      release()
      if (this.tails.get(key) === tail) this.tails.delete(key)
    }
  }

  /**
   * fn under every key, sorted and deduplicated and taken one inside the other: two callers
   * naming the same keys always take them in the same order, so they cannot deadlock.
   */
  runAll<T>(keys: readonly string[], fn: () => Promise<T>): Promise<T> {
    return [...new Set(keys)].sort().reduceRight<() => Promise<T>>((inner, key) => () => this.run(key, inner), fn)()
  }
}
