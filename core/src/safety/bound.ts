// Output bounds in UTF-8 bytes. Sizes are measured incrementally from the code units (never by
// serializing a 100 MB value, and never more than once per node), and cuts fall on code point
// boundaries: a surrogate pair is never split, so no UTF-8 sequence is either.
//
// Byte counts follow Node's UTF-8 encoder: a lone surrogate counts 3 (it encodes as U+FFFD).

import { MAX_DEPTH } from './deep.ts'

export interface BoundTextResult {
  text: string
  truncated: boolean
  /** UTF-8 bytes of the returned `text`. */
  bytes: number
}

function checkLimit(maxBytes: number): void {
  if (!Number.isSafeInteger(maxBytes) || maxBytes < 0)
    throw new RangeError(`maxBytes must be a non-negative integer, got ${maxBytes}`)
}

/** UTF-8 width of the code point starting at `i`, and how many code units it spans. */
function utf8At(s: string, i: number): [bytes: number, units: number] {
  const c = s.charCodeAt(i)
  if (c < 0x80) return [1, 1]
  if (c < 0x800) return [2, 1]
  if (c >= 0xd800 && c <= 0xdbff) {
    const d = s.charCodeAt(i + 1)
    if (d >= 0xdc00 && d <= 0xdfff) return [4, 2]
  }
  return [3, 1]
}

/** Longest prefix of `s` whose UTF-8 size is at most `maxBytes`: [code units, bytes]. */
export function utf8Prefix(s: string, maxBytes: number): [units: number, bytes: number] {
  let i = 0
  let bytes = 0
  while (i < s.length) {
    const [b, u] = utf8At(s, i)
    if (bytes + b > maxBytes) break
    bytes += b
    i += u
  }
  return [i, bytes]
}

export function boundText(s: string, maxBytes: number): BoundTextResult {
  checkLimit(maxBytes)
  // Fast exits without scanning: a code unit is at most 3 bytes (a pair is 4 bytes for 2 units).
  if (s.length * 3 <= maxBytes) return { text: s, truncated: false, bytes: Buffer.byteLength(s, 'utf8') }
  if (s.length <= maxBytes) {
    const total = Buffer.byteLength(s, 'utf8')
    if (total <= maxBytes) return { text: s, truncated: false, bytes: total }
  }
  const [units, bytes] = utf8Prefix(s, maxBytes)
  if (units === s.length) return { text: s, truncated: false, bytes }
  return { text: s.slice(0, units), truncated: true, bytes }
}

// ---- boundData ----
//
// The value is first measured into a tree of JSON sizes (UTF-8 bytes of JSON.stringify output).
// Shrinking then chooses two levels, both deterministic:
//   K: the most items any array keeps (arrays longer than K lose their tail),
//   C: the most bytes any string value keeps, counted as its JSON text with quotes.
// Longest strings are cut first because they all meet at the common level C; the longest arrays
// likewise meet at K. K is maximised first with strings at a floor (dropping a log's tail keeps
// whole entries, which reads better than ten thousand entries cut to nothing), then C is
// maximised for that K. Only when even K = 0 and C = 2 ("") do not fit, object entries are
// dropped from the end with the same K (the last resort; the shape can no longer be kept).
// Each evaluation walks the tree once: O(nodes · log(size)) in total.

type Node =
  | { t: 'lit'; text: string; value: null | boolean | number } // fixed JSON text
  | { t: 'str'; s: string; size: number } // size: JSON bytes with quotes, capped (see measure)
  | { t: 'arr'; items: Node[] }
  | { t: 'obj'; entries: Array<[key: string, keyBytes: number, node: Node]> }

const NULL: Node = { t: 'lit', text: 'null', value: null }

/** A string is cut no shorter than this many JSON bytes while array tails are being dropped. */
const STRING_FLOOR = 64

