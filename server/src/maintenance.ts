import fs from 'node:fs'
import path from 'node:path'
import type { Ctx } from './context.ts'
import { git, gitText, packsRemoved } from './git.ts'
import { packIndexed, packsWritten, TMP_PACK_PREFIX } from './objects.ts'
import { fsyncDirAsync } from './store.ts'
import { listRefs, packedRefs } from './refs.ts'
import type { Repo } from './repos.ts'
import { releaseWorkspaceRef, WORKSPACE_REFS } from './wsrefs.ts'
import { nowIso } from './util.ts'

// Repositories that keep themselves small. The server writes what a request stores as a small
// pack of its own (objects.ts; its merges' objects too), a ref as a loose file (refs.ts); a
// clone or git run by hand leaves loose objects. Per repository, when a cheap look at the
// object and ref directories says so:
//  - pack the loose refs (`git pack-refs --all --prune`, whose per-ref locks are the ones
//    refs.ts takes, so a compare-and-swap never races it);
//  - pack the loose objects, reachable or not, into one pack (pack-objects, prune-packed);
//  - roll the small packs up, geometrically (each pack left at least twice the size of the
//    next smaller one: a byte is rewritten about log2 times before a consolidation), with
//    `pack-objects --stdin-packs`, which keeps every object of the packs it combines;
//  - consolidate when what the roll-ups left weighs a share of the base pack or counts too
//    many packs: `git repack --cruft -d -l` keeps what any ref reaches (branches, proposals,
//    workspace refs) in one pack, unreachable objects younger than the grace in a cruft pack,
//    and drops the rest; `git prune` drops expired loose ones (when there are any).
// Nothing reachable is removed, nor anything written within the grace, nor anything written
// since the oldest request still being handled began: a request references every object it
// writes before it ends, and writes again one it reuses (objects.ts, wstree.ts), so an
// unreachable object older than every running request is garbage. The grace is the floor
// beside that (clock skew on a shared volume; git run by hand). Git children run at nice 10,
// and a consolidation waits while the server is busy (at most DEFER_LIMIT looks in a row). A
// repository is looked at every intervalS, and sooner once the server has written ROLL_AT
// packs to it.

export interface MaintenanceOptions {
  /** unreachable objects younger than this are kept (seconds), however old the running requests */
  graceS: number
  /** pack loose objects at this many (or sooner, see LOOSE_SHARE) */
  looseObjects: number
  /** consolidate when roll-ups leave this many packs (the base and cruft packs aside) */
  maxPacks: number
  /** pack refs at this many loose ref files (or more, see PACKED_REFS_SHARE) */
  looseRefs: number
  /** how often to look (seconds) */
  intervalS: number
  /** look sooner once the server has written this many packs to a repository (0: never) */
  kickAt: number
  /**
   * git at nice 10, so requests' own git work goes first (the default). The tests run it at
   * normal priority: beside other busy test files a niced repack waits for an idle CPU.
   */
  lowPriority: boolean
}

/** Roll the small packs up once there are this many besides the base and cruft packs. */
export const ROLL_AT = 8

export const DEFAULT_MAINTENANCE: MaintenanceOptions = {
  graceS: 10,
  looseObjects: 2000,
  maxPacks: 16,
  looseRefs: 100,
  intervalS: 5,
  kickAt: ROLL_AT,
  lowPriority: true,
}

/** Requests in flight at which a run waits, and how many looks in a row it may wait. */
export const BUSY_REQUESTS = 4
export const DEFER_LIMIT = 3
/**
 * Disk is kept near the packed size by shares of the base pack (the largest pack that is not
 * a cruft pack: what the last consolidation wrote): loose objects and loose ref files are
 * packed once their blocks weigh LOOSE_SHARE of it (and there are at least LOOSE_MIN, or
 * LOOSE_REFS_MIN), and what requests and runs add as packs is consolidated once it weighs
 * EXTRA_SHARE of it (rolled up before that, see rollUp). What the grace keeps (the cruft pack)
 * is set by the grace and how fast writes supersede content, not by these: a repository's disk
 * stays within about 1 + LOOSE_SHARE + EXTRA_SHARE of its packed size, plus that. Shares of
 * all the packs (cruft included) let a small, busy repository reach 2.5x in the soak.
 */
