import { KeyedMutex } from './mutex.ts'
import type { Credentials, IndexName, Indexed, Op, Read, Scope, State, Tx } from './state.ts'
import type { Store } from './store.ts'
import type { CollectionName, Collections } from './types.ts'

// The embedded backend of State: the journal store (store.ts) in this process. Reads are the
// store's synchronous reads, so a request's scope (requestScope) still notes every collection
// it read and settle() waits for exactly the fsync its answer depends on. A transaction holds
// its locks on an in-process keyed mutex and commits its queued writes as one journal line:
// nothing another process could interleave with, since the data directory belongs to one.
// Records are shared, never copied: the store replaces a record on every change and never
// mutates one it handed out, so a caller may keep it (and must not change it).

export class JournalState implements State {
  readonly backend = 'journal'
  private readonly locks = new KeyedMutex()
  /** counter -> the highest number handed out, committed or not (see nextId) */
  private readonly taken = new Map<string, number>()

  constructor(readonly store: Store) {}

  async get<C extends CollectionName>(c: C, k: string): Promise<Collections[C] | undefined> {
    return this.store.get(c, k)
  }
  async getMany<C extends CollectionName>(c: C, keys: readonly string[]): Promise<(Collections[C] | undefined)[]> {
    return keys.map((k) => this.store.get(c, k))
  }
  async all<C extends CollectionName>(c: C): Promise<Collections[C][]> {
    return this.store.all(c)
  }
  async entries<C extends CollectionName>(c: C): Promise<[string, Collections[C]][]> {
    return this.store.entries(c)
  }
  async byIndex<N extends IndexName>(name: N, key: string): Promise<Indexed<N>[]> {
    return this.store.byIndex(name, key)
  }
  async idsByIndex(name: IndexName, key: string): Promise<string[]> {
    return this.store.idsByIndex(name, key)
  }
  async indexKeys(name: IndexName): Promise<string[]> {
    return this.store.indexKeys(name)
  }
  async credentials(h: string, runId: string | undefined): Promise<Credentials> {
    return this.read(h, runId, new Date())
  }
  private read(h: string, runId: string | undefined, now: Date): Credentials {
    return {
      token: this.store.tokenByHash(h),
      run: runId === undefined ? undefined : this.store.get('runs', runId),
      now,
    }
  }

  /** `reads` is not needed: the store's reads are in memory. */
  tx<T>(locks: readonly string[], fn: (t: Tx) => Promise<T>, _reads?: readonly Read[]): Promise<T> {
    return this.locks.runAll(locks, () => this.run(fn))
  }
  commit(locks: readonly string[], ops: readonly Op[]): Promise<void> {
    return this.tx(locks, async (t) => t.write(...ops))
  }

  /** fn's run and its one commit, under locks already held. */
  private async run<T>(fn: (t: Tx) => Promise<T>): Promise<T> {
    const queued: Op[] = []
    const counters = new Set<string>()
    let open = true
    const t: Tx = {
      get: (c, k) => this.get(c, k),
      getMany: (c, keys) => this.getMany(c, keys),
      all: (c) => this.all(c),
      entries: (c) => this.entries(c),
      byIndex: (name, key) => this.byIndex(name, key),
      idsByIndex: (name, key) => this.idsByIndex(name, key),
      indexKeys: (name) => this.indexKeys(name),
      credentials: async (h, runId) => this.read(h, runId, t.now),
      nextId: async (name, prefix) => {
        if (!open) throw new Error('transaction already ended: nextId after its fn returned')
        counters.add(name)
        return `${prefix}${this.take(name)}`
      },
      write: (...ops) => {
        if (!open) throw new Error('transaction already ended: write after its fn returned')
        queued.push(...ops)
      },
      now: new Date(),
    }
    let out: T
    try {
      out = await fn(t)
    } finally {
      open = false
    }
    // Each counter this tx used is written with its high-water mark as it is NOW, not the
    // number this tx took: a tx that took 5 but commits after one that took 6 must not
    // move the counter back to 5 (a restart would then hand out 6 again).
    const marks: Op[] = [...counters].map((name) => ({ c: 'counters', k: name, v: this.taken.get(name) ?? 0 }))
    this.store.commit([...queued, ...marks])
    return out
  }

  /** The next number of a counter: from memory, so concurrent transactions never share one. */
  private take(name: string): number {
    const n = Math.max(this.taken.get(name) ?? 0, this.store.get('counters', name) ?? 0) + 1
    this.taken.set(name, n)
    return n
  }

  async now(): Promise<Date> {
    return new Date()
  }
  newScope(): Scope {
    return this.store.newScope()
  }
  settle(scope: Scope): Promise<void> {
    return this.store.settle(scope)
  }
  flush(): Promise<void> {
    return this.store.flush()
  }
  async close(): Promise<void> {
    this.store.close()
  }
}
