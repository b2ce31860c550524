import { notOwner, SERVE_HERE, type Ownership, type Placement } from '../owners.ts'
import type { Tx } from '../state.ts'
import { sqlOf, type PgState } from './pg-state.ts'

// Repository ownership between instances on one PostgreSQL (owners.ts has the contract).
// repo_owners holds one row per repository: its owner, the epoch it took it at, and the
// owner's last heartbeat. Every lease judgement uses the database's clock (now()), so
// instances with skewed clocks agree on who is alive.
//   - take: one guarded upsert under the repository's advisory lock (`repo:R`, the key every
//     handler's transaction on R takes): it succeeds only when R has no owner, its owner's
//     heartbeat is older than the lease, or the owner is this instance's id (a restart), and
//     it bumps the epoch. Because it waits for R's lock, it waits for the old owner's last
//     transaction to end (or for the database to end a session stopped inside one).
//   - heartbeat: every lease/3, one UPDATE renewing the repositories this instance serves,
//     RETURNING what it still holds; a repository missing (or at another epoch) was lost and
//     is not served here any more, at once.
//   - fence: inside a ref update's transaction, (R, me, my epoch) must still be the row. It
//     takes `owner:R` shared (and the takeover takes it exclusive, after `repo:R`), so a
//     takeover waits for every transaction that passed the fence, also one that holds other
//     locks than `repo:R` (workspace refs, under `ws:<id>`), and ref updates never wait on
//     each other for it.

export interface PgOwnershipOptions {
  /** this instance's id, unique among those sharing the database */
  instance: string
  /** the base URL other instances reach this one at (http://host:port) */
  url: string
  /** how long a silent owner keeps its repositories (ms) */
  leaseMs: number
  /** Settle what R's previous owner left (journaled ref intents, lock files) before R is served here. */
  settle: (repo: string) => Promise<void>
  log: (m: string) => void
}

const LEASE = "$3::bigint * interval '1 millisecond'"
/** The lock a takeover holds exclusive and a fenced transaction shared (always after its own locks). */
const ownerLock = (repo: string): string => `owner:${repo}`

export class PgOwnership implements Ownership {
  readonly instance: string
  readonly leaseMs: number
  /** repository → the epoch this instance took it at */
  private readonly held = new Map<string, number>()
  /** takeovers under way, so concurrent first requests at this instance take R once */
  private readonly taking = new Map<string, Promise<Placement>>()
  private lastBeat = Date.now()
  private timer: NodeJS.Timeout | undefined
  private beating: Promise<void> | undefined

  private constructor(
    private readonly state: PgState,
    private readonly opts: PgOwnershipOptions,
  ) {
    this.instance = opts.instance
    this.leaseMs = opts.leaseMs
  }

  /** Record this instance (id, url) and start heartbeating. */
  static async start(state: PgState, opts: PgOwnershipOptions): Promise<PgOwnership> {
    if (!(opts.leaseMs > 0)) throw new Error(`the owner lease must be positive, got ${opts.leaseMs} ms`)
    const o = new PgOwnership(state, opts)
    await state.sql(
      `INSERT INTO instances (id, url, heartbeat_at) VALUES ($1, $2, now())
       ON CONFLICT (id) DO UPDATE SET url = EXCLUDED.url, heartbeat_at = now()`,
      [opts.instance, opts.url],
    )
    o.timer = setInterval(() => void o.heartbeat(), Math.max(50, Math.floor(opts.leaseMs / 3)))
    o.timer.unref()
    return o
  }

  serves(repo: string): boolean {
    return this.held.has(repo)
  }

  /** The epoch this instance serves repo at, if it does. */
  epochOf(repo: string): number | undefined {
    return this.held.get(repo)
  }

  place(repo: string): Promise<Placement> {
    if (this.held.has(repo)) return Promise.resolve(SERVE_HERE)
    const pending = this.taking.get(repo)
    if (pending !== undefined) return pending
    const p = this.placeOnce(repo).finally(() => this.taking.delete(repo))
    this.taking.set(repo, p)
    return p
  }

