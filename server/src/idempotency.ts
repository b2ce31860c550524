import crypto from 'node:crypto'
import { type AgwpError, conflict, errorBody, invalid } from './errors.ts'
import type { Op, Read, State, Tx } from './state.ts'
import type { IdempotencyRec } from './types.ts'

// Idempotency-Key: a state-changing request that carries one may be sent again (after a lost
// answer, a reset connection, a 502/503) and takes effect at most once. The server keeps,
// per principal and key, a fingerprint of the request and its answer for KEEP_MS, in the
// store like any other state (journaled, fsync'd before the answer leaves):
//   - a repeat with the same fingerprint gets the original answer (status and body);
//   - a repeat while the original still runs waits for it and gets the same answer;
//   - a repeat with another method, path, run, repository or body is refused (422);
//   - the same key from another principal is another key.
// The record is written in the same commit as the request's first state change (every
// transaction of the request that writes carries it, marked `applied`: MarkedState), so a crash can never leave an
// effect without its key: a repeat after such a crash, whose answer was not yet recorded, is
// answered 409 rather than applied twice. The answer itself is one more commit after the
// handler returns.

/**
 * How long a key is remembered (documented in docs/agwp-v1.md). Long enough for any retry a
 * client makes, across a server restart too (ag-mcp's own retries end with its call, 30 s by
 * default); short, because every key keeps its answer in memory and in each snapshot: 100 agents
 * make about 1,000 writes in a session, a day of that would be hundreds of MB.
 */
export const KEEP_MS = 3600 * 1000
/** An answer larger than this is not kept; a repeat then learns that the request was applied. */
const MAX_KEPT_BODY_BYTES = 1024 * 1024
const SWEEP_EVERY_MS = 60 * 1000
const KEY_SHAPE = /^[\x21-\x7e]{1,255}$/

export interface Outcome {
  status: number
  body: unknown
}

export type Begin =
  /** A repeat: answer this, run nothing. */
  | { kind: 'answer'; outcome: Promise<Outcome> }
  /** First sight of the key: run the request with `state`, then call `finish`. */
  | { kind: 'run'; state: State; finish: (o: Outcome) => Promise<Outcome> }

export function checkKey(header: string | undefined): string | undefined {
  if (header === undefined) return undefined
  if (!KEY_SHAPE.test(header))
    throw invalid('Idempotency-Key must be 1 to 255 printable ASCII characters without spaces', {
      header: 'Idempotency-Key',
    })
  return header
}

/** What makes two requests "the same request": method, path and query, run, repository, body bytes. */
export function fingerprint(parts: {
  method: string
  url: string
  run: string | undefined
  repo: string | undefined
  body: Buffer
}): string {
  return crypto
    .createHash('sha256')
    .update(`${parts.method} ${parts.url}\n${parts.run ?? ''}\n${parts.repo ?? ''}\n`)
    .update(parts.body)
    .digest('hex')
}

export class IdempotencyKeys {
  /** Requests still running, by record key: a repeat waits for the first one's answer. */
  private readonly running = new Map<string, { fingerprint: string; outcome: Promise<Outcome> }>()
  /** this process's clock (ms) before which no sweep looks */
  private nextSweep = 0

  constructor(
    private readonly state: State,
    private readonly keepMs = KEEP_MS,
  ) {}

  /**
   * Lookup and registration in one transaction on the key's lock (`idem:<key>`), so two
   * copies of one request arriving together can never both run.
   */
  async begin(principal: string, key: string, fp: string): Promise<Begin> {
    await this.sweep()
    // Hashed with the principal: keys of different principals never meet, and a record key
    // has one shape whatever the client sent.
    const k = crypto.createHash('sha256').update(`${principal}\n${key}`).digest('hex')
    // The record read with the lock, in the round trip that takes it.
    return this.state.tx([lockOf(k)], (t) => this.decide(t, k, principal, fp), [{ c: 'idempotency', k }])
  }

  /** Under the key's lock: answer a repeat, or start the first run. */
  private async decide(t: Tx, k: string, principal: string, fp: string): Promise<Begin> {
    const live = this.running.get(k)
    if (live) {
      if (live.fingerprint !== fp) throw reused()
      return { kind: 'answer', outcome: live.outcome }
    }
    const rec = await t.get('idempotency', k)
    if (rec && rec.principal === principal && Date.parse(rec.expires_at) > t.now.getTime()) {
      if (rec.fingerprint !== fp) throw reused()
      if (rec.state === 'answered' && rec.status !== undefined)
        return { kind: 'answer', outcome: Promise.resolve({ status: rec.status, body: rec.body }) }
      const e = conflict(
        'the request with this Idempotency-Key was applied, but its answer was not kept; read the current state instead of repeating it',
        { header: 'Idempotency-Key' },
      )
      return { kind: 'answer', outcome: Promise.resolve({ status: e.status, body: errorBody(e) }) }
    }
    // An expired record goes now, under the key's lock: a sweep that read it cannot later
    // delete the fresh record this request writes.
    if (rec) t.write({ c: 'idempotency', k, v: null })
    return this.start(k, principal, fp, t.now)
  }