const LOOSE_SHARE = 0.15
const EXTRA_SHARE = 0.15
const LOOSE_MIN = 100
const LOOSE_REFS_MIN = 16
/**
 * pack-refs rewrites all of packed-refs: a repository that keeps a ref per proposal reaches
 * thousands (the soak's, 11,484 refs and 735 KB after 10 minutes, rewritten every 3 s at a
 * fixed 100). Waiting for loose refs to be this share of the packed ones makes each ref
 * written cost a bounded share of a rewrite, whatever the repository's age; the disk rule
 * (LOOSE_SHARE of the base pack) still packs them sooner where their blocks would weigh.
 */
const PACKED_REFS_SHARE = 0.1
/** How often the timer asks which repositories are due (ms). */
const KICK_MS = 500
const BLOCK = 4096
/** git's own limit for one maintenance child (a repack of a large repository is slow). */
const GIT_TIMEOUT_MS = 60 * 60 * 1000

export const STATE_FILE = 'agwp-maintenance.json'

/** What a look at a repository's directories finds (no git process). */
export interface RepoCounts {
  loose_objects: number
  packs: number
  pack_bytes: number
  /** of pack_bytes: cruft packs (unreachable objects kept for the grace; a .mtimes file beside them) */
  cruft_bytes: number
  /** of pack_bytes: the base pack, the largest other one */
  base_bytes: number
  /** packs besides the base and cruft packs (what requests and roll-ups wrote) */
  added_packs: number
  /** of added_packs: how many a roll-up would combine now (see rollUp) */
  rollable: number
  loose_refs: number
  /** refs in packed-refs */
  packed_refs: number
  /** blocks used by the git directory, as `du` counts them */
  disk_bytes: number
}

export type Step = 'pack_refs' | 'pack_loose' | 'roll_up' | 'consolidate'

export interface RunResult {
  steps: Step[]
  /** unreachable objects younger than this were kept (seconds): the grace, or the oldest request's age */
  kept_s: number
  started_at: string
  ms: number
  ok: boolean
  error?: string
  before: RepoCounts
  after: RepoCounts
}

export interface MaintenanceState {
  last_check?: string
  last_run?: RunResult
  /** the last runs, newest first */
  recent: RunResult[]
  runs: number
  failures: number
  deferred_in_a_row: number
}

const emptyState = (): MaintenanceState => ({ recent: [], runs: 0, failures: 0, deferred_in_a_row: 0 })

export function readState(gitDir: string): MaintenanceState {
  try {
    return { ...emptyState(), ...(JSON.parse(fs.readFileSync(path.join(gitDir, STATE_FILE), 'utf8')) as object) }
  } catch {
    return emptyState()
  }
}

function writeState(gitDir: string, s: MaintenanceState): void {
  const file = path.join(gitDir, STATE_FILE)
  const tmp = `${file}.tmp-${process.pid}`
  fs.writeFileSync(tmp, JSON.stringify(s, null, 1) + '\n')
  fs.renameSync(tmp, file)
}

async function entries(dir: string): Promise<fs.Dirent[]> {
  try {
    return await fs.promises.readdir(dir, { withFileTypes: true })
  } catch {
    return []
  }
}

async function blocksUnder(dir: string): Promise<number> {
  let sum = 0
  for (const e of await entries(dir)) {
    const f = path.join(dir, e.name)
    const st = await fs.promises.lstat(f).catch(() => undefined)
    if (!st) continue
    sum += st.blocks * 512
    if (st.isDirectory()) sum += await blocksUnder(f)
  }
  return sum
}

async function countLooseRefs(dir: string): Promise<number> {
  let n = 0
  for (const e of await entries(dir)) {
    if (e.isDirectory()) n += await countLooseRefs(path.join(dir, e.name))
    else if (!e.name.endsWith('.lock')) n++
  }
  return n
}

interface PackFile {
  /** file name, pack-….pack */
  name: string
  bytes: number
  /** a cruft pack (a .mtimes file beside it) */
  cruft: boolean
  /** a .keep file beside it: git leaves it alone, so does a roll-up */
  kept: boolean
}

