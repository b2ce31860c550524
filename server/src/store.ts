import fs from 'node:fs'
import path from 'node:path'
import { COLLECTIONS, type CollectionName, type Collections } from './types.ts'

// Durable state: a snapshot (state.json, replaced atomically: temp + fsync + rename +
// directory fsync) plus an append-only journal (journal.log, one JSON line per commit,
// fsync'd before the commit is acknowledged). Replay applies the journal over the
// snapshot; a torn last line (kill -9 mid-write) was never acknowledged and is dropped.
// An op is a full "put" of a record (or a delete), or a "set" of one field at a path
// inside a record (or its removal) -- e.g. one path of a workspace's overlay, so a file
// write journals that path and not the whole workspace. Both are idempotent, so
// replaying a journal over a snapshot that already contains its effects is harmless.
//
// Commits are synchronous on purpose: a check-then-commit sequence with no `await` in
// between can never interleave with another request (Node runs it to completion), which
// is what makes "20 simultaneous claims -> exactly one run" hold.

export type PutOp = { [C in CollectionName]: { c: C; k: string; v: Collections[C] | null } }[CollectionName]
/** Set the field at path `at` inside record k to v; without v (undefined), remove it. No-op if k is absent. */
export interface SetOp {
  c: CollectionName
  k: string
  at: string[]
  v?: unknown
}
export type Op = PutOp | SetOp

type Tables = { [C in CollectionName]: Map<string, Collections[C]> }

const COMPACT_BYTES = 4 * 1024 * 1024

export class Store {
  readonly dir: string
  private tables: Tables
  private fd: number | undefined
  private journalBytes = 0
  /** token hash -> token id, kept in step with the tokens table by apply() */
  private tokenIds = new Map<string, string>()

  private constructor(dir: string) {
    this.dir = dir
    this.tables = emptyTables()
    fs.mkdirSync(dir, { recursive: true })
    this.load()
    // Fold the journal into a fresh snapshot at open so replay stays short.
    this.compact()
    this.fd = fs.openSync(this.journalPath, 'a', 0o600)
  }

  static open(dir: string): Store {
    return new Store(dir)
  }

  private get snapshotPath(): string {
    return path.join(this.dir, 'state.json')
  }
  private get journalPath(): string {
    return path.join(this.dir, 'journal.log')
  }

  get<C extends CollectionName>(c: C, k: string): Collections[C] | undefined {
    const v = this.tables[c].get(k)
    return v === undefined ? undefined : v
  }

  all<C extends CollectionName>(c: C): Collections[C][] {
    return [...this.tables[c].values()]
  }

  entries<C extends CollectionName>(c: C): [string, Collections[C]][] {
    return [...this.tables[c].entries()]
  }

  /** Next value of a named counter, as an op to commit with the record that uses it. */
  nextId(name: string, prefix: string): { id: string; op: Op } {
    const n = (this.tables.counters.get(name) ?? 0) + 1
    return { id: `${prefix}${n}`, op: { c: 'counters', k: name, v: n } }
  }

  /** Durably apply ops as one atomic unit; returns only after fsync. */
  commit(ops: Op[]): void {
    if (ops.length === 0) return
    const line = JSON.stringify({ ops }) + '\n'
    const buf = Buffer.from(line, 'utf8')
    const fd = this.fd
    if (fd === undefined) throw new Error('store is closed')
    let off = 0
    while (off < buf.length) off += fs.writeSync(fd, buf, off, buf.length - off)
    fs.fsyncSync(fd)
    this.journalBytes += buf.length
    for (const op of ops) this.apply(op)
    if (this.journalBytes > COMPACT_BYTES) {
      this.compact()
    }
  }

  close(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd)
    this.fd = undefined
  }

  /** The token whose secret hashes to h (a map lookup, not a scan). */
  tokenByHash(h: string): Collections['tokens'] | undefined {
    const id = this.tokenIds.get(h)
    return id === undefined ? undefined : this.tables.tokens.get(id)
  }

  private apply(op: Op): void {
    if (op.c === 'tokens') {
      const old = this.tables.tokens.get(op.k)
      if (old && this.tokenIds.get(old.hash) === op.k) this.tokenIds.delete(old.hash)
      this.applyRaw(op)
      const now = this.tables.tokens.get(op.k)
      if (now) this.tokenIds.set(now.hash, op.k)
      return
    }
    this.applyRaw(op)
  }

  private applyRaw(op: Op): void {
    const t = this.tables[op.c] as Map<string, unknown>
    if ('at' in op) {
      const rec = t.get(op.k)
      if (rec === undefined || !Array.isArray(op.at) || op.at.length === 0) return
      // Copy-on-write: records handed out earlier are never mutated under their holders.
      t.set(op.k, setIn(rec, op.at, 0, op.v))
      return
    }
    if (op.v === null) t.delete(op.k)
    else t.set(op.k, op.v)
  }

  private load(): void {
    if (fs.existsSync(this.snapshotPath)) {
      const snap = JSON.parse(fs.readFileSync(this.snapshotPath, 'utf8')) as Record<string, Record<string, unknown>>
      for (const c of COLLECTIONS) {
        const rows = snap[c] ?? {}
        for (const [k, v] of Object.entries(rows)) this.apply({ c, k, v } as Op)
      }
    }
    if (fs.existsSync(this.journalPath)) {
      const text = fs.readFileSync(this.journalPath, 'utf8')
      const lines = text.split('\n')
      // Only newline-terminated lines were fully written; the remainder is a torn tail.
      for (let i = 0; i < lines.length - 1; i++) {
        const line = lines[i]
        if (!line) continue
        let rec: { ops?: Op[] }
        try {
          rec = JSON.parse(line) as { ops?: Op[] }
        } catch {
          break // corrupt line: nothing after it can have been acknowledged after it
        }
        for (const op of rec.ops ?? []) {
          if ((COLLECTIONS as readonly string[]).includes(op.c)) this.apply(op)
        }
      }
    }
  }

  private compact(): void {
    const snap: Record<string, Record<string, unknown>> = {}
    for (const c of COLLECTIONS) snap[c] = Object.fromEntries(this.tables[c])
    const tmp = this.snapshotPath + '.tmp'
    const fd = fs.openSync(tmp, 'w', 0o600)
    fs.writeSync(fd, JSON.stringify(snap))
    fs.fsyncSync(fd)
    fs.closeSync(fd)
    fs.renameSync(tmp, this.snapshotPath)
    fsyncDir(this.dir)
    // Only after the snapshot is durable may the journal be emptied.
    if (this.fd !== undefined) {
      fs.ftruncateSync(this.fd, 0)
      fs.fsyncSync(this.fd)
    } else {
      fs.writeFileSync(this.journalPath, '', { mode: 0o600 })
    }
    this.journalBytes = 0
  }
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

export function fsyncDir(dir: string): void {
  try {
    const fd = fs.openSync(dir, 'r')
    try {
      fs.fsyncSync(fd)
    } finally {
      fs.closeSync(fd)
    }
  } catch {
    // some filesystems refuse fsync on directories; rename is still atomic there
  }
}

function emptyTables(): Tables {
  return {
    tokens: new Map(),
    repos: new Map(),
    workspaces: new Map(),
    proposals: new Map(),
    reviews: new Map(),
    tasks: new Map(),
    runs: new Map(),
    leases: new Map(),
    counters: new Map(),
    intents: new Map(),
  }
}
