// Keyed async mutex: the locks of the journal backend's transactions (journal-state.ts). A
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
}
