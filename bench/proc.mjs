// Helpers shared by the benches: what /proc tells about a child (Linux), ending one, running a
// command, and the scratch directory and child list every bench cleans up at exit.
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/**
 * CPU time in ms the process has used so far, all threads (from /proc/<pid>/task/<tid>/schedstat,
 * nanoseconds on CPU): unlike wall time, barely moved by other load on the machine.
 */
export function cpuMs(pid) {
  try {
    let ns = 0
    for (const tid of readdirSync(`/proc/${pid}/task`))
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0])
    return ns / 1e6
  } catch {
    return NaN
  }
}

/** The pids of a process's children (/proc/<pid>/task/<tid>/children), none once it is gone. */
function childPids(pid) {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((tid) =>
      readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8').split(' ').filter(Boolean).map(Number),
    )
  } catch {
    return []
  }
}

/** CPU ms of the children a process has reaped (cutime + cstime of /proc/<pid>/stat, USER_HZ = 100). */
function reapedMs(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(f[13]) + Number(f[14])) * 10
  } catch {
    return NaN
  }
}

/**
 * The CPU a process and all its descendants have used so far (a PostgreSQL postmaster and its
 * backends): cpuMs of each, and what its reaped children used. Pass it to treeCpuMsSince.
 * @param {number} pid
 * @returns {{ pid: number, byPid: Map<number, number>, reaped: number }}
 */
export function treeCpu(pid) {
  /** @type {Map<number, number>} */
  const byPid = new Map()
  const walk = (p) => {
    byPid.set(p, cpuMs(p))
    for (const c of childPids(p)) walk(c)
  }
  walk(pid)
  return { pid, byPid, reaped: reapedMs(pid) }
}

/**
 * CPU ms the tree used since `before`: the live processes' growth, plus what the root reaped
 * meanwhile less what those reaped had used before (a backend that ended in between counts too).
 * @param {ReturnType<typeof treeCpu>} before
 */
export function treeCpuMsSince(before) {
  const after = treeCpu(before.pid)
  let ms = after.reaped - before.reaped
  for (const [p, v] of after.byPid) ms += v - (before.byPid.get(p) ?? 0)
  for (const [p, v] of before.byPid) if (!after.byPid.has(p)) ms -= v
  return ms
}

/** CPU time in ms of a process's main thread (where Node runs its JavaScript), like cpuMs. */
export function mainThreadMs(pid) {
  try {
    return Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6
  } catch {
    return NaN
  }
}

/**
 * Ends a child's stdin and waits for it to exit, killing it after `ms`.
 * @param {import('node:child_process').ChildProcess} proc @param {Promise<unknown>} exited resolves on exit
 */
export async function endAndWait(proc, exited, ms = 5000) {
  proc.stdin?.end()
  const timer = setTimeout(() => proc.kill('SIGKILL'), ms)
  const r = await exited
  clearTimeout(timer)
  return r
}

/** The environment a bench runs git (and ag-server) in: no system or user config, a fixed identity. */
export const gitEnv = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'bench',
  GIT_AUTHOR_EMAIL: 'bench@bench.invalid',
  GIT_COMMITTER_NAME: 'bench',
  GIT_COMMITTER_EMAIL: 'bench@bench.invalid',
}

/**
 * Runs a command to completion in gitEnv and returns its stdout; a failure names its stderr.
 * @param {string} cmd @param {string[]} args @param {string} [cwd]
 */
export function run(cmd, args, cwd) {
  try {
    return execFileSync(cmd, args, { cwd, env: gitEnv, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
  } catch (e) {
    const err = /** @type {{ stderr?: string, message: string }} */ (e)
    throw new Error(`${cmd} ${args.join(' ')} failed: ${(err.stderr || err.message).trim().slice(0, 500)}`)
  }
}

/**
 * A temporary directory and a list for the children a bench starts: cleanup() kills every child
 * still running and removes the directory; it also runs at exit (after SIGINT or SIGTERM too).
 * @param {string} prefix
 * @returns {{ tmp: string, children: import('node:child_process').ChildProcess[], cleanup: () => void }}
 */
export function scratch(prefix) {
  const tmp = mkdtempSync(join(tmpdir(), prefix))
  /** @type {import('node:child_process').ChildProcess[]} */
  const children = []
  const cleanup = () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL')
    // maxRetries: a killed server's git child (a repack) may still be writing into its repository.
    rmSync(tmp, { recursive: true, force: true, maxRetries: 10 })
  }
  process.on('exit', cleanup)
  for (const sig of /** @type {const} */ (['SIGINT', 'SIGTERM'])) process.on(sig, () => process.exit(130))
  return { tmp, children, cleanup }
}