  private async placeOnce(repo: string): Promise<Placement> {
    // Most requests for a repository owned elsewhere end here, without taking its lock.
    const live = await this.state.sql(
      `SELECT o.instance, i.url FROM repo_owners o LEFT JOIN instances i ON i.id = o.instance
       WHERE o.repo = $1 AND o.instance <> $2 AND o.heartbeat_at > now() - ${LEASE}`,
      [repo, this.instance, this.leaseMs],
    )
    if (live.rows[0]) return elsewhere(live.rows[0])
    const taken = await this.state.tx([`repo:${repo}`], async (t) => {
      const q = sqlOf(t)
      await q('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [ownerLock(repo)])
      const { rows } = await q(
        `INSERT INTO repo_owners AS o (repo, instance, epoch, heartbeat_at) VALUES ($1, $2, 1, now())
         ON CONFLICT (repo) DO UPDATE SET instance = EXCLUDED.instance, epoch = o.epoch + 1, heartbeat_at = now()
         WHERE o.instance = EXCLUDED.instance OR o.heartbeat_at <= now() - ${LEASE}
         RETURNING epoch`,
        [repo, this.instance, this.leaseMs],
      )
      if (rows[0]) return { epoch: Number(rows[0].epoch) }
      const other = await q(
        'SELECT o.instance, i.url FROM repo_owners o LEFT JOIN instances i ON i.id = o.instance WHERE o.repo = $1',
        [repo],
      )
      return elsewhere(other.rows[0])
    })
    if ('serve' in taken) return taken
    // Served only once what the previous owner left is settled; if settling fails, the next
    // request takes R again (this instance's own row: the epoch moves on once more).
    await this.opts.settle(repo)
    this.held.set(repo, taken.epoch)
    this.opts.log(`ag-server: instance ${this.instance} owns ${repo} (epoch ${taken.epoch})`)
    return SERVE_HERE
  }

  async fence(t: Tx, repo: string): Promise<void> {
    const epoch = this.held.get(repo)
    if (epoch !== undefined) {
      const { rowCount } = await sqlOf(t)(
        `WITH l AS (SELECT pg_advisory_xact_lock_shared(hashtextextended($4, 0)))
         SELECT 1 FROM repo_owners, l WHERE repo = $1 AND instance = $2 AND epoch = $3`,
        [repo, this.instance, epoch, ownerLock(repo)],
      )
      if (rowCount === 1) return
      this.lose([repo], 'its ownership moved on')
    }
    throw notOwner(
      `instance ${this.instance} no longer owns repository '${repo}'; nothing was written: retry, and the request goes to its owner`,
      this.leaseMs,
      { repo, instance: this.instance },
    )
  }

  async ownerAlive(repo: string, owner: string): Promise<boolean> {
    const { rowCount } = await this.state.sql(
      `SELECT 1 FROM repo_owners WHERE repo = $1 AND instance = $2 AND heartbeat_at > now() - ${LEASE}`,
      [repo, owner, this.leaseMs],
    )
    return rowCount === 1
  }

  /** One heartbeat: renew what this instance serves, and stop serving what it lost. */
  heartbeat(): Promise<void> {
    // One at a time: a slow database must not pile beats up.
    this.beating ??= this.beatOnce().finally(() => {
      this.beating = undefined
    })
    return this.beating
  }

  private async beatOnce(): Promise<void> {
    // Judged: only what this beat renewed, at the epoch it was sent with (a repository taken,
    // or taken again, while the beat was under way is not in its answer).
    const sent = [...this.held]
    try {
      const { rows } = await this.state.sql(
        `WITH me AS (UPDATE instances SET heartbeat_at = now(), url = $2 WHERE id = $1)
         UPDATE repo_owners SET heartbeat_at = now() WHERE instance = $1 AND repo = ANY($3::text[])
         RETURNING repo, epoch`,
        [this.instance, this.opts.url, sent.map(([r]) => r)],
      )
      this.lastBeat = Date.now()
      const still = new Map(rows.map((r: { repo: string; epoch: string }) => [r.repo, Number(r.epoch)]))
      const lost = sent.filter(([r, e]) => still.get(r) !== e && this.held.get(r) === e).map(([r]) => r)
      this.lose(lost, 'another instance took it over')
    } catch (e) {
      // Without a heartbeat for a whole lease, others may have taken everything over: stop
      // serving it all (the fence would refuse its writes anyway), take it back on demand.
      if (Date.now() - this.lastBeat > this.leaseMs)
        this.lose([...this.held.keys()], `no heartbeat for a lease (${e instanceof Error ? e.message : String(e)})`)
    }
  }

  private lose(repos: string[], why: string): void {
    for (const r of repos) {
      if (!this.held.delete(r)) continue
      this.opts.log(`ag-server: instance ${this.instance} lost ${r}: ${why}`)
    }
  }

  /**
   * Stop heartbeating and hand what this instance serves back at once (a graceful stop, a
   * rolling restart): its rows expire now instead of a lease from now. Expired, not deleted,
   * so the epoch only grows: a row made anew would start at 1 again, and an old process of
   * the same id with epoch 1 would pass the fence.
   */
  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer)
    await this.beating
    const held = [...this.held.keys()]
    this.held.clear()
    if (held.length)
      await this.state
        .sql("UPDATE repo_owners SET heartbeat_at = '-infinity' WHERE instance = $1 AND repo = ANY($2::text[])", [
          this.instance,
          held,
        ])
        .catch(() => undefined) // the database gone: the rows expire with the lease
  }
}

function elsewhere(row: { instance: string; url: string | null } | undefined): Placement {
  // The owner's row without an instance row cannot happen through this code; treat as unreachable.
  return { serve: false, owner: row?.instance ?? 'unknown', url: row?.url ?? '' }
}
