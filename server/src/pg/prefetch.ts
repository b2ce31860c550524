import type pg from 'pg'
import type { Read } from '../state.ts'
import { literal, readSql, rowsByKey, table } from './commit.ts'
import { INDEX_SQL } from './schema.ts'

// The records and index groups State.tx's `reads` name, read in the round trip that takes the
// transaction's locks: the same simple query as BEGIN and the locks, after them, so what they
// read is what a read first thing in fn would have read. Each read named this way is one
// round trip less while the locks are held.

/** What the reads found: records by `${collection}\n${key}` (undefined: absent), groups by `${index}\n${key}`. */
export interface Prefetched {
  records: ReadonlyMap<string, unknown>
  groups: ReadonlyMap<string, readonly unknown[]>
}

export const recordId = (c: string, k: string): string => `${c}\n${k}`
export const groupId = (index: string, key: string): string => `${index}\n${key}`

/** The statements that read `reads`, and how to find their answers among the results of those statements. */
export function prefetchSql(reads: readonly Read[]): {
  statements: string[]
  collect: (results: readonly pg.QueryResult[]) => Prefetched
} {
  const records = reads.flatMap((r) => ('c' in r ? [r] : []))
  const groups = [...new Map(reads.flatMap((r) => ('index' in r ? [[groupId(r.index, r.key), r] as const] : [])))]
  const byTable = readSql(
    records.map((r) => ({ table: table(r.c), k: r.k })),
    false,
  )
  const statements = [...byTable.map((s) => s.sql), ...groups.map(([, g]) => groupSql(g))]
  const collect = (results: readonly pg.QueryResult[]): Prefetched => {
    const found = new Map(byTable.map((s, i) => [s.table, rowsByKey(results[i])]))
    const fetched = new Map(records.map((r) => [recordId(r.c, r.k), found.get(table(r.c))?.get(r.k)]))
    const members = new Map<string, unknown[]>()
    groups.forEach(([id, g], i) => {
      const rows: { k: string | null; doc: unknown }[] = results[byTable.length + i]?.rows ?? []
      const docs = rows.filter((r) => r.k === null).map((r) => r.doc)
      members.set(id, docs)
      if (g.with === undefined) return
      // every key the group names is known: found, or absent
      const named = rowsByKey({ rows: rows.flatMap((r) => (r.k === null ? [] : [{ k: r.k, doc: r.doc }])) })
      for (const doc of docs) {
        const k = (doc as Record<string, unknown>)[g.with.field]
        if (typeof k === 'string') fetched.set(recordId(g.with.c, k), named.get(k))
      }
    })
    return { records: fetched, groups: members }
  }
  return { statements, collect }
}

/**
 * An index group (rows with k NULL), and with `with` the records its members name, in one
 * statement: one snapshot, so every member's named record is there unless it does not exist.
 */
function groupSql(g: Extract<Read, { index: unknown }>): string {
  const ix = INDEX_SQL[g.index]
  const group = `SELECT doc FROM ${ix.table} WHERE ${ix.key} = ${literal(g.key)} AND ${ix.where}`
  if (g.with === undefined) return `SELECT NULL::text AS k, doc FROM (${group}) g`
  const t = table(g.with.c)
  return `WITH g AS (${group}) SELECT NULL::text AS k, doc FROM g UNION ALL SELECT k, doc FROM ${t} WHERE k IN (SELECT doc->>${literal(g.with.field)} FROM g)`
}
