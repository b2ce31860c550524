/**
 * A map bounded by the total weight of its values (a count, bytes, tree entries) that
 * drops the least recently used entries first. A Map iterates in insertion order, so
 * moving an entry to the end on a hit makes the first key the one to drop.
 *
 * Why not clear the whole map at the bound, as the caches once did: every read after
 * the clear missed at once, a latency cliff every few thousand commits under load, and
 * memory went up and down in a saw-tooth instead of holding at the bound.
 *
 * Why a hit moves only an entry in the older half: the move is a delete and an insert
 * in a large hash table, and it grew costlier as the table grew (a commit cache of a few
 * thousand entries made the log walk's hits 3x dearer over a 5-minute soak, 0.1 µs to
 * 0.25 µs each in isolation), while an entry in the newer half has at least half the
 * map in front of it to drop first. So a hit is a plain read for recently placed entries.
 */
export class Lru<K, V> {
  private readonly map = new Map<K, Slot<V>>()
  private total = 0
  /** How many times an entry has been placed at the end (inserted or moved there). */
  private placed = 0

  constructor(
    private readonly limit: number,
    private readonly weigh: (v: V) => number = () => 1,
    /** told of each entry dropped for the bound (not of deletes or replacements) */
    private readonly dropped: (key: K, v: V) => void = () => undefined,
  ) {}

  /**
   * The value, marked as just used: moved to the end unless fewer than half the entries
   * were placed after it (then at least half the map is older and goes first).
   */
  get(key: K): V | undefined {
    const s = this.map.get(key)
    if (s === undefined) return undefined
    // placed - s.at bounds from above how many live entries were placed after this one
    if (this.placed - s.at >= this.map.size / 2) {
      this.map.delete(key)
      this.map.set(key, s)
      s.at = ++this.placed
    }
    return s.v
  }

  /** The value, without marking it used (a scan over many keys must not reorder them all). */
  peek(key: K): V | undefined {
    return this.map.get(key)?.v
  }

  /** Insert or replace, then drop the oldest entries until the total is within the limit (one always stays). */
  set(key: K, v: V): void {
    const old = this.map.get(key)
    if (old !== undefined) {
      this.total -= this.weigh(old.v)
      this.map.delete(key)
    }
    this.map.set(key, { v, at: ++this.placed })
    this.total += this.weigh(v)
    if (this.total <= this.limit) return
    for (const [k, x] of this.map) {
      if (this.total <= this.limit || this.map.size <= 1) break
      this.map.delete(k)
      this.total -= this.weigh(x.v)
      this.dropped(k, x.v)
    }
  }

  /** Remove the key, if held. */
  delete(key: K): void {
    const s = this.map.get(key)
    if (s === undefined) return
    this.map.delete(key)
    this.total -= this.weigh(s.v)
  }

  get size(): number {
    return this.map.size
  }

  /** The sum of the weights of the values held, as counted on insertion and removal. */
  get weight(): number {
    return this.total
  }

  *values(): IterableIterator<V> {
    for (const s of this.map.values()) yield s.v
  }
}

/** A value and when it was last placed at the end of the map. */
interface Slot<V> {
  v: V
  at: number
}
