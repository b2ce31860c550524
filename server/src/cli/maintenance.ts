// `serve`'s maintenance flags and the `maintenance status|run` commands (maintenance.ts does the
// work; cli.ts declares the commands).
import path from 'node:path'
import type { CommandArgs } from '../../../lib/cli/commands.ts'
import { UsageError, stringValue, type FlagTable, type FlagValues } from '../../../lib/cli/flags.ts'
import { acquireLock, isDataDir, liveInstance } from '../datadir.ts'
import {
  DEFAULT_MAINTENANCE,
  maintainRepo,
  maintenanceStatus,
  type MaintenanceOptions,
  type RunResult,
} from '../maintenance.ts'
import { RepoRegistry, type Repo } from '../repos.ts'
import { parseDuration } from '../util.ts'
import { dataDir, type CliContext } from './admin.ts'

/**
 * The shortest grace a serving server accepts. Maintenance already keeps what any running
 * request may still reference (maintenance.ts, keptFor), and a tree a request reuses is at
 * most 5 s old (wstree.ts); the grace is the floor beside that, for file times set by another
 * machine's clock (a shared volume) and git run by hand. Offline (`maintenance run`) nothing
 * writes: any grace.
 */
const MIN_SERVE_GRACE_S = 10

function duration(flag: string, v: unknown): number {
  try {
    return parseDuration(String(v))
  } catch {
    throw new UsageError(`--${flag}: '${String(v)}' is not a duration (e.g. 30s, 10m, 1h, 2d)`)
  }
}

function atLeast(flag: string, v: unknown, min: number): number {
  const n = Number(v)
  if (!Number.isSafeInteger(n) || n < min)
    throw new UsageError(`--${flag}: '${String(v)}' is not a whole number >= ${min}`)
  return n
}

/** `serve`'s maintenance flags. */
export const MAINTENANCE_FLAGS: FlagTable = {
  maintenance: {
    type: 'boolean',
    default: true,
    describe: 'pack and prune the repositories in the background (--no-maintenance: never)',
  },
  'maintenance-grace': {
    type: 'string',
    value: 'DURATION',
    default: '10s',
    describe: 'keep unreachable objects at least this long, and while an older request runs (at least 10s)',
  },
  'maintenance-loose': {
    type: 'number',
    value: 'N',
    default: DEFAULT_MAINTENANCE.looseObjects,
    describe: 'pack loose objects once a repository has this many (sooner in a small one)',
  },
  'maintenance-max-packs': {
    type: 'number',
    value: 'N',
    default: DEFAULT_MAINTENANCE.maxPacks,
    describe: 'consolidate a repository into one pack (and a cruft pack) at this many packs',
  },
  'maintenance-interval': {
    type: 'string',
    value: 'DURATION',
    default: `${DEFAULT_MAINTENANCE.intervalS}s`,
    describe: 'how often to look at each repository (a few directory reads)',
  },
}

/** The maintenance `serve` runs with (undefined: --no-maintenance); bad values are usage errors. */
export function maintenanceFromFlags(a: FlagValues): MaintenanceOptions | undefined {
  const graceS = duration('maintenance-grace', a['maintenance-grace'] ?? '10s')
  if (graceS < MIN_SERVE_GRACE_S)
    throw new UsageError(
      `--maintenance-grace: ${String(a['maintenance-grace'])} is too short for a serving server (at least 10s: beside the requests it waits for, the grace covers clocks that disagree on a shared volume); a shorter grace is for ag-server maintenance run, with the server stopped`,
    )
  const o: MaintenanceOptions = {
    ...DEFAULT_MAINTENANCE,
    graceS,
    looseObjects: atLeast('maintenance-loose', a['maintenance-loose'] ?? DEFAULT_MAINTENANCE.looseObjects, 1),
    maxPacks: atLeast('maintenance-max-packs', a['maintenance-max-packs'] ?? DEFAULT_MAINTENANCE.maxPacks, 2),
    intervalS: duration('maintenance-interval', a['maintenance-interval'] ?? `${DEFAULT_MAINTENANCE.intervalS}s`),
  }
  if (o.intervalS < 1) throw new UsageError('--maintenance-interval: at least 1s')
  return a['maintenance'] === false ? undefined : o
}

