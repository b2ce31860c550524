// Whether a process id names a running process: the one liveness check behind every lock and
// state file that records its owner's pid (agit's file locks, local mode, ag-server's data
// directory). A leaf module with no imports: core, plugins, operator and the server share it.

/** True when `pid` runs: signal 0 probes without signalling; EPERM means it runs as someone else. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM'
  }
}