/** JSON-escaped size of one code point (at `i`) and the number of units it spans. */
function jsonCharAt(s: string, i: number): [bytes: number, units: number] {
  const c = s.charCodeAt(i)
  if (c >= 0x20 && c < 0x7f) return [c === 0x22 || c === 0x5c ? 2 : 1, 1]
  if (c < 0x20) return [c === 0x08 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d ? 2 : 6, 1]
  if (c >= 0xd800 && c <= 0xdfff) {
    const d = s.charCodeAt(i + 1)
    if (c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff) return [4, 2]
    return [6, 1] // JSON.stringify escapes a lone surrogate as \udXXX
  }
  return utf8At(s, i)
}

/** JSON size of `s` with quotes, but stops counting past `cap` (exact below it). */
function jsonStringSize(s: string, cap: number): number {
  let bytes = 2
  for (let i = 0; i < s.length && bytes <= cap; ) {
    const [b, u] = jsonCharAt(s, i)
    bytes += b
    i += u
  }
  return bytes
}

/** Longest prefix of `s` whose JSON text with quotes is at most `max` bytes. */
function cutJsonString(s: string, max: number): string {
  let bytes = 2
  let i = 0
  while (i < s.length) {
    const [b, u] = jsonCharAt(s, i)
    if (bytes + b > max) break
    bytes += b
    i += u
  }
  return s.slice(0, i)
}

/** Mirrors JSON.stringify: toJSON, undefined/function/symbol omitted (null in arrays), bigint throws. */
function measure(v: unknown, cap: number, depth: number, onPath: Set<object>): Node | undefined {
  if (v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON === 'function') {
    v = (v as { toJSON(): unknown }).toJSON()
  }
  switch (typeof v) {
    case 'string':
      return { t: 'str', s: v, size: jsonStringSize(v, cap) }
    case 'number':
      return Number.isFinite(v) ? { t: 'lit', text: JSON.stringify(v), value: v } : NULL
    case 'boolean':
      return { t: 'lit', text: String(v), value: v }
    case 'bigint':
      throw new TypeError('cannot bound a bigint: it has no JSON form')
    case 'object': {
      if (v === null) return NULL
      if (depth >= MAX_DEPTH) throw new TypeError(`value nested deeper than ${MAX_DEPTH} levels`)
      if (onPath.has(v)) throw new TypeError('cyclic value')
      onPath.add(v)
      try {
        if (Array.isArray(v)) {
          return { t: 'arr', items: v.map((item) => measure(item, cap, depth + 1, onPath) ?? NULL) }
        }
        const entries: Array<[string, number, Node]> = []
        for (const key of Object.keys(v)) {
          const node = measure((v as Record<string, unknown>)[key], cap, depth + 1, onPath)
          if (node !== undefined) entries.push([key, jsonStringSize(key, Infinity), node])
        }
        return { t: 'obj', entries }
      } finally {
        onPath.delete(v)
      }
    }
    default:
      return undefined // undefined, function, symbol
  }
}

interface Levels {
  items: number // K: items kept per array
  str: number // C: JSON bytes kept per string
  entries: number // object entries kept (Infinity unless in the last resort)
}

/** JSON size of `node` under the given levels. */
function sizeOf(node: Node, lv: Levels): number {
  switch (node.t) {
    case 'lit':
      return node.text.length
    case 'str':
      return Math.min(node.size, lv.str)
    case 'arr': {
      const n = Math.min(node.items.length, lv.items)
      let total = 2 + Math.max(0, n - 1) // brackets, commas
      for (let i = 0; i < n; i++) total += sizeOf(node.items[i]!, lv)
      return total
    }
    case 'obj': {
      const n = Math.min(node.entries.length, lv.entries)
      let total = 2 + Math.max(0, n - 1)
      for (let i = 0; i < n; i++) {
        const [, keyBytes, child] = node.entries[i]!
        total += keyBytes + 1 + sizeOf(child, lv) // key, colon, value
      }
      return total
    }
  }
}

