import { invalid } from './errors.ts'

export const nowIso = (): string => new Date().toISOString()

export const ZERO_OID = '0000000000000000000000000000000000000000'

// Cursors are opaque to clients; inside they are base64url JSON so a tampered cursor is
// detected (invalid) rather than silently misread.
export function encodeCursor(v: Record<string, string | number>): string {
  return Buffer.from(JSON.stringify(v)).toString('base64url')
}

export function decodeCursor(s: string | undefined): Record<string, unknown> | undefined {
  if (s === undefined || s === '') return undefined
  try {
    const v: unknown = JSON.parse(Buffer.from(s, 'base64url').toString('utf8'))
    if (v && typeof v === 'object' && !Array.isArray(v)) return v as Record<string, unknown>
  } catch {
    // fall through
  }
  throw invalid('malformed cursor', { field: 'cursor' })
}

/** A non-negative safe integer (a position or a count a cursor may carry). */
export const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0

export function offsetFromCursor(s: string | undefined): number {
  const c = decodeCursor(s)
  if (!c) return 0
  const o = c['o']
  if (!isCount(o)) throw invalid('malformed cursor', { field: 'cursor' })
  return o
}

export function parseLimit(raw: string | undefined, def: number, max: number): number {
  if (raw === undefined || raw === '') return def
  if (!/^[0-9]{1,6}$/.test(raw)) throw invalid('limit must be a positive integer', { field: 'limit' })
  const n = Number(raw)
  if (n < 1) throw invalid('limit must be at least 1', { field: 'limit' })
  return Math.min(n, max)
}

/** Offset pagination over an in-memory list. */
export function page<T>(items: T[], cursor: string | undefined, limit: number): { items: T[]; next_cursor?: string } {
  const off = offsetFromCursor(cursor)
  const slice = items.slice(off, off + limit)
  return off + limit < items.length ? { items: slice, next_cursor: encodeCursor({ o: off + limit }) } : { items: slice }
}

/** Parse "8h", "30m", "90s", "2d" or plain seconds. */
export function parseDuration(s: string): number {
  const m = /^([0-9]+)\s*([smhd]?)$/.exec(s.trim())
  if (!m) throw new Error(`bad duration: ${s}`)
  const n = Number(m[1])
  const mult = { '': 1, s: 1, m: 60, h: 3600, d: 86400 }[m[2] ?? ''] ?? 1
  return n * mult
}

/** Run `load` once per key at a time: callers arriving while it runs get the same promise. */
export function once<T>(inflight: Map<string, Promise<T>>, key: string, load: () => Promise<T>): Promise<T> {
  let p = inflight.get(key)
  if (!p) {
    p = load().finally(() => inflight.delete(key))
    inflight.set(key, p)
  }
  return p
}
