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
  const statements = [
    ...byTable.map((s) => s.sql),
    ...groups.map(([, g]) => {
      const ix = INDEX_SQL[g.index]
      return `SELECT doc FROM ${ix.table} WHERE ${ix.key} = ${literal(g.key)} AND ${ix.where}`
    }),
  ]
  const collect = (results: readonly pg.QueryResult[]): Prefetched => {
    const found = new Map(byTable.map((s, i) => [s.table, rowsByKey(results[i])]))
    return {
      records: new Map(records.map((r) => [recordId(r.c, r.k), found.get(table(r.c))?.get(r.k)])),
      groups: new Map(
        groups.map(([id], i) => [
          id,
          (results[byTable.length + i]?.rows ?? []).map((row: { doc: unknown }) => row.doc),
        ]),
      ),
    }
  }
  return { statements, collect }
}
