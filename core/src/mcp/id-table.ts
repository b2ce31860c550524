// The requests in flight, by id: a pair of arrays searched linearly (there are at most a few
// dozen), not a Map.
//
// Why not a Map: a Map that fills and empties with every turn of calls reallocates its hash
// table each time, and V8 links each old table to its replacement (so live iterators can
// follow). Once one of those tables is promoted to the old generation, the link keeps the next
// one alive through the scavenge, and so on: every later table, with the calls it referenced,
// was promoted too (about 10 MB of old-generation garbage per 20,000 quick calls).
import type { RequestId } from '../jsonrpc/message.ts'

export class IdTable<V> {
  private readonly ids: RequestId[] = []
  private readonly items: V[] = []

  get size(): number {
    return this.ids.length
  }

  get(id: RequestId): V | undefined {
    const i = this.ids.indexOf(id)
    return i === -1 ? undefined : this.items[i]
  }

  has(id: RequestId): boolean {
    return this.ids.indexOf(id) !== -1
  }

  /** Adds or replaces the entry of `id`. */
  set(id: RequestId, item: V): void {
    const i = this.ids.indexOf(id)
    if (i !== -1) this.items[i] = item
    else {
      this.ids.push(id)
      this.items.push(item)
    }
  }

  delete(id: RequestId): boolean {
    const i = this.ids.indexOf(id)
    if (i === -1) return false
    // The last entry takes the freed place: order is not kept, and nothing is reallocated.
    const last = this.ids.length - 1
    this.ids[i] = this.ids[last] as RequestId
    this.items[i] = this.items[last] as V
    this.ids.length = last
    this.items.length = last
    return true
  }

  /** A snapshot of the entries (safe to iterate while entries are added or deleted). */
  values(): V[] {
    return this.items.slice()
  }
}
