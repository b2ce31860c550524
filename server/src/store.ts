import { AsyncLocalStorage } from 'node:async_hooks'
import fs from 'node:fs'
import path from 'node:path'
import { Cold, ColdFile, type SpillIo } from './cold.ts'
import { AgwpError } from './errors.ts'
import { Lru } from './lru.ts'
import { applyOp } from './ops.ts'
import type { IndexCollections, IndexName, Indexed, Op, Scope } from './state.ts'
import { COLLECTIONS, type CollectionName, type Collections } from './types.ts'

// Durable state: a snapshot (state.json, replaced atomically: temp + fsync + rename +
// directory fsync) plus an append-only journal (journal.log, one JSON line per commit,
// fsync'd before the commit is acknowledged). Replay applies the journal over the
// snapshot. A torn tail (kill -9 mid-write: bytes after the last newline) was never
// acknowledged: it is truncated at open, with a warning. A damaged line anywhere else
// means acknowledged state may be gone, so the store refuses to open, names the line and
// leaves the file as it is for the operator.
//
// A failed or short append (disk full, I/O error) is never acknowledged and never
// applied in memory: the journal is cut back to its last good length before the error
// is thrown, so no later line can sit behind a torn one. If even that cut fails, the
// store takes no writes until a later attempt can make it.
// An op is a full "put" of a record (or a delete), or a "set" of one field at a path
// inside a record (or its removal) -- e.g. one path of a workspace's overlay, so a file
// write journals that path and not the whole workspace. Both are idempotent, so
// replaying a journal over a snapshot that already contains its effects is harmless.
//
// Commits are synchronous: a commit's line is appended and applied in one step. Races between
// requests are decided above this file, by State transactions and their locks
// (journal-state.ts), which end in exactly one commit each.
//
// Group commit: commit() appends its line (write, no fsync) and applies it in memory at
// once; the fsync runs off the event loop and covers every line appended meanwhile, so
// one fsync acknowledges many requests and the event loop never blocks on the disk.
// Nothing leaves the server before it is durable: each request runs in a scope
// (requestScope) that records the journal offset of every un-fsynced line it wrote or
// whose collection it read, and the HTTP layer awaits settle(scope) before it answers.
// A failed fsync cuts the journal back to its last durable length, reloads memory from
// disk, and fails every request that depended on the lost lines (507 on a full disk).
//
// Cold records: every record ever made stays in the state (workspaces, proposals, runs,
// reviews pile up with the server's age), but only the HOT_RECORDS of each collection used
// last are kept in memory as objects. Memory keeps only where each other record's JSON text
// is (cold.ts): in the current snapshot, which compaction writes anyway and whose fd stays
// open for reads, or, for a record changed since that snapshot was written, in a spill file
// that the next compaction empties. Kept as text, a record cost its JSON size (0.85 KB a
// record in a 10-minute soak that kept 50,000, and memory grew without bound); a position
// costs tens of bytes. A record the spill file cannot take (a full disk) stays in memory as
// its text. get() reads a record back and counts as a use; reads of many records (all,
// entries, byIndex) read copies and leave the hot set as it was, so a list cannot flush it.
// Compaction streams the snapshot out in chunks, so it never holds the whole state as one
// string either.

/** The journal's system calls, replaceable so tests can inject failed and short writes. */
export interface JournalIo {
  /** write up to len bytes of buf from off; returns the count written (may be short) */
  write(fd: number, buf: Buffer, off: number, len: number): number
  fsync(fd: number): void
  /** the group commit's fsync, off the event loop */
  fsyncAsync(fd: number, done: (err: Error | null) => void): void
  truncate(fd: number, len: number): void
}

export const fsJournalIo: JournalIo = {
  write: (fd, buf, off, len) => fs.writeSync(fd, buf, off, len),
  fsync: (fd) => fs.fsyncSync(fd),
  fsyncAsync: (fd, done) => fs.fsync(fd, (err) => done(err)),
  truncate: (fd, len) => fs.ftruncateSync(fd, len),
}

