// What /proc tells about a child process (Linux), shared by the benches.
import { readdirSync, readFileSync } from 'node:fs'

/**
 * CPU time in ms the process has used so far, all threads (from /proc/<pid>/task/<tid>/schedstat,
 * nanoseconds on CPU): unlike wall time, barely moved by other load on the machine.
 */
export function cpuMs(pid) {
  try {
    let ns = 0
    for (const tid of readdirSync(`/proc/${pid}/task`)) ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0])
    return ns / 1e6
  } catch {
    return NaN
  }
}
