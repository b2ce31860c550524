/**
 * A map bounded by the total weight of its values (a count, bytes, tree entries) that
 * drops the least recently used entries first. A Map iterates in insertion order, so
 * moving an entry to the end on each hit makes the first key the one to drop.
 *
 * Why not clear the whole map at the bound, as the caches once did: every read after
 * the clear missed at once, a latency cliff every few thousand commits under load, and
 * memory went up and down in a saw-tooth instead of holding at the bound.
 */
export class Lru<K, V> {
  private readonly map = new Map<K, V>()
  private total = 0

  constructor(
    private readonly limit: number,
    private readonly weigh: (v: V) => number = () => 1,
    /** told of each entry dropped for the bound (not of deletes or replacements) */
    private readonly dropped: (key: K, v: V) => void = () => undefined,
  ) {}

  /** The value, marked as just used. */
  get(key: K): V | undefined {
    const v = this.map.get(key)
    if (v !== undefined) {
      this.map.delete(key)
      this.map.set(key, v)
    }
    return v
  }

  /** The value, without marking it used (a scan over many keys must not reorder them all). */
  peek(key: K): V | undefined {
    return this.map.get(key)
  }

  /** Insert or replace, then drop the oldest entries until the total is within the limit (one always stays). */
  set(key: K, v: V): void {
    const old = this.map.get(key)
    if (old !== undefined) {
      this.total -= this.weigh(old)
      this.map.delete(key)
    }
    this.map.set(key, v)
    this.total += this.weigh(v)
    for (const [k, x] of this.map) {
      if (this.total <= this.limit || this.map.size <= 1) break
      this.map.delete(k)
      this.total -= this.weigh(x)
      this.dropped(k, x)
    }
  }

  /** Remove the key, if held. */
  delete(key: K): void {
    const v = this.map.get(key)
    if (v === undefined) return
    this.map.delete(key)
    this.total -= this.weigh(v)
  }

  get size(): number {
    return this.map.size
  }

  /** The sum of the weights of the values held, as counted on insertion and removal. */
  get weight(): number {
    return this.total
  }

  values(): IterableIterator<V> {
    return this.map.values()
  }
}