async function listPacks(gitDir: string): Promise<PackFile[]> {
  const dir = path.join(gitDir, 'objects', 'pack')
  const names = new Set((await entries(dir)).map((f) => f.name))
  const out: PackFile[] = []
  for (const name of names) {
    // A pack without its index is not one yet (being written) or any more (being removed).
    if (!name.endsWith('.pack') || !packIndexed(name, names)) continue
    const st = await fs.promises.stat(path.join(dir, name)).catch(() => undefined)
    if (!st) continue
    const sibling = (ext: string): boolean => names.has(name.replace(/\.pack$/, ext))
    out.push({ name, bytes: st.size, cruft: sibling('.mtimes'), kept: sibling('.keep') })
  }
  return out
}

/** The base pack (the largest that is not cruft: what the last consolidation wrote) and the rest. */
function splitPacks(packs: PackFile[]): { base: PackFile | undefined; added: PackFile[] } {
  const plain = packs.filter((p) => !p.cruft).sort((a, b) => a.bytes - b.bytes)
  const base = plain.pop()
  return { base, added: plain.filter((p) => !p.kept) }
}

/**
 * How many of the smallest of these packs a roll-up combines (0: none): those below the
 * largest run at the top in which each pack is at least twice the next smaller, and then each
 * next one smaller than twice what is rolled so far (git repack --geometric=2 decides so).
 */
export function rollUp(sizes: number[]): number {
  const s = [...sizes].sort((a, b) => a - b)
  let n = 0
  for (let i = s.length - 1; i > 0; i--)
    if ((s[i] as number) < 2 * (s[i - 1] as number)) {
      n = i + 1
      break
    }
  if (n < 2) return 0
  let rolled = s.slice(0, n).reduce((a, b) => a + b, 0)
  while (n < s.length && (s[n] as number) < 2 * rolled) rolled += s[n++] as number
  return n
}

/** Loose objects, packs and loose refs, read from the directories. */
export async function countRepo(gitDir: string, disk = false): Promise<RepoCounts> {
  const objects = path.join(gitDir, 'objects')
  let loose = 0
  for (const d of await entries(objects))
    if (d.isDirectory() && /^[0-9a-f]{2}$/.test(d.name))
      for (const f of await entries(path.join(objects, d.name))) if (/^[0-9a-f]{38}$/.test(f.name)) loose++
  const packs = await listPacks(gitDir)
  const sum = (ps: PackFile[]): number => ps.reduce((a, p) => a + p.bytes, 0)
  const cruft = packs.filter((p) => p.cruft)
  const { base, added } = splitPacks(packs)
  return {
    loose_objects: loose,
    packs: packs.length,
    pack_bytes: sum(packs),
    cruft_bytes: sum(cruft),
    base_bytes: base?.bytes ?? 0,
    added_packs: added.length,
    rollable: rollUp(added.map((p) => p.bytes)),
    loose_refs: await countLooseRefs(path.join(gitDir, 'refs')),
    packed_refs: packedRefs(gitDir).refs.size,
    disk_bytes: disk ? await blocksUnder(gitDir) : 0,
  }
}

/** What a run should do now, by the counts (`full`: everything). */
export function plan(c: RepoCounts, o: MaintenanceOptions, full = false): Step[] {
  if (full) return ['pack_refs', 'consolidate']
  const steps: Step[] = []
  // Loose ref files by the same share: each is a block too, as is each directory of them.
  if (
    c.loose_refs >= Math.max(o.looseRefs, PACKED_REFS_SHARE * c.packed_refs) ||
    (c.loose_refs >= LOOSE_REFS_MIN && c.loose_refs * BLOCK >= LOOSE_SHARE * c.base_bytes)
  )
    steps.push('pack_refs')
  steps.push(...overdue(c, o, 1))
  return steps
}

/** The object steps the counts call for at `times` their thresholds, if any. */
function overdue(c: RepoCounts, o: MaintenanceOptions, times: number): Step[] {
  const added = c.pack_bytes - c.cruft_bytes - c.base_bytes
  if (c.added_packs - c.rollable >= o.maxPacks * times || (added > 0 && added >= times * EXTRA_SHARE * c.base_bytes))
    return ['consolidate']
  return smallSteps(c, o, times)
}

/**
 * What a run does instead of a consolidation that waits for a busy server: packing the loose
 * objects and rolling the packs up. Held back with it, the soak's packs piled up to 72, each
 * one more index for every read to search.
 */