/** The scope of the request being handled (set by the HTTP layer with requestScope.run). */
export const requestScope = new AsyncLocalStorage<Scope>()

export interface StoreOptions {
  io?: JournalIo
  /** where warnings go (a torn tail truncated at open, a compaction that failed) */
  log?: (msg: string) => void
  /** how many records of each collection stay in memory (HOT_RECORDS; tests make it tiny) */
  hotRecords?: number
  /** the spill file's writes, replaceable so tests can make them fail */
  spillIo?: SpillIo
  /** the journal size that first makes a commit compact (COMPACT_BYTES; tests make it tiny) */
  compactBytes?: number
}

/** Records of each collection kept in memory as objects; the others are cold (see above). */
export const HOT_RECORDS = 1024

/**
 * A record; its JSON text, kept in memory; or where that text is on disk. No collection
 * holds strings or Cold, so the three never mix up.
 */
type Cell<C extends CollectionName> = Collections[C] | string | Cold
type Tables = { [C in CollectionName]: Map<string, Cell<C>> }
/** The keys of each collection's in-memory records, least recently used first. */
type Hot = Record<CollectionName, Lru<string, true>>

type IndexDef = { [C in CollectionName]: { c: C; key: (v: Collections[C]) => string | undefined } }[CollectionName]
/**
 * Secondary indexes: the ids of a collection's records grouped by a key (a record whose key
 * is undefined is left out), kept in step by apply(). A request that needs the reviews of
 * one proposal, or the unreleased leases of one run or repository, reads those records
 * instead of copying the whole table, which grows with history (every review and lease
 * ever made), so its cost does not grow with the server's age.
 */
const INDEXES = {
  reviewsByProposal: { c: 'reviews', key: (r) => r.proposal },
  unreleasedLeasesByRun: { c: 'leases', key: (l) => (l.released ? undefined : l.run_id) },
  unreleasedLeasesByRepo: { c: 'leases', key: (l) => (l.released ? undefined : l.repo) },
  proposalsByRepoState: { c: 'proposals', key: (p) => `${p.repo}\n${p.state}` },
  tasksByRepo: { c: 'tasks', key: (t) => t.repo },
  /** the minute a key expires in (ISO 8601 up to the minute), so a sweep reads only expired ones */
  idempotencyByExpiry: { c: 'idempotency', key: (r) => r.expires_at.slice(0, 16) },
} satisfies { [N in IndexName]: { c: IndexCollections[N]; key: (v: Indexed<N>) => string | undefined } }
type Indexes = Record<IndexName, Map<string, Set<string>>>
/** The indexes over each collection (most have none). */
const INDEXES_OF = new Map<CollectionName, [IndexName, IndexDef][]>()
for (const [name, def] of Object.entries(INDEXES) as [IndexName, IndexDef][])
  INDEXES_OF.set(def.c, [...(INDEXES_OF.get(def.c) ?? []), [name, def]])

const COMPACT_BYTES = 4 * 1024 * 1024
/** Compaction writes the snapshot in pieces of about this size. */
const SNAPSHOT_CHUNK = 1024 * 1024

