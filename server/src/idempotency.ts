import crypto from 'node:crypto'
import { type AgwpError, conflict, errorBody, invalid } from './errors.ts'
import type { Op } from './state.ts'
import type { Store } from './store.ts'
import type { IdempotencyRec } from './types.ts'

// Idempotency-Key: a state-changing request that carries one may be sent again (after a lost
// answer, a reset connection, a 502/503) and takes effect at most once. The server keeps,
// per principal and key, a fingerprint of the request and its answer for KEEP_MS, in the
// store like any other state (journaled, fsync'd before the answer leaves):
//   - a repeat with the same fingerprint gets the original answer (status and body);
//   - a repeat while the original still runs waits for it and gets the same answer;
//   - a repeat with another method, path, run, repository or body is refused (422);
//   - the same key from another principal is another key.
// The record is written in the same journal line as the request's first state change (every
// commit the request makes carries it, marked `applied`), so a crash can never leave an
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
  /** First sight of the key: run the request with `store`, then call `finish`. */
  | { kind: 'run'; store: Store; finish: (o: Outcome) => Outcome }

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
  private lastSweep = 0

  constructor(
    private readonly store: Store,
    private readonly keepMs = KEEP_MS,
  ) {}

  /**
   * Synchronous from lookup to registration, so two copies of one request arriving together
   * can never both run.
   */
  begin(principal: string, key: string, fp: string): Begin {
    this.sweep()
    // Hashed with the principal: keys of different principals never meet, and a record key
    // has one shape whatever the client sent.
    const k = crypto.createHash('sha256').update(`${principal}\n${key}`).digest('hex')
    const live = this.running.get(k)
    if (live) {
      if (live.fingerprint !== fp) throw reused()
      return { kind: 'answer', outcome: live.outcome }
    }
    const rec = this.store.get('idempotency', k)
    if (rec && rec.principal === principal && Date.parse(rec.expires_at) > Date.now()) {
      if (rec.fingerprint !== fp) throw reused()
      if (rec.state === 'answered' && rec.status !== undefined)
        return { kind: 'answer', outcome: Promise.resolve({ status: rec.status, body: rec.body }) }
      const e = conflict(
        'the request with this Idempotency-Key was applied, but its answer was not kept; read the current state instead of repeating it',
        { header: 'Idempotency-Key' },
      )
      return { kind: 'answer', outcome: Promise.resolve({ status: e.status, body: errorBody(e) }) }
    }
    const base: IdempotencyRec = {
      principal,
      fingerprint: fp,
      state: 'applied',
      expires_at: new Date(Date.now() + this.keepMs).toISOString(),
    }
    let applied = false
    const mark: Op = { c: 'idempotency', k, v: base }
    // Every commit of this request carries the mark, in the same journal line. A view, not a
    // copy: reads go through to the one store (Object.create); commit, the one public method
    // that changes a Store, is replaced here and runs on the store itself.
    const view = Object.create(this.store) as Store
    view.commit = (ops: Op[]): void => {
      if (ops.length === 0) return
      this.store.commit([...ops, mark])
      applied = true
    }
    let settle!: (o: Outcome) => void
    const outcome = new Promise<Outcome>((r) => (settle = r))
    this.running.set(k, { fingerprint: fp, outcome })
    const finish = (o: Outcome): Outcome => {
      this.running.delete(k)
      settle(o)
      // A server error before any change: nothing happened, a repeat may run it again.
      if (o.status >= 500 && !applied) return o
      const text = JSON.stringify(o.body)
      const kept: IdempotencyRec =
        Buffer.byteLength(text) <= MAX_KEPT_BODY_BYTES
          ? { ...base, state: 'answered', status: o.status, body: o.body }
          : base
      try {
        this.store.commit([{ c: 'idempotency', k, v: kept }])
      } catch {
        // The effect is journaled, its answer is not (e.g. a full disk): the client still gets
        // it now, and a repeat learns that the request was applied (409), never a second effect.
      }
      return o
    }
    return { kind: 'run', store: view, finish }
  }

  /** Forget expired keys, at most once a minute, in one journal line. */
  private sweep(): void {
    const now = Date.now()
    if (now - this.lastSweep < SWEEP_EVERY_MS) return
    this.lastSweep = now
    // By the minute each key expires in: only the expired keys are read, never every answer kept.
    const minute = new Date(now).toISOString().slice(0, 16)
    const ops: Op[] = []
    for (const m of this.store.indexKeys('idempotencyByExpiry')) {
      if (m > minute) continue
      for (const k of this.store.idsByIndex('idempotencyByExpiry', m)) {
        const rec = m < minute ? undefined : this.store.get('idempotency', k)
        if (rec === undefined || Date.parse(rec.expires_at) <= now) ops.push({ c: 'idempotency', k, v: null })
      }
    }
    this.store.commit(ops)
  }
}

function reused(): AgwpError {
  return invalid(
    'this Idempotency-Key was already used for a different request (method, path, run, repository or body); use a fresh key for a new request',
    { header: 'Idempotency-Key' },
  )
}
