// `ag-server serve`: take the data directory's lock, listen (an address in use is named with the
// fix), warn of plain HTTP beyond loopback, and stop on a signal, on stdin's end, or with the
// last holder.
import type { CommandArgs } from '../../../lib/cli/commands.ts'
import type { FlagValues } from '../../../lib/cli/flags.ts'
import { UsageError, numberValue, stringValue } from '../../../lib/cli/flags.ts'
import { acquireServeLock, dataDirStore, isDataDir, updateLock } from '../datadir.ts'
import { favourMemory } from '../heap.ts'
import { holdOpen } from '../holders.ts'
import { startServer, type ServerOptions } from '../http.ts'
import { isLoopback, listenOrExplain } from '../listen.ts'
import { parseDuration } from '../util.ts'
import { dataDir, type CliContext } from './admin.ts'
import { instanceFromFlags } from './instance.ts'
import { maintenanceFromFlags } from './maintenance.ts'
import { isPostgresUrl } from '../open-state.ts'
import { redactUrl } from '../pg/url.ts'

function parseListen(s: string): { host: string; port: number } {
  const m = /^(\[[^\]]+\]|[^:]+):([0-9]{1,5})$/.exec(s)
  if (!m) throw new UsageError(`--listen must be HOST:PORT (e.g. 127.0.0.1:7420), got ${s}`)
  return { host: (m[1] ?? '').replace(/^\[|\]$/g, ''), port: Number(m[2]) }
}

export async function serve({ values }: CommandArgs, { out }: CliContext): Promise<void> {
  if (values['lean-heap'] !== false) favourMemory()
  const dir = dataDir(stringValue(values, 'data'))
  if (!isDataDir(dir)) throw new Error(`${dir} is not an ag-server data directory (run ag-server init)`)
  const { host, port } = parseListen(stringValue(values, 'listen') ?? '')
  // Every flag checked before anything is locked or listens.
  const options = serverOptions(values)
  const store = storeOf(values, dir)
  // With a PostgreSQL store, several instances share --data: each takes its own lock, named by
  // its id; its flags are checked before anything listens (a port of 0 is known once bound:
  // that instance's lock is named by its pid).
  const instanceOf = (bound: { host: string; port: number }) => instanceFromFlags(values, bound)
  const instance =
    store === undefined ? undefined : port === 0 ? `pid-${process.pid}` : instanceOf({ host, port }).instance
  const lock = acquireServeLock(dir, { pid: process.pid, kind: 'server' }, instance)
  if (!lock.ok) throw new Error(lock.why)
  const srv = await listenOrExplain(host, port, lock.release, () =>
    startServer({
      ...options,
      dataDir: dir,
      ...(store !== undefined ? { store, migrate: values['migrate'] !== false, instance: instanceOf } : {}),
      host,
      port,
    }),
  )
  const listen = srv.url.replace(/^http:\/\//, '').replace(/\/agwp\/v1$/, '')
  let stopping = false
  const stop = (): void => {
    if (stopping) return
    stopping = true
    void srv.close().finally(() => {
      lock.release()
      process.exit(0)
    })
  }
  const holders =
    values['exit-with-holders'] === true
      ? await holdOpen({ host, state: srv.ctx.state, stdinHolds: true, onIdle: stop })
      : undefined
  updateLock(
    dir,
    { pid: process.pid, kind: 'server', listen, ...(holders ? { holders: holders.address } : {}) },
    lock.name,
  )
  if (!isLoopback(host))
    process.stderr.write(
      `ag-server: warning: plain HTTP on ${listen}, beyond loopback: tokens and code cross the network unencrypted; put a TLS reverse proxy in front and listen on 127.0.0.1 (docs/security.md, "A shared server over a network")\n`,
    )
  out(`ag-server listening on ${srv.url}${holders ? ` (holders on ${holders.address})` : ''}`)
  if (srv.ui)
    out(
      `review page at ${srv.url.replace(/\/agwp\/v1$/, '')}/ui/ (sessions are kept in memory: a restart signs people out)`,
    )
  process.once('SIGINT', stop)
  process.once('SIGTERM', stop)
  // The parent holds the other end of stdin: when it ends, however it ends (even SIGKILL), the
  // pipe closes and this server follows it instead of living on unowned.
  if (values['exit-with-stdin'] === true) {
    process.stdin.once('end', stop)
    process.stdin.once('error', stop)
    process.stdin.resume()
  }
  await new Promise<never>(() => undefined)
}

/** --store, checked against what the data directory was made with: one store per data directory. */
function storeOf(values: FlagValues, dir: string): string | undefined {
  const store = stringValue(values, 'store')
  if (store !== undefined && !isPostgresUrl(store))
    throw new UsageError(`--store must be a postgres:// URL, got ${redactUrl(store)}`)
  // The admin token and every record live where init put them.
  const kept = dataDirStore(dir)
  if (kept === 'postgres' && store === undefined)
    throw new UsageError(
      `${dir} keeps its state in PostgreSQL: name the database with --store postgres://… (or AG_SERVER_STORE)`,
    )
  if (kept === 'journal' && store !== undefined)
    throw new UsageError(
      `${dir} keeps its state in its own journal: --store needs a data directory made by \`ag-server init DIR --store …\``,
    )
  return store
}

/** The server's limits, rates, maintenance and review page, by the flags. */
function serverOptions(values: FlagValues): Omit<ServerOptions, 'dataDir'> {
  const origin = stringValue(values, 'ui-origin')
  return {
    rate: numberValue(values, 'rate') ?? 0,
    burst: numberValue(values, 'burst') ?? 0,
    maintenance: maintenanceFromFlags(values),
    limits: {
      maxBodyBytes: numberValue(values, 'max-body-bytes') ?? 0,
      maxFileBytes: numberValue(values, 'max-file-bytes') ?? 0,
    },
    ...(values['ui'] === true
      ? {
          ui: {
            sessionTtlS: parseDuration(stringValue(values, 'ui-session-ttl') ?? ''),
            ...(origin !== undefined ? { origin } : {}),
          },
        }
      : {}),
  }
}