export class Store {
  readonly dir: string
  /** replaceable for fault injection (tests); production uses fsJournalIo */
  io: JournalIo
  private readonly log: (msg: string) => void
  private tables: Tables
  private fd: number | undefined
  /** length of the journal's durable, whole lines: where the next append starts */
  private journalBytes = 0
  /** a failed append could not be cut back: no write is taken until it can */
  private broken = false
  /** journal offset known to be on disk (fsync'd) */
  private durable = 0
  /** bumped when offsets change meaning: a compaction (all durable) or a failed fsync */
  private epoch = 0
  /** epochs that ended in a failed fsync: scopes from them lost state */
  private failedEpochs = new Map<number, unknown>()
  private flushing = false
  private waiters: { target: number; epoch: number; resolve: () => void; reject: (e: unknown) => void }[] = []
  /** collection -> offset just after its latest line (this epoch) */
  private dirty = new Map<CollectionName, number>()
  private readonly compactBytes: number
  private nextCompact: number
  /** token hash -> token id, kept in step with the tokens table by apply() */
  private tokenIds = new Map<string, string>()
  private indexes: Indexes = emptyIndexes()
  private readonly hotRecords: number
  private hot: Hot
  /** the snapshot last written, open for reads of the cold records in it */
  private snap: ColdFile | undefined
  /** cold records changed since that snapshot was written */
  private readonly spill: ColdFile
  /** off while loading: the compaction that follows moves every record to the snapshot */
  private spilling = false
  /** a record whose text sits unchanged on disk (read back, or written by compaction): dropped, it needs no write */
  private coldOf = new WeakMap<object, Cold>()

  private constructor(dir: string, opts: StoreOptions) {
    this.dir = dir
    this.io = opts.io ?? fsJournalIo
    this.log = opts.log ?? ((m: string) => process.stderr.write(m + '\n'))
    this.hotRecords = opts.hotRecords ?? HOT_RECORDS
    this.compactBytes = opts.compactBytes ?? COMPACT_BYTES
    this.nextCompact = this.compactBytes
    this.tables = emptyTables()
    this.hot = this.emptyHot()
    fs.mkdirSync(dir, { recursive: true })
    this.spill = ColdFile.scratch(dir, opts.spillIo)
    try {
      this.load()
    } catch (e) {
      this.spill.close()
      throw e
    }
    // Fold the journal into a fresh snapshot at open so replay stays short. A full disk
    // must not stop a server from starting (reads keep working): the journal stays.
    try {
      this.compact()
    } catch (e) {
      this.log(`ag-server: warning: could not compact the journal at open (${errText(e)}); replaying it as is`)
    }
    this.spilling = true
    try {
      this.fd = fs.openSync(this.journalPath, 'a', 0o600)
    } catch (e) {
      this.spill.close()
      this.snap?.close()
      throw e
    }
    this.journalBytes = fs.fstatSync(this.fd).size
    this.durable = this.journalBytes
    // Bound, so a view made with Object.create(store) (idempotency.ts) that calls them
    // still updates this store's group-commit state, never fields of the view.
    this.flush = this.flush.bind(this)
    this.settle = this.settle.bind(this)
    this.newScope = this.newScope.bind(this)
    this.close = this.close.bind(this)
  }

  static open(dir: string, opts: StoreOptions = {}): Store {
    return new Store(dir, opts)
  }

  private get snapshotPath(): string {
    return path.join(this.dir, 'state.json')
  }
  private get journalPath(): string {
    return path.join(this.dir, 'journal.log')
  }

  get<C extends CollectionName>(c: C, k: string): Collections[C] | undefined {
    this.noteRead(c)
    return this.use(c, k)
  }

  /** Every record of c (cold ones read as copies; the hot set is left as it was). */
  all<C extends CollectionName>(c: C): Collections[C][] {
    this.noteRead(c)
    return Array.from(this.tables[c].values(), recordOf)
  }

  entries<C extends CollectionName>(c: C): [string, Collections[C]][] {
    this.noteRead(c)
    return Array.from(this.tables[c], ([k, v]) => [k, recordOf(v)])
  }

  /** Record k of c as an object, read back and kept in memory if it was cold, and marked as just used. */
  private use<C extends CollectionName>(c: C, k: string): Collections[C] | undefined {
    const t = this.tables[c]
    const v = t.get(k)
    if (v === undefined) return undefined
    if (typeof v === 'string' || v instanceof Cold) {
      const o = recordOf<Collections[C]>(v)
      if (v instanceof Cold) this.coldOf.set(o as object, v)
      t.set(k, o)
      this.hot[c].set(k, true)
      return o
    }
    this.hot[c].get(k)
    return v
  }

