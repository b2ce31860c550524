// Child-process helpers shared by the benches: what /proc tells about one (Linux), and ending one.
import { readdirSync, readFileSync } from 'node:fs'

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