  /** Register a first run of key k and the view of the state it runs with. */
  private start(k: string, principal: string, fp: string, now: Date): Begin {
    const base: IdempotencyRec = {
      principal,
      fingerprint: fp,
      state: 'applied',
      expires_at: new Date(now.getTime() + this.keepMs).toISOString(),
    }
    const marked = new MarkedState(this.state, { c: 'idempotency', k, v: base })
    let settle!: (o: Outcome) => void
    const outcome = new Promise<Outcome>((r) => (settle = r))
    this.running.set(k, { fingerprint: fp, outcome })
    const finish = async (o: Outcome): Promise<Outcome> => {
      try {
        // A server error before any change: nothing happened, a repeat may run it again.
        if (o.status >= 500 && !marked.applied) return o
        const text = JSON.stringify(o.body)
        const kept: IdempotencyRec =
          Buffer.byteLength(text) <= MAX_KEPT_BODY_BYTES
            ? { ...base, state: 'answered', status: o.status, body: o.body }
            : base
        await this.state.commit([lockOf(k)], [{ c: 'idempotency', k, v: kept }])
      } catch {
        // The effect is journaled, its answer is not (e.g. a full disk): the client still gets
        // it now, and a repeat learns that the request was applied (409), never a second effect.
      } finally {
        // Only now: until the answer is recorded, a repeat waits for this run's outcome.
        this.running.delete(k)
        settle(o)
      }
      return o
    }
    return { kind: 'run', state: marked, finish }
  }

  /** Forget expired keys, at most once a minute, in one transaction holding their locks. */
  private async sweep(): Promise<void> {
    // When to look is this process's own schedule; what has expired is judged by the
    // state's clock (the database's, on PostgreSQL), read only when it is time: asked first,
    // it cost every keyed request one more round trip.
    if (Date.now() < this.nextSweep) return
    this.nextSweep = Date.now() + SWEEP_EVERY_MS
    const now = await this.state.now()
    // By the minute each key expires in: only the expired keys are read, never every answer kept.
    const minute = now.toISOString().slice(0, 16)
    const due = (await this.state.indexKeys('idempotencyByExpiry')).filter((m) => m <= minute)
    const keys = new Set<string>()
    for (const m of due) for (const k of await this.state.idsByIndex('idempotencyByExpiry', m)) keys.add(k)
    if (keys.size === 0) return
    await this.state.tx([...keys].map(lockOf), async (t) => {
      for (const k of keys) {
        const rec = await t.get('idempotency', k)
        if (rec !== undefined && Date.parse(rec.expires_at) <= t.now.getTime())
          t.write({ c: 'idempotency', k, v: null })
      }
    })
  }
}

const lockOf = (k: string): string => `idem:${k}`

/**
 * The state a request with an Idempotency-Key runs with: the same state, except that every
 * transaction that writes anything also writes the key's record (`mark`), in the same
 * commit, so a crash can never leave the request's effect without its key.
 */
class MarkedState implements State {
  /** a transaction of the request has committed a change */
  applied = false

  constructor(
    private readonly inner: State,
    private readonly mark: Op,
  ) {}

  get backend(): State['backend'] {
    return this.inner.backend
  }

  tx<T>(locks: readonly string[], fn: (t: Tx) => Promise<T>, reads?: readonly Read[]): Promise<T> {
    let wrote = false
    const marked = async (t: Tx): Promise<T> => {
      const view: Tx = {
        get: (c, k) => t.get(c, k),
        getMany: (c, keys) => t.getMany(c, keys),
        all: (c) => t.all(c),
        entries: (c) => t.entries(c),
        byIndex: (n, k) => t.byIndex(n, k),
        idsByIndex: (n, k) => t.idsByIndex(n, k),
        indexKeys: (n) => t.indexKeys(n),
        credentials: (h, runId) => t.credentials(h, runId),
        nextId: (name, prefix) => t.nextId(name, prefix),
        write: (...ops) => {
          if (ops.length > 0) wrote = true
          t.write(...ops)
        },
        now: t.now,
        base: t,
      }
      const r = await fn(view)
      if (wrote) t.write(this.mark)
      return r
    }
    const out = this.inner.tx(locks, marked, reads)
    return out.then((r) => {
      if (wrote) this.applied = true
      return r
    })
  }

  async commit(locks: readonly string[], ops: readonly Op[]): Promise<void> {
    if (ops.length === 0) return this.inner.commit(locks, ops)
    await this.inner.commit(locks, [...ops, this.mark])
    this.applied = true
  }

  get: State['get'] = (c, k) => this.inner.get(c, k)
  getMany: State['getMany'] = (c, keys) => this.inner.getMany(c, keys)
  all: State['all'] = (c) => this.inner.all(c)
  entries: State['entries'] = (c) => this.inner.entries(c)
  byIndex: State['byIndex'] = (n, k) => this.inner.byIndex(n, k)
  idsByIndex: State['idsByIndex'] = (n, k) => this.inner.idsByIndex(n, k)
  indexKeys: State['indexKeys'] = (n) => this.inner.indexKeys(n)
  credentials: State['credentials'] = (h, runId) => this.inner.credentials(h, runId)
  now: State['now'] = () => this.inner.now()
  newScope: State['newScope'] = () => this.inner.newScope()
  settle: State['settle'] = (s) => this.inner.settle(s)
  flush: State['flush'] = () => this.inner.flush()
  close: State['close'] = () => this.inner.close()
}

function reused(): AgwpError {
  return invalid(
    'this Idempotency-Key was already used for a different request (method, path, run, repository or body); use a fresh key for a new request',
    { header: 'Idempotency-Key' },
  )
}