  /** One LRU of in-memory keys per collection; a key it drops has its record moved out. */
  private emptyHot(): Hot {
    const pack = (c: CollectionName) => (k: string) => {
      const t = this.tables[c] as Map<string, unknown>
      const v = t.get(k)
      if (v === null || typeof v !== 'object' || v instanceof Cold) return
      const unchanged = this.coldOf.get(v)
      if (unchanged) return void t.set(k, unchanged)
      const text = JSON.stringify(v)
      t.set(k, (this.spilling && this.spill.append(text)) || text)
    }
    return Object.fromEntries(
      COLLECTIONS.map((c) => [c, new Lru<string, true>(this.hotRecords, () => 1, pack(c))]),
    ) as Hot
  }

  /** A request that read collection c may answer only once c's latest line is durable. */
  private noteRead(c: CollectionName): void {
    const d = this.dirty.get(c)
    if (d === undefined || d <= this.durable) return
    const scope = requestScope.getStore()
    if (scope) this.need(scope, d)
  }

  private need(scope: Scope, offset: number): void {
    if (scope.epoch !== this.epoch) {
      // offsets of a finished epoch: keep the failure visible, else start over
      if (!this.failedEpochs.has(scope.epoch)) scope.epoch = this.epoch
      else return
      scope.needs = 0
    }
    if (offset > scope.needs) scope.needs = offset
  }

  /** A fresh request scope (see requestScope). */
  newScope(): Scope {
    return { needs: 0, epoch: this.epoch }
  }

  /**
   * Resolves once everything the scope depends on is durable; rejects (507 on a full
   * disk) if an fsync failed and state the scope saw or wrote was lost.
   */
  settle(scope: Scope): Promise<void> {
    if (this.failedEpochs.has(scope.epoch)) return Promise.reject(this.failedEpochs.get(scope.epoch))
    if (scope.epoch !== this.epoch || scope.needs <= this.durable) return Promise.resolve()
    return this.waitFor(scope.needs)
  }

  /** Resolves once every line appended so far is durable. */
  flush(): Promise<void> {
    return this.journalBytes <= this.durable ? Promise.resolve() : this.waitFor(this.journalBytes)
  }

