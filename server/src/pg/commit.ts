import type pg from 'pg'
import { applyOp } from '../ops.ts'
import type { Op } from '../state.ts'
import type { CollectionName } from '../types.ts'
import { TABLES } from './schema.ts'

// A transaction's queued writes and its COMMIT, in at most two round trips whatever their
// number: (1) the rows its sets and adds start from, read FOR UPDATE, every table's in one
// query; (2) the ops folded in JS (ops.ts, as the journal folds them), then one delete and one
// multi-row upsert per table, and COMMIT. A transaction that read nothing (State.commit) sends
// its BEGIN and locks with the first of them: a blind write is one round trip. Sent a
// statement per record and COMMIT apart, a lease release with its idempotency mark took four
// round trips after its reads; under the repository's lock each is paid by every transaction
// queued behind it, and each costs this process a socket write (37% of its busy samples on the
// scale bench) and PostgreSQL a parse. A query that carries COMMIT as well must be a simple
// query, which has no parameters: values go in as literals (literal below).

/** One simple query (several statements: one result each), as the transaction's connection runs it. */
export type SimpleQuery = (sql: string) => Promise<pg.QueryResult[]>

/**
 * s as a PostgreSQL string literal. E'…' with backslashes doubled whenever s has one, so it
 * reads the same whatever standard_conforming_strings says. A NUL is refused: the protocol
 * ends a query's text at the first one, and the rest would be read as messages. A regex
 * pass, not pg's escapeLiteral, which builds the literal a character at a time (3.7 ms
 * against 0.04 ms for a 100 KB record).
 */
export function literal(s: string): string {
  if (s.includes('\0')) throw new Error('a NUL character cannot be written to PostgreSQL')
  const quoted = s.replace(/'/g, "''")
  return s.includes('\\') ? `E'${quoted.replace(/\\/g, '\\\\')}'` : `'${quoted}'`
}

export const table = (c: CollectionName): string => {
  const t = TABLES[c]
  if (!t) throw new Error(`unknown collection ${String(c)}`)
  return t
}

const inList = (keys: Iterable<string>): string => [...keys].map(literal).join(', ')

/**
 * Apply ops (in order, atomically with the rest of the transaction) and COMMIT. `opening`:
 * statements to send first, in the same round trip (a blind write's BEGIN and locks).
 */
export async function commitOps(send: SimpleQuery, ops: readonly Op[], opening: readonly string[] = []): Promise<void> {
  const records = new Map<string, Op[]>()
  for (const op of ops) {
    const id = `${op.c}\n${op.k}`
    const list = records.get(id)
    if (list) list.push(op)
    else records.set(id, [op])
  }
  const reads = lockedRowsSql([...records.values()])
  let before = new Map<string, Map<string, unknown>>()
  let first = opening
  if (reads.length > 0) {
    const results = await send([...first, ...reads.map((r) => r.sql)].join(';\n'))
    before = new Map(reads.map((r, i) => [r.table, rowsByKey(results[first.length + i])]))
    first = []
  }
  await send([...first, ...writes([...records.values()], before), 'COMMIT'].join(';\n'))
}

/** The rows of a `SELECT k, doc` result, by key. */
export const rowsByKey = (r: { rows: { k: string; doc: unknown }[] } | undefined): Map<string, unknown> =>
  new Map((r?.rows ?? []).map((row) => [row.k, row.doc]))

/** `SELECT k, doc` of some records, locked FOR UPDATE or not: one statement per table. */
export function readSql(
  records: Iterable<{ table: string; k: string }>,
  forUpdate: boolean,
): { table: string; sql: string }[] {
  const keys = new Map<string, Set<string>>()
  for (const { table: t, k } of records) {
    const set = keys.get(t) ?? new Set<string>()
    set.add(k)
    keys.set(t, set)
  }
  return [...keys].map(([t, ks]) => ({
    table: t,
    sql: `SELECT k, doc FROM ${t} WHERE k IN (${inList(ks)})${forUpdate ? ' FOR UPDATE' : ''}`,
  }))
}

const readsFirst = (ops: readonly Op[]): boolean => 'at' in (ops[0] as Op) && (ops[0] as Op).c !== 'counters'

/** The reads of the rows a set or add starts from, locked until COMMIT. */
function lockedRowsSql(records: readonly Op[][]): { table: string; sql: string }[] {
  return readSql(
    records.filter(readsFirst).map((ops) => ({ table: table((ops[0] as Op).c), k: (ops[0] as Op).k })),
    true,
  )
}

/** The statements that leave every record as its ops say: per table, the deletes, then one upsert. */
function writes(records: readonly Op[][], before: Map<string, Map<string, unknown>>): string[] {
  const upserts = new Map<string, string[]>()
  const deletes = new Map<string, string[]>()
  const push = (m: Map<string, string[]>, t: string, s: string): void => {
    const list = m.get(t)
    if (list) list.push(s)
    else m.set(t, [s])
  }
  for (const ops of records) {
    const { c, k } = ops[0] as Op
    if (c === 'counters') {
      // counters hold a number, not a document: only a put or delete means anything
      const last = ops.filter((op) => !('at' in op)).at(-1)
      if (last === undefined || 'at' in last) continue
      if (last.v === null) push(deletes, 'counters', literal(k))
      else {
        if (!Number.isSafeInteger(last.v)) throw new Error(`counter ${k} must be an integer, not ${String(last.v)}`)
        push(upserts, 'counters', `(${literal(k)}, ${String(last.v)})`)
      }
      continue
    }
    const t = table(c)
    const read = readsFirst(ops)
    const was = read ? before.get(t)?.get(k) : undefined
    // In jsonb's key order throughout, so an add's "same JSON" check cannot depend on it.
    const start = jsonbOrder(was)
    let after = start
    for (const op of ops) after = applyOp(after, 'add' in op ? { ...op, add: jsonbOrder(op.add) } : op)
    if (after === start && was !== undefined) continue
    if (after === undefined) {
      if (was !== undefined || !read) push(deletes, t, literal(k))
      continue
    }
    push(upserts, t, `(${literal(k)}, ${literal(JSON.stringify(after))}::jsonb)`)
  }
  const out: string[] = []
  for (const [t, keys] of deletes) out.push(`DELETE FROM ${t} WHERE k IN (${keys.join(', ')})`)
  for (const [t, rows] of upserts) {
    const value = t === 'counters' ? 'n' : 'doc'
    out.push(
      `INSERT INTO ${t} (k, ${value}) VALUES ${rows.join(', ')} ON CONFLICT (k) DO UPDATE SET ${value} = EXCLUDED.${value}`,
    )
  }
  return out
}

/**
 * v with its object keys in the order jsonb keeps them (shorter first, then by UTF-8 bytes),
 * so an AddOp's "same JSON" check compares an element read back from jsonb with the new
 * one as the journal does, whatever order the caller wrote the keys in.
 */
export function jsonbOrder(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(jsonbOrder)
  if (v === null || typeof v !== 'object') return v
  const keys = Object.keys(v).sort(
    (a, b) => Buffer.byteLength(a) - Buffer.byteLength(b) || Buffer.compare(Buffer.from(a), Buffer.from(b)),
  )
  const out: Record<string, unknown> = {}
  for (const k of keys)
    Object.defineProperty(out, k, {
      value: jsonbOrder((v as Record<string, unknown>)[k]),
      enumerable: true,
      writable: true,
      configurable: true,
    })
  return out
}
