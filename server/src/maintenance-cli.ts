import path from 'node:path'
import type { Argv } from 'yargs'
import { acquireLock, isDataDir } from './datadir.ts'
import { RepoRegistry, type Repo } from './repos.ts'
import { parseDuration } from './util.ts'
import {
  DEFAULT_MAINTENANCE,
  maintainRepo,
  maintenanceStatus,
  type MaintenanceOptions,
  type RunResult,
} from './maintenance.ts'

// The maintenance flags of `serve` and the `maintenance status|run` commands (maintenance.ts
// does the work). Kept apart from cli.ts, which only wires them in.

type Out = (s: string) => void

/**
 * The shortest grace a serving server accepts: an object a request writes is referenced
 * before the request answers, and requests end within a minute (connections.ts); five
 * minutes leaves room for a slow one. Offline (`maintenance run`) nothing writes: any grace.
 */
const MIN_SERVE_GRACE_S = 300

function duration(flag: string, v: unknown): number {
  try {
    return parseDuration(String(v))
  } catch {
    throw new Error(`--${flag}: '${String(v)}' is not a duration (e.g. 30s, 10m, 1h, 2d)`)
  }
}

function atLeast(flag: string, v: unknown, min: number): number {
  const n = Number(v)
  if (!Number.isSafeInteger(n) || n < min) throw new Error(`--${flag}: '${String(v)}' is not a whole number >= ${min}`)
  return n
}

/** `serve`'s maintenance flags (yargs option definitions). */
export const MAINTENANCE_FLAGS = {
  maintenance: {
    type: 'boolean',
    default: true,
    describe: 'pack and prune the repositories in the background (--no-maintenance: never)',
  },
  'maintenance-grace': { type: 'string', default: '1h', describe: 'keep unreachable objects this long (at least 5m)' },
  'maintenance-loose': {
    type: 'number',
    default: DEFAULT_MAINTENANCE.looseObjects,
    describe: 'pack loose objects once a repository has this many (sooner in a small one)',
  },
  'maintenance-max-packs': {
    type: 'number',
    default: DEFAULT_MAINTENANCE.maxPacks,
    describe: 'consolidate a repository into one pack (and a cruft pack) at this many packs',
  },
  'maintenance-interval': {
    type: 'string',
    default: `${DEFAULT_MAINTENANCE.intervalS}s`,
    describe: 'how often to look at each repository (a few directory reads)',
  },
} as const

/** The maintenance `serve` runs with (undefined: --no-maintenance); bad values throw. */
export function maintenanceFromFlags(a: Record<string, unknown>): MaintenanceOptions | undefined {
  const graceS = duration('maintenance-grace', a['maintenance-grace'] ?? '1h')
  if (graceS < MIN_SERVE_GRACE_S)
    throw new Error(
      `--maintenance-grace: ${String(a['maintenance-grace'])} is too short for a serving server (at least 5m: an object a request has written but not yet referenced must outlive the request); a shorter grace is for ag-server maintenance run, with the server stopped`,
    )
  const o: MaintenanceOptions = {
    ...DEFAULT_MAINTENANCE,
    graceS,
    looseObjects: atLeast('maintenance-loose', a['maintenance-loose'] ?? DEFAULT_MAINTENANCE.looseObjects, 1),
    maxPacks: atLeast('maintenance-max-packs', a['maintenance-max-packs'] ?? DEFAULT_MAINTENANCE.maxPacks, 2),
    intervalS: duration('maintenance-interval', a['maintenance-interval'] ?? `${DEFAULT_MAINTENANCE.intervalS}s`),
  }
  if (o.intervalS < 1) throw new Error('--maintenance-interval: at least 1s')
  return a['maintenance'] === false ? undefined : o
}