function reposOf(dir: string, repo: string | undefined): Repo[] {
  if (!isDataDir(dir)) throw new Error(`${dir} is not an ag-server data directory (run ag-server init)`)
  const reg = new RepoRegistry(path.join(dir, 'repos'))
  const names = reg.names()
  if (repo === undefined) return names.map((n) => reg.get(n))
  if (!names.includes(repo))
    throw new UsageError(`--repo: no repository ${repo} in ${dir} (it has ${names.length ? names.join(', ') : 'none'})`)
  return [reg.get(repo)]
}

const mb = (n: number): string => `${(n / 1048576).toFixed(1)} MB`

function describeRun(r: RunResult): string {
  const what = r.steps.join(' + ')
  const end = r.ok ? 'ok' : `FAILED (${r.error ?? ''})`
  return `${r.started_at} ${what}: ${end} in ${r.ms} ms; loose objects ${r.before.loose_objects} -> ${r.after.loose_objects}, packs ${r.before.packs} -> ${r.after.packs}, loose refs ${r.before.loose_refs} -> ${r.after.loose_refs}`
}

/** `maintenance status`: each repository's counts now and its last runs. */
export async function status({ values }: CommandArgs, { out }: CliContext): Promise<void> {
  const dir = dataDir(stringValue(values, 'data'))
  const all = await Promise.all(reposOf(dir, stringValue(values, 'repo')).map((r) => maintenanceStatus(r)))
  if (values['json'] === true) {
    out(JSON.stringify(all, null, 2))
    return
  }
  for (const s of all) {
    const c = s.counts
    out(
      `${s.repo}: ${mb(c.disk_bytes)} on disk; ${c.loose_objects} loose objects, ${c.packs} packs (${mb(c.pack_bytes)}, of which cruft ${mb(c.cruft_bytes)}), ${c.loose_refs} loose refs, ${c.packed_refs} packed; ${s.state.runs} runs, ${s.state.failures} failed; last look ${s.state.last_check ?? 'never'}`,
    )
    if (s.state.last_run) out(`  last run: ${describeRun(s.state.last_run)}`)
  }
}

/** `maintenance run`: what is due (--full: everything), offline, under the data directory's lock. */
export async function run({ values }: CommandArgs, { out }: CliContext): Promise<number> {
  const dir = dataDir(stringValue(values, 'data'))
  const graceS = duration('grace', stringValue(values, 'grace') ?? '1h')
  const repos = reposOf(dir, stringValue(values, 'repo'))
  const instance = liveInstance(dir)
  if (instance)
    throw new Error(
      `a server (pid ${instance.pid}) on a PostgreSQL store serves ${dir} and maintains the repositories it owns itself; stop every instance to run maintenance by hand`,
    )
  const lock = acquireLock(dir, { pid: process.pid, kind: 'cli' })
  if (!lock.ok)
    throw new Error(
      lock.holder.kind === 'server'
        ? `a server (pid ${lock.holder.pid}) holds ${dir} and maintains its repositories itself (ag-server maintenance status shows its runs); stop it to run maintenance by hand`
        : `another ag-server command (pid ${lock.holder.pid}) is using ${dir}; retry when it is done`,
    )
  let code = 0
  try {
    for (const repo of repos) {
      const r = await maintainRepo(repo, { ...DEFAULT_MAINTENANCE, graceS }, { full: values['full'] === true })
      if (r === undefined || r === 'deferred') out(`${repo.name}: nothing due (--full runs everything)`)
      else {
        out(`${repo.name}: ${describeRun(r)}`)
        if (!r.ok) code = 1
      }
      repo.close()
    }
  } finally {
    lock.release()
  }
  return code
}
