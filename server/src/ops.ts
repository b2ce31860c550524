import type { Op } from './state.ts'

// What one op does to one record, with no storage around it: the journal applies it to its
// in-memory tables, the PostgreSQL backend to the row it read in its transaction. Pure and
// copy-on-write, so a record handed out earlier is never changed under its holder.

/**
 * The record after op, given the record before it (undefined: absent). A put returns its
 * value (undefined for a delete); set and add on an absent record, or with an empty path,
 * change nothing; add of an element already there (same JSON) changes nothing.
 */
export function applyOp(before: unknown, op: Op): unknown {
  if (!('at' in op)) return op.v === null ? undefined : op.v
  if (before === undefined || !Array.isArray(op.at) || op.at.length === 0) return before
  if ('add' in op) {
    const cur = getIn(before, op.at)
    const list = Array.isArray(cur) ? cur : []
    const key = JSON.stringify(op.add)
    if (list.some((x) => JSON.stringify(x) === key)) return before
    return setIn(before, op.at, 0, [...list, op.add])
  }
  return setIn(before, op.at, 0, op.v)
}

function getIn(obj: unknown, at: string[]): unknown {
  let cur = obj
  for (const k of at) {
    if (cur === null || typeof cur !== 'object' || !Object.hasOwn(cur, k)) return undefined
    cur = (cur as Record<string, unknown>)[k]
  }
  return cur
}

function setIn(obj: unknown, at: string[], i: number, v: unknown): unknown {
  const copy: Record<string, unknown> =
    obj !== null && typeof obj === 'object' && !Array.isArray(obj) ? { ...(obj as Record<string, unknown>) } : {}
  const key = at[i] as string
  if (i === at.length - 1) {
    if (v === undefined) delete copy[key]
    // defineProperty: a key such as "__proto__" (a file of that name) stays a plain field
    else Object.defineProperty(copy, key, { value: v, enumerable: true, writable: true, configurable: true })
    return copy
  }
  const child = Object.hasOwn(copy, key) ? copy[key] : undefined
  Object.defineProperty(copy, key, {
    value: setIn(child, at, i + 1, v),
    enumerable: true,
    writable: true,
    configurable: true,
  })
  return copy
}
