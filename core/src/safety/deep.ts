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
 * Returns a new value with `fn` applied to every string and every object key. Arrays and
 * objects are copied, the input is never mutated. When two keys map to the same string, a key
 * that `fn` left unchanged wins over a changed one (so `{"path": a, "path\u200b": b}` keeps `a`),
 * otherwise the first in order wins; the loser is dropped and counted.
 * Throws a TypeError on cycles and on nesting deeper than MAX_DEPTH.
 */
export function mapStringsDeep(value: unknown, fn: (s: string) => string): DeepMapResult {
  let droppedKeys = 0
  const onPath = new Set<object>()

  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v === 'string') return fn(v)
    if (typeof v !== 'object' || v === null) return v
    if (depth >= MAX_DEPTH) throw new TypeError(`value nested deeper than ${MAX_DEPTH} levels`)
    if (onPath.has(v)) throw new TypeError('cyclic value')
    onPath.add(v)
    try {
      if (Array.isArray(v)) return v.map((item) => walk(item, depth + 1))
      const src = v as Record<string, unknown>
      const out: Record<string, unknown> = {}
      const changed: Array<[string, unknown]> = []
      for (const key of Object.keys(src)) {
        const mapped = fn(key)
        const item = walk(src[key], depth + 1)
        if (mapped === key) define(out, key, item)
        else changed.push([mapped, item])
      }
      for (const [key, item] of changed) {
        if (Object.prototype.hasOwnProperty.call(out, key)) droppedKeys++
        else define(out, key, item)
      }
      return out
    } finally {
      onPath.delete(v)
    }
  }

  const mapped = walk(value, 0)
  return { value: mapped, droppedKeys }
}

/** Plain assignment of `__proto__` would set the prototype instead of creating a key. */
function define(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true })
}