export function instead(c: RepoCounts, o: MaintenanceOptions, steps: Step[]): Step[] {
  return [...steps.filter((s) => s !== 'consolidate'), ...(steps.includes('consolidate') ? smallSteps(c, o, 1) : [])]
}

function smallSteps(c: RepoCounts, o: MaintenanceOptions, times: number): Step[] {
  const steps: Step[] = []
  if (
    c.loose_objects >= o.looseObjects * times ||
    (c.loose_objects >= LOOSE_MIN * times && c.loose_objects * BLOCK >= times * LOOSE_SHARE * c.base_bytes)
  )
    steps.push('pack_loose')
  if (c.added_packs >= ROLL_AT * times && c.rollable >= 2) steps.push('roll_up')
  return steps
}

/**
 * Maintenance has fallen behind: the counts are past twice what calls for a run (the last
 * ones waited for a busy server or, niced, for a saturated CPU). Such a run neither waits nor
 * is niced: on a saturated machine the loose objects would otherwise pile up for minutes
 * (the soak at load 10: 17x the packed size after two minutes). Not for packs to roll up:
 * requests write them faster than any run, so twice ROLL_AT is no sign of a run that waited,
 * and a run not niced beside a busy server slowed its integrations by a third in the soak.
 */
export const behind = (c: RepoCounts, o: MaintenanceOptions): boolean => overdue(c, o, 2).some((s) => s !== 'roll_up')

/**
 * How young an unreachable object must be to stay: the grace, or longer while an older request
 * runs (with a margin for the time between the look and git reading its clock).
 */
export const keptFor = (graceS: number, oldestRequestMs: number): number =>
  oldestRequestMs > 0 ? Math.max(graceS, Math.ceil(oldestRequestMs / 1000) + KEPT_MARGIN_S) : graceS
const KEPT_MARGIN_S = 10
/**
 * The git date before which unreachable objects go: fixed at the look, not when git starts
 * (after the steps before it), so what a request begun after the look writes is never older.
 */
const cutoff = (keptS: number): string => `@${Math.floor(Date.now() / 1000 - keptS)}`
const run = (gitDir: string, low: boolean, args: string[], input?: string): Promise<unknown> =>
  git(gitDir, args, { lowPriority: low, timeoutMs: GIT_TIMEOUT_MS, ...(input !== undefined ? { input } : {}) })

async function looseIds(gitDir: string): Promise<string[]> {
  const objects = path.join(gitDir, 'objects')
  const out: string[] = []
  for (const d of await entries(objects))
    if (d.isDirectory() && /^[0-9a-f]{2}$/.test(d.name))
      for (const f of await entries(path.join(objects, d.name)))
        if (/^[0-9a-f]{38}$/.test(f.name)) out.push(d.name + f.name)
  return out
}

/**
 * Whether objects/ or objects/pack holds a file git left mid-write (tmp_*: git prune removes old
 * ones). The server's own packs being written are not: a failed write removes its files, and
 * start-up what a killed one left.
 */
async function temporaryFiles(gitDir: string): Promise<boolean> {
  const objects = path.join(gitDir, 'objects')
  for (const dir of [objects, path.join(objects, 'pack')])
    for (const e of await entries(dir))
      if (e.name.startsWith('tmp_') && !e.name.startsWith(TMP_PACK_PREFIX)) return true
  return false
}

async function step(ctx: Ctx | undefined, repo: Repo, s: Step, expiry: string, low: boolean): Promise<void> {
  const dir = repo.gitDir
  if (s === 'pack_refs') {
    // Keeps what it packs; a ref deleted while pack-refs ran can come back from packed-refs
    // (refs.ts deletes loose files without packed-refs.lock): workspace refs are settled
    // again below, the only refs the server deletes.
    await run(dir, low, ['pack-refs', '--all', '--prune'])
    if (ctx) await resettleWorkspaceRefs(ctx, repo)
  } else if (s === 'pack_loose') {
    const ids = await looseIds(dir)
    if (ids.length === 0) return
    await run(
      dir,
      low,
      ['pack-objects', '--quiet', '--non-empty', path.join(dir, 'objects/pack/pack')],
      ids.join('\n') + '\n',
    )
    await run(dir, low, ['prune-packed', '--quiet'])
  } else if (s === 'roll_up') {
    await rollUpPacks(dir, low)
  } else {
    const when = expiry
    const packs = (await listPacks(dir)).length
    await run(dir, low, [
      'repack',
      '--cruft',
      `--cruft-expiration=${when}`,
      '-d',
      '-l',
      '-q',
      '--no-write-bitmap-index',
    ])
    packsRemoved(dir, packs)
    // `git prune` walks every reachable object again; it has work only where git left loose
    // objects (the server writes packs, its merges too) or a temporary file (a killed git).
    if ((await looseIds(dir)).length > 0 || (await temporaryFiles(dir)))
      await run(dir, low, ['prune', `--expire=${when}`])
  }
}