  private waitFor(target: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.waiters.push({ target, epoch: this.epoch, resolve, reject })
      this.startFlush()
    })
  }

  private startFlush(): void {
    const fd = this.fd
    if (this.flushing || fd === undefined || this.durable >= this.journalBytes) return
    this.flushing = true
    const target = this.journalBytes
    const epoch = this.epoch
    this.io.fsyncAsync(fd, (err) => {
      this.flushing = false
      if (epoch === this.epoch && this.fd === fd) {
        if (err) this.flushFailed(err)
        else {
          this.durable = Math.max(this.durable, target)
          this.settleWaiters()
        }
      }
      this.startFlush()
    })
  }

  private settleWaiters(): void {
    const keep: typeof this.waiters = []
    for (const w of this.waiters) {
      if (w.epoch !== this.epoch || w.target <= this.durable) w.resolve()
      else keep.push(w)
    }
    this.waiters = keep
  }

  /**
   * An fsync failed: the lines after `durable` may not be on disk. Cut the journal back
   * to it, reload memory from what is durable, fail everyone who depended on the rest.
   */
  private flushFailed(err: Error): void {
    const e = storageError(err)
    this.log(`ag-server: journal fsync failed (${errText(err)}); unacknowledged writes are dropped`)
    const fd = this.fd as number
    this.journalBytes = this.durable
    try {
      this.io.truncate(fd, this.durable)
    } catch {
      this.broken = true // the next commit retries the cut-back before writing
    }
    this.failedEpochs.set(this.epoch, e)
    this.epoch++
    this.dirty.clear()
    this.tables = emptyTables()
    this.hot = this.emptyHot()
    this.tokenIds.clear()
    this.indexes = emptyIndexes()
    // Every cold record is read again from the files: the spill file starts over (its
    // records stay as text until the next compaction moves them to the snapshot).
    this.spill.reset()
    this.coldOf = new WeakMap()
    this.spilling = false
    this.load(this.durable)
    this.spilling = true
    const waiters = this.waiters
    this.waiters = []
    for (const w of waiters) w.reject(e)
  }

  /** Next value of a named counter, as an op to commit with the record that uses it. */
  nextId(name: string, prefix: string): { id: string; op: Op } {
    const n = (this.use('counters', name) ?? 0) + 1
    return { id: `${prefix}${n}`, op: { c: 'counters', k: name, v: n } }
  }

  /**
   * Durably apply ops as one atomic unit; returns only after fsync. Throws (and changes
   * nothing, on disk or in memory) when the line cannot be made durable: 507
   * `storage_full` when the disk or quota is full, the system error otherwise.
   */
  commit(ops: Op[]): void {
    if (ops.length === 0) return
    const fd = this.fd
    if (fd === undefined) throw new Error('store is closed')
    if (this.broken) this.cutBack(fd)
    const buf = Buffer.from(JSON.stringify({ ops }) + '\n', 'utf8')
    const start = this.journalBytes
    try {
      let off = 0
      while (off < buf.length) {
        const n = this.io.write(fd, buf, off, buf.length - off)
        if (!(n > 0)) throw Object.assign(new Error('journal write made no progress'), { code: 'EIO' })
        off += n
      }
    } catch (e) {
      // Nothing after this point may follow a torn line: cut it off before anything else.
      try {
        this.cutBack(fd)
      } catch {
        // broken stays set: the next commit tries again before writing
      }
      throw storageError(e)
    }
    this.journalBytes = start + buf.length
    for (const op of ops) {
      this.apply(op)
      this.dirty.set(op.c, this.journalBytes)
    }
    const scope = requestScope.getStore()
    if (scope) this.need(scope, this.journalBytes)
    this.startFlush()
    // The spill file counts too: it grows by a record's whole text when a small change
    // turns cold, and only compaction empties it, so its size stays within the snapshot's.
    if (this.journalBytes > this.nextCompact || this.spill.size > this.nextCompact) {
      try {
        // The snapshot is rewritten whole (synchronously): compact again only after the
        // journal has grown as large as it, so compaction costs O(1) per journaled byte
        // however large the state grows, instead of a full rewrite every 4 MiB.
        this.nextCompact = Math.max(this.compactBytes, this.compact())
      } catch (e) {
        // The commit itself is durable in the journal; compaction retries after more growth.
        this.nextCompact = Math.max(this.journalBytes, this.spill.size) + this.compactBytes / 4
        this.log(`ag-server: warning: journal compaction failed (${errText(e)}); will retry`)
      }
    }
  }

  /** Cut the journal back to its last good length; on failure take no writes until it works. */
  private cutBack(fd: number): void {
    this.broken = true
    try {
      this.io.truncate(fd, this.journalBytes)
      this.io.fsync(fd)
    } catch (e) {
      throw storageError(e, 'the journal could not be restored after a failed write; writes are refused until it can')
    }
    this.broken = false
  }

  /** Close; whatever was appended is fsync'd first (offline CLI use commits, then closes). */
  close(): void {
    const fd = this.fd
    if (fd === undefined) return
    let failed: unknown
    if (this.durable < this.journalBytes) {
      try {
        this.io.fsync(fd)
        this.durable = this.journalBytes
      } catch (e) {
        failed = storageError(e)
        this.log(`ag-server: journal fsync at close failed: ${errText(e)}`)
      }
    }
    // An fsync still in flight belongs to this journal: a new epoch makes its callback a
    // no-op, so it can never act on the descriptor after close (the number may be reused
    // by the next store opened in this process).
    this.epoch++
    const waiters = this.waiters
    this.waiters = []
    for (const w of waiters) failed === undefined ? w.resolve() : w.reject(failed)
    this.fd = undefined
    fs.closeSync(fd)
    this.spill.close()
    this.snap?.close()
    this.snap = undefined
  }

  /** How many records are in memory as objects, in memory as text, and on disk (see the top); the spill file's size. */
  residency(): { objects: number; texts: number; onDisk: number; spillBytes: number } {
    const n = { objects: 0, texts: 0, onDisk: 0, spillBytes: this.spill.size }
    for (const c of COLLECTIONS)
      for (const v of this.tables[c].values()) {
        if (v instanceof Cold) n.onDisk++
        else if (typeof v === 'string') n.texts++
        else n.objects++
      }
    return n
  }

  /** The token whose secret hashes to h (a map lookup, not a scan). */
  tokenByHash(h: string): Collections['tokens'] | undefined {
    const id = this.tokenIds.get(h)
    return id === undefined ? undefined : this.use('tokens', id)
  }

  /** The records of an index's collection whose key is `key` (see INDEXES), in no set order; like all(), uses none. */
  byIndex<N extends IndexName>(name: N, key: string): Indexed<N>[] {
    const def = INDEXES[name]
    const t = this.tables[def.c] as Map<string, Cell<IndexCollections[N]>>
    const out: Indexed<N>[] = []
    for (const id of this.idsByIndex(name, key)) {
      const v = t.get(id)
      if (v !== undefined) out.push(recordOf(v))
    }
    return out
  }

  /** The ids of the records byIndex would answer, without reading any (a page of them is read with get). */
  idsByIndex(name: IndexName, key: string): string[] {
    this.noteRead(INDEXES[name].c)
    return [...(this.indexes[name].get(key) ?? [])]
  }

  /** The keys an index holds records under, in no set order. */
  indexKeys(name: IndexName): string[] {
    this.noteRead(INDEXES[name].c)
    return [...this.indexes[name].keys()]
  }

  /** Move record k of collection c in every index over c from its key before a change to its key after. */
  private reindex(c: CollectionName, k: string, change: () => void): void {
    const defs = INDEXES_OF.get(c)
    if (!defs) return change()
    const keyOf = (d: IndexDef, v: unknown): string | undefined =>
      v === undefined ? undefined : (d.key as (x: unknown) => string | undefined)(v)
    const old = this.use(c, k)
    const before = defs.map(([, d]) => keyOf(d, old))
    change()
    const now = this.use(c, k)
    defs.forEach(([name, d], i) => {
      const from = before[i]
      const to = keyOf(d, now)
      if (from === to) return
      const m = this.indexes[name]
      if (from !== undefined) {
        const ids = m.get(from)
        ids?.delete(k)
        if (ids?.size === 0) m.delete(from)
      }
      if (to !== undefined) {
        const ids = m.get(to)
        if (ids) ids.add(k)
        else m.set(to, new Set([k]))
      }
    })
  }

  private apply(op: Op): void {
    if (op.c === 'tokens') {
      const old = this.use('tokens', op.k)
      if (old && this.tokenIds.get(old.hash) === op.k) this.tokenIds.delete(old.hash)
      this.applyRaw(op)
      const now = this.use('tokens', op.k)
      if (now) this.tokenIds.set(now.hash, op.k)
      return
    }
    this.reindex(op.c, op.k, () => this.applyRaw(op))
  }

  private applyRaw(op: Op): void {
    const t = this.tables[op.c] as Map<string, unknown>
    if ('at' in op) {
      const before = this.use(op.c, op.k)
      const after = applyOp(before, op)
      if (after !== before) t.set(op.k, after)
      return
    }
    if (op.v === null) {
      t.delete(op.k)
      this.hot[op.c].delete(op.k)
    } else {
      t.set(op.k, op.v)
      if (typeof op.v === 'object') this.hot[op.c].set(op.k, true)
    }
  }

  /** Read the snapshot and the journal (its first `limit` bytes, if given) into memory. */
  private load(limit?: number): void {
    if (fs.existsSync(this.snapshotPath)) {
      const snap = JSON.parse(fs.readFileSync(this.snapshotPath, 'utf8')) as Record<string, Record<string, unknown>>
      for (const c of COLLECTIONS) {
        const rows = snap[c] ?? {}
        for (const [k, v] of Object.entries(rows)) this.apply({ c, k, v } as Op)
      }
    }
    if (!fs.existsSync(this.journalPath)) return
    const whole = fs.readFileSync(this.journalPath)
    const raw = limit === undefined ? whole : whole.subarray(0, limit)
    // Only newline-terminated lines were fully written; the bytes after the last newline
    // are a torn tail that was never acknowledged.
    const good = raw.lastIndexOf(0x0a) + 1
    const records: Op[][] = []
    let lineNo = 0
    for (let at = 0; at < good; ) {
      const nl = raw.indexOf(0x0a, at)
      const line = raw.toString('utf8', at, nl)
      lineNo++
      at = nl + 1
      if (line === '') continue
      const ops = parseLine(line)
      if (ops === undefined)
        throw new Error(
          `ag-server: ${this.journalPath} line ${lineNo} (byte ${at - line.length - 1}) is damaged; ` +
            'lines after it hold acknowledged state, so the server will not start on a guess. ' +
            'The file is left as it is: restore it from a backup, or cut it at that line to start from the state before it.',
        )
      records.push(ops)
    }
    for (const ops of records)
      for (const op of ops) if ((COLLECTIONS as readonly string[]).includes(op.c)) this.apply(op)
    if (good < raw.length && limit === undefined) {
      this.log(
        `ag-server: warning: ${this.journalPath} ends in ${raw.length - good} byte(s) of a torn, unacknowledged write; truncated`,
      )
      const fd = fs.openSync(this.journalPath, 'r+')
      try {
        fs.ftruncateSync(fd, good)
        fs.fsyncSync(fd)
      } finally {
        fs.closeSync(fd)
      }
    }
  }

  /** Fold everything into a fresh snapshot and empty the journal; returns the snapshot's size. */
  private compact(): number {
    const tmp = this.snapshotPath + '.tmp'
    /** where each record's text went: [table, key, at, len] */
    const placed: [Map<string, unknown>, string, number, number][] = []
    let fd: number | undefined
    let size = 0
    try {
      fd = fs.openSync(tmp, 'w+', 0o600)
      const out = fd
      // Cold texts are copied as bytes and only the hot records serialized again; the file
      // goes out a chunk at a time, so the whole state is never one string in memory.
      const pieces: Buffer[] = []
      let pending = 0
      const flush = (): void => {
        const buf = Buffer.concat(pieces, pending)
        let off = 0
        while (off < buf.length) off += fs.writeSync(out, buf, off, buf.length - off)
        pieces.length = 0
        pending = 0
      }
      const put = (b: Buffer): void => {
        pieces.push(b)
        pending += b.length
        size += b.length
        if (pending >= SNAPSHOT_CHUNK) flush()
      }
      COLLECTIONS.forEach((c, i) => {
        put(Buffer.from(`${i === 0 ? '{' : ','}${JSON.stringify(c)}:{`))
        const t = this.tables[c] as Map<string, unknown>
        let sep = ''
        for (const [k, v] of t) {
          put(Buffer.from(`${sep}${JSON.stringify(k)}:`))
          sep = ','
          const text = v instanceof Cold ? v.bytes() : Buffer.from(typeof v === 'string' ? v : JSON.stringify(v))
          placed.push([t, k, size, text.length])
          put(text)
        }
        put(Buffer.from('}'))
      })
      put(Buffer.from('}'))
      flush()
      fs.fsyncSync(out)
      fs.renameSync(tmp, this.snapshotPath)
    } catch (e) {
      if (fd !== undefined) fs.closeSync(fd)
      fs.rmSync(tmp, { force: true })
      throw e
    }
    // The new snapshot holds every record as written just now (nothing ran in between):
    // cold records point into it and the spill file starts over; a hot record notes where
    // its text is, so it needs no write when it turns cold unless it changes first.
    const snap = ColdFile.adopt(fd)
    for (const [t, k, at, len] of placed) {
      const v = t.get(k)
      const cold = new Cold(snap, at, len)
      if (typeof v === 'string' || v instanceof Cold) t.set(k, cold)
      else if (v !== null && typeof v === 'object') this.coldOf.set(v, cold)
    }
    this.snap?.close()
    this.snap = snap
    this.spill.reset()
    fsyncDir(this.dir)
    // Only after the snapshot is durable may the journal be emptied. (A failure here
    // leaves a journal whose ops the snapshot already holds: replaying them is harmless.)
    if (this.fd !== undefined) {
      this.io.truncate(this.fd, 0)
      // The next append starts at 0 now, whether or not the fsync below succeeds; all
      // state is in the durable snapshot, so every waiter is settled (a new epoch).
      this.journalBytes = 0
      this.durable = 0
      this.epoch++
      this.dirty.clear()
      this.settleWaiters()
      this.io.fsync(this.fd)
    } else {
      fs.writeFileSync(this.journalPath, '', { mode: 0o600 })
      this.journalBytes = 0
    }
    return size
  }
}