function build(node: Node, lv: Levels): unknown {
  switch (node.t) {
    case 'lit':
      return node.value
    case 'str':
      return node.size <= lv.str ? node.s : cutJsonString(node.s, lv.str)
    case 'arr':
      return node.items.slice(0, lv.items).map((item) => build(item, lv))
    case 'obj': {
      const out: Record<string, unknown> = {}
      for (const [key, , child] of node.entries.slice(0, lv.entries)) {
        Object.defineProperty(out, key, {
          value: build(child, lv),
          enumerable: true,
          writable: true,
          configurable: true,
        })
      }
      return out
    }
  }
}

function maxItems(node: Node): number {
  if (node.t === 'arr') return node.items.reduce((m, item) => Math.max(m, maxItems(item)), node.items.length)
  if (node.t === 'obj')
    return node.entries.reduce((m, [, , child]) => Math.max(m, maxItems(child)), node.entries.length)
  return 0
}

/** Largest integer x in [lo, hi] with fits(x), given fits(lo) holds and fits is monotone. */
function largest(lo: number, hi: number, fits: (x: number) => boolean): number {
  while (lo < hi) {
    const mid = lo + Math.ceil((hi - lo) / 2)
    if (fits(mid)) lo = mid
    else hi = mid - 1
  }
  return lo
}

/**
 * Returns a value whose JSON.stringify output is at most `maxBytes` UTF-8 bytes, keeping every
 * object key and the overall shape where possible (see the strategy above). The result is a new
 * JSON-normalized value (toJSON applied, undefined entries gone); the input is not mutated.
 * Throws a RangeError when not even the emptied root (`""`, `[]`, `{}`, or a literal) fits.
 */
export function boundData(value: unknown, maxBytes: number): { value: unknown; truncated: boolean } {
  checkLimit(maxBytes)
  // Most results fit: one serialization decides, and parsing it back is the normalized copy.
  const json = tryStringify(value)
  if (json !== undefined && (json.length * 3 <= maxBytes || Buffer.byteLength(json, 'utf8') <= maxBytes)) {
    return { value: JSON.parse(json) as unknown, truncated: false }
  }
  // Sizes above maxBytes + 1 are never needed exactly: such a string is cut anyway.
  const root = measure(value, maxBytes + 1, 0, new Set()) ?? NULL
  const all: Levels = { items: Infinity, str: Infinity, entries: Infinity }
  if (sizeOf(root, all) <= maxBytes) return { value: build(root, all), truncated: false }

  const fits = (lv: Levels): boolean => sizeOf(root, lv) <= maxBytes
  const widest = maxItems(root)
  let lv: Levels
  if (fits({ items: 0, str: STRING_FLOOR, entries: Infinity })) {
    const items = largest(0, widest, (k) => fits({ items: k, str: STRING_FLOOR, entries: Infinity }))
    lv = {
      items,
      str: largest(STRING_FLOOR, maxBytes, (c) => fits({ items, str: c, entries: Infinity })),
      entries: Infinity,
    }
  } else if (fits({ items: 0, str: 2, entries: Infinity })) {
    lv = {
      items: 0,
      str: largest(2, STRING_FLOOR, (c) => fits({ items: 0, str: c, entries: Infinity })),
      entries: Infinity,
    }
  } else if (fits({ items: 0, str: 2, entries: 0 })) {
    const entries = largest(0, widest, (e) => fits({ items: 0, str: 2, entries: e }))
    lv = { items: 0, str: largest(2, maxBytes, (c) => fits({ items: 0, str: c, entries })), entries }
  } else {
    throw new RangeError(`maxBytes ${maxBytes} is too small for any JSON form of this value`)
  }
  // K was chosen with strings at the floor; with C settled, more items may fit again.
  if (lv.entries === Infinity) lv = { ...lv, items: largest(lv.items, widest, (k) => fits({ ...lv, items: k })) }
  return { value: build(root, lv), truncated: true }
}

function tryStringify(value: unknown): string | undefined {
  try {
    return JSON.stringify(value)
  } catch {
    return undefined // cycles, bigints: the careful path below reports them
  }
}