function reposOf(dir: string, repo: string | undefined): Repo[] {
  if (!isDataDir(dir)) throw new Error(`${dir} is not an ag-server data directory (run ag-server init)`)
  const reg = new RepoRegistry(path.join(dir, 'repos'))
  const names = reg.names()
  if (repo === undefined) return names.map((n) => reg.get(n))
  if (!names.includes(repo))
    throw new Error(`--repo: no repository ${repo} in ${dir} (it has ${names.length ? names.join(', ') : 'none'})`)
  return [reg.get(repo)]
}

const mb = (n: number): string => `${(n / 1048576).toFixed(1)} MB`

function describeRun(r: RunResult): string {
  const what = r.steps.join(' + ')
  const end = r.ok ? 'ok' : `FAILED (${r.error ?? ''})`
  return `${r.started_at} ${what}: ${end} in ${r.ms} ms; loose objects ${r.before.loose_objects} -> ${r.after.loose_objects}, packs ${r.before.packs} -> ${r.after.packs}, loose refs ${r.before.loose_refs} -> ${r.after.loose_refs}`
}

/** `maintenance status` and `maintenance run`, under `ag-server maintenance`. */
export function maintenanceCommands(y: Argv, out: Out, dataOpt: object): Argv {
  return y
    .command(
      'status',
      "each repository's objects, packs and refs now, and its last maintenance runs",
      (y2: Argv) =>
        y2
          .option('data', dataOpt)
          .option('repo', { type: 'string', describe: 'one repository (default: all)' })
          .option('json', { type: 'boolean', describe: 'print JSON' }),
      async (a) => {
        const dir = String(a['data'] ?? '')
        if (!dir) throw new Error('--data DIR is required (or set AG_SERVER_DATA)')
        const all = await Promise.all(reposOf(dir, a['repo'] as string | undefined).map((r) => maintenanceStatus(r)))
        if (a['json']) return out(JSON.stringify(all, null, 2))
        for (const s of all) {
          const c = s.counts
          out(
            `${s.repo}: ${mb(c.disk_bytes)} on disk; ${c.loose_objects} loose objects, ${c.packs} packs (${mb(c.pack_bytes)}), ${c.loose_refs} loose refs; ${s.state.runs} runs, ${s.state.failures} failed; last look ${s.state.last_check ?? 'never'}`,
          )
          if (s.state.last_run) out(`  last run: ${describeRun(s.state.last_run)}`)
        }
      },
    )
    .command(
      'run',
      'maintain the repositories now, with the server stopped (what is due; --full: everything)',
      (y2: Argv) =>
        y2
          .option('data', dataOpt)
          .option('repo', { type: 'string', describe: 'one repository (default: all)' })
          .option('full', { type: 'boolean', describe: 'pack refs and consolidate whatever the counts say' })
          .option('grace', {
            type: 'string',
            default: '1h',
            describe: 'keep unreachable objects this long (0: drop them all)',
          }),
      async (a) => {
        const dir = String(a['data'] ?? '')
        if (!dir) throw new Error('--data DIR is required (or set AG_SERVER_DATA)')
        const graceS = duration('grace', a['grace'])
        const repos = reposOf(dir, a['repo'] as string | undefined)
        const lock = acquireLock(dir, { pid: process.pid, kind: 'cli' })
        if (!lock.ok)
          throw new Error(
            lock.holder.kind === 'server'
              ? `a server (pid ${lock.holder.pid}) holds ${dir} and maintains its repositories itself (ag-server maintenance status shows its runs); stop it to run maintenance by hand`
              : `another ag-server command (pid ${lock.holder.pid}) is using ${dir}; retry when it is done`,
          )
        try {
          for (const repo of repos) {
            const r = await maintainRepo(repo, { ...DEFAULT_MAINTENANCE, graceS }, { full: a['full'] === true })
            if (r === undefined || r === 'deferred') out(`${repo.name}: nothing due (--full runs everything)`)
            else {
              out(`${repo.name}: ${describeRun(r)}`)
              if (!r.ok) process.exitCode = 1
            }
            repo.close()
          }
        } finally {
          lock.release()
        }
      },
    )
    .demandCommand(1, 'name a command: status or run')
}