/** A cell's record (a copy, if it was not in memory as one). */
function recordOf<T>(v: T | string | Cold): T {
  if (typeof v === 'string') return JSON.parse(v) as T
  return v instanceof Cold ? (JSON.parse(v.text()) as T) : v
}

/** The ops of one journal line, or undefined if the line is not a well-formed record. */
function parseLine(line: string): Op[] | undefined {
  try {
    const rec = JSON.parse(line) as unknown
    if (rec === null || typeof rec !== 'object' || !Array.isArray((rec as { ops?: unknown }).ops)) return undefined
    return (rec as { ops: Op[] }).ops
  } catch {
    return undefined
  }
}

const FULL_CODES = new Set(['ENOSPC', 'EDQUOT'])

/** Is this a "disk or quota full" failure (of a system call, or of a git process)? */
export function isStorageFull(e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException | undefined)?.code
  if (typeof code === 'string' && FULL_CODES.has(code)) return true
  const stderr = (e as { stderr?: unknown } | undefined)?.stderr
  return typeof stderr === 'string' && /No space left on device|Disk quota exceeded/i.test(stderr)
}

/** 507 storage_full for a full disk (nothing was written); any other failure unchanged. */
export function storageError(e: unknown, message?: string): unknown {
  if (e instanceof AgwpError) return e
  if (isStorageFull(e))
    return new AgwpError('storage_full', message ?? 'the server is out of storage space; nothing was written')
  if (message !== undefined) return new Error(`${message}: ${errText(e)}`)
  return e
}

const errText = (e: unknown): string => (e instanceof Error ? e.message : String(e))

/** fsyncDir off the event loop (object and ref writes, which already await). */
export async function fsyncDirAsync(dir: string): Promise<void> {
  let fh: fs.promises.FileHandle | undefined
  try {
    fh = await fs.promises.open(dir, 'r')
    await fh.sync()
  } catch {
    // some filesystems refuse fsync on directories; rename is still atomic there
  } finally {
    await fh?.close().catch(() => undefined)
  }
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

function emptyIndexes(): Indexes {
  return Object.fromEntries(Object.keys(INDEXES).map((n) => [n, new Map()])) as Indexes
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
    idempotency: new Map(),
    keys: new Map(),
  }
}