/**
 * Combine the packs rollUp picks into one, then remove them. The new pack holds every object
 * they hold (reachable or not, with a new time: at most one more grace for garbage) and is on
 * disk before any is removed; packs written meanwhile are not among them.
 */
async function rollUpPacks(gitDir: string, low: boolean): Promise<void> {
  const { added } = splitPacks(await listPacks(gitDir))
  const picked = added.sort((a, b) => a.bytes - b.bytes).slice(0, rollUp(added.map((p) => p.bytes)))
  if (picked.length < 2) return
  const dir = path.join(gitDir, 'objects', 'pack')
  await run(
    gitDir,
    low,
    ['pack-objects', '--quiet', '--stdin-packs', path.join(dir, 'pack')],
    picked.map((p) => p.name).join('\n') + '\n',
  )
  await fsyncDirAsync(dir)
  for (const p of picked) {
    const base = path.join(dir, p.name.replace(/\.pack$/, ''))
    // The index first: git finds a pack by its index, and a reader that had it open reads on.
    for (const ext of ['.idx', '.pack', '.rev', '.bitmap']) fs.rmSync(base + ext, { force: true })
  }
  packsRemoved(gitDir, picked.length)
}

/** Workspace refs the store may no longer want (see the pack_refs step), synced under their lock. */
async function resettleWorkspaceRefs(ctx: Ctx, repo: Repo): Promise<void> {
  for (const { ref } of listRefs(repo.gitDir, WORKSPACE_REFS) ?? []) {
    const id = ref.slice(WORKSPACE_REFS.length)
    const ws = await ctx.state.get('workspaces', id)
    const surelyNeeded = ws && ws.state === 'open' && ws.proposals.length === 0
    if (!surelyNeeded) await releaseWorkspaceRef(ctx, repo, id)
  }
}

/**
 * One look at a repository and, if the counts call for it, one run. `ctx` (a serving
 * server's) lets pack_refs settle workspace refs; offline there is no writer to race.
 */
export async function maintainRepo(
  repo: Repo,
  o: MaintenanceOptions,
  opts: {
    ctx?: Ctx
    full?: boolean
    busy?: () => boolean
    /** ms since the oldest request still being handled began (0: none) */
    oldestRequestMs?: () => number
  } = {},
): Promise<RunResult | 'deferred' | undefined> {
  const state = readState(repo.gitDir)
  const before = await countRepo(repo.gitDir)
  state.last_check = nowIso()
  let steps = plan(before, o, opts.full)
  if (steps.length === 0) {
    state.deferred_in_a_row = 0
    writeState(repo.gitDir, state)
    return undefined
  }
  const late = behind(before, o)
  // Only a consolidation waits: rolling up or packing a few small files is cheaper than
  // letting them pile up while the server stays busy, so those run meanwhile.
  let deferred = 0
  if (!late && steps.includes('consolidate') && opts.busy?.() && state.deferred_in_a_row < DEFER_LIMIT) {
    deferred = state.deferred_in_a_row + 1
    steps = instead(before, o, steps)
    if (steps.length === 0) {
      state.deferred_in_a_row = deferred
      writeState(repo.gitDir, state)
      return 'deferred'
    }
  }
  const t0 = performance.now()
  const started_at = nowIso()
  let error: string | undefined
  const keptS = keptFor(o.graceS, opts.oldestRequestMs?.() ?? 0)
  const expiry = cutoff(keptS)
  for (const s of steps) {
    try {
      await step(opts.ctx, repo, s, expiry, o.lowPriority && !late)
    } catch (e) {
      error = `${s}: ${e instanceof Error ? e.message : String(e)}`.slice(0, 500)
      break
    }
  }
  const result: RunResult = {
    steps,
    kept_s: keptS,
    started_at,
    ms: Math.round(performance.now() - t0),
    ok: error === undefined,
    ...(error !== undefined ? { error } : {}),
    before,
    after: await countRepo(repo.gitDir),
  }
  const now = readState(repo.gitDir)
  now.last_check = state.last_check
  now.deferred_in_a_row = deferred
  now.last_run = result
  now.recent = [result, ...now.recent].slice(0, 10)
  now.runs++
  if (!result.ok) now.failures++
  writeState(repo.gitDir, now)
  return result
}

