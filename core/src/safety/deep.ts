// One walker for the "apply a string function to every string of a JSON-like value" stages
// (sanitize, scrub), so both agree on keys, cycles, depth and `__proto__`.

/** Deeper than this is refused: no legitimate result nests this far, and recursion must not overflow. */
export const MAX_DEPTH = 512

export interface DeepMapResult {
  value: unknown
  /** Entries dropped because their mapped key collided with another key of the same object. */
  droppedKeys: number
}

/**
 * Returns `value` with `fn` applied to every string and every object key; a string value comes
 * with the key it is held under and the object holding that key (an array's items with the
 * array's). The input is never
 * mutated; a subtree in which nothing changed is returned as is (shared, not copied), so clean
 * data, the common case, costs one walk and no allocation. When two keys map to the same string,
 * a key that `fn` left unchanged wins over a changed one (so `{"path": a, "path\u200b": b}`
 * keeps `a`), otherwise the first in order wins; the loser is dropped and counted.
 * Throws a TypeError on nesting deeper than MAX_DEPTH (which a cycle always reaches).
 */
export function mapStringsDeep(
  value: unknown,
  fn: (s: string, key?: string, holder?: object) => string,
): DeepMapResult {
  let droppedKeys = 0

  // No set of visited objects: a cycle is an endless nesting and hits MAX_DEPTH, and skipping
  // the bookkeeping matters (this runs on every string of every result).
  // `at`: the property a value is held under, `holder` the object holding it (array items
  // inherit their array's), for `fn`.
  const walk = (v: unknown, depth: number, at?: string, holder?: object): unknown => {
    if (typeof v === 'string') return fn(v, at, holder)
    if (typeof v !== 'object' || v === null) return v
    if (depth >= MAX_DEPTH) throw new TypeError(`value nested deeper than ${MAX_DEPTH} levels (or cyclic)`)
    if (Array.isArray(v)) {
      let copy: unknown[] | undefined
      for (let i = 0; i < v.length; i++) {
        const item: unknown = v[i]
        const mapped = walk(item, depth + 1, at, holder)
        if (copy) copy.push(mapped)
        else if (mapped !== item) {
          copy = v.slice(0, i)
          copy.push(mapped)
        }
      }
      return copy ?? v
    }
    const src = v as Record<string, unknown>
    const keys = Object.keys(src)
    // Collected only from the first change on (the entries before it are src's own).
    let mappedKeys: string[] | undefined
    let items: unknown[] | undefined
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i] as string
      const mk = fn(key)
      const item = walk(src[key], depth + 1, key, src)
      if (!mappedKeys || !items) {
        if (mk === key && item === src[key]) continue
        mappedKeys = keys.slice(0, i)
        items = mappedKeys.map((k) => src[k])
      }
      mappedKeys.push(mk)
      items.push(item)
    }
    if (!mappedKeys || !items) return v
    const out: Record<string, unknown> = {}
    const changed: Array<[string, unknown]> = []
    keys.forEach((key, i) => {
      if (mappedKeys[i] === key) define(out, key, items[i])
      else changed.push([mappedKeys[i] as string, items[i]])
    })
    for (const [key, item] of changed) {
      if (Object.hasOwn(out, key)) droppedKeys++
      else define(out, key, item)
    }
    return out
  }

  const mapped = walk(value, 0)
  return { value: mapped, droppedKeys }
}

/** Plain assignment of `__proto__` would set the prototype instead of creating a key. */
function define(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true })
}