/** The requests a server is handling, as maintenance sees them. */
export interface InFlight {
  count(): number
  /** ms since the oldest began (0: none) */
  oldestMs(): number
}

export interface Maintenance {
  /** One look at every repository now (tests). Resolves when done. */
  tick(): Promise<void>
  /** Stop the timer and wait for a run in progress. */
  stop(): Promise<void>
}

/**
 * Background maintenance for a serving server: a look at a repository every intervalS, or
 * sooner once ROLL_AT packs were written to it; one at a time.
 */
export function startMaintenance(
  ctx: Ctx,
  o: MaintenanceOptions,
  requests: InFlight,
  log: (m: string) => void,
): Maintenance {
  let current: Promise<void> = Promise.resolve()
  let running = false
  let stopped = false
  /** per repository: when it was last looked at, and packsWritten then */
  const looked = new Map<string, { at: number; packs: number }>()
  const started = performance.now()
  const due = (repo: Repo): boolean => {
    const l = looked.get(repo.name) ?? { at: started, packs: 0 }
    if (performance.now() - l.at >= o.intervalS * 1000) return true
    return o.kickAt > 0 && packsWritten(repo.gitDir) - l.packs >= o.kickAt
  }
  const once = async (all: boolean): Promise<void> => {
    for (const name of ctx.repos.names()) {
      if (stopped) return
      // Several instances: only a repository's owner writes it, packs and prunes included.
      if (ctx.owners && !ctx.owners.serves(name)) continue
      let repo: Repo
      try {
        repo = ctx.repos.get(name)
      } catch {
        continue // removed meanwhile
      }
      if (!all && !due(repo)) continue
      looked.set(name, { at: performance.now(), packs: packsWritten(repo.gitDir) })
      const r = await maintainRepo(repo, o, {
        ctx,
        busy: () => requests.count() >= BUSY_REQUESTS,
        oldestRequestMs: requests.oldestMs,
      }).catch((e: unknown) => {
        log(`ag-server: maintenance of ${name} failed: ${e instanceof Error ? e.message : String(e)}`)
        return undefined
      })
      if (r && r !== 'deferred' && !r.ok) log(`ag-server: maintenance of ${name}: ${r.error ?? ''}`)
    }
  }
  const look = (all: boolean): Promise<void> => {
    if (running || stopped) return current
    running = true
    current = once(all).finally(() => {
      running = false
    })
    return current
  }
  // A look at the counters every KICK_MS (no file is read); at a repository when it is due.
  const timer = setInterval(() => void look(false), Math.min(KICK_MS, o.intervalS * 1000))
  timer.unref()
  return {
    tick: () => look(true),
    stop: async () => {
      stopped = true
      clearInterval(timer)
      await current
    },
  }
}

/** The state and current counts of one repository (status command, admin endpoint). */
export async function maintenanceStatus(
  repo: Repo,
): Promise<{ repo: string; counts: RepoCounts; state: MaintenanceState }> {
  return { repo: repo.name, counts: await countRepo(repo.gitDir, true), state: readState(repo.gitDir) }
}

/** Objects git counts (tests, status): `git count-objects -v` as numbers. */
export async function countObjects(gitDir: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {}
  for (const l of (await gitText(gitDir, ['count-objects', '-v'])).split('\n')) {
    const m = /^([a-z-]+): (\d+)$/.exec(l)
    if (m) out[m[1] as string] = Number(m[2])
  }
  return out
}
