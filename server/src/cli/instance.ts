// `serve`'s flags for several instances on one PostgreSQL store: who this instance is, where
// the others reach it, and how long a silent owner keeps its repositories (owners.ts).
import { UsageError, stringValue, type FlagTable, type FlagValues } from '../../../lib/cli/flags.ts'
import { defaultInstance, type InstanceOptions } from '../owners.ts'
import { parseDuration } from '../util.ts'

export const DEFAULT_OWNER_LEASE = '15s'

export const INSTANCE_FLAGS: FlagTable = {
  instance: {
    type: 'string',
    value: 'ID',
    describe: "with a PostgreSQL store: this instance's id among those sharing it (default HOSTNAME:PORT)",
  },
  advertise: {
    type: 'string',
    value: 'URL',
    describe: 'with a PostgreSQL store: the URL the other instances reach this one at (default the listen address)',
  },
  'owner-lease': {
    type: 'string',
    value: 'DURATION',
    default: DEFAULT_OWNER_LEASE,
    describe:
      'with a PostgreSQL store: how long an instance that stopped heartbeating keeps its repositories before another takes them over',
  },
}

const ID_RE = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/

/** The instance's identity from serve's flags; `listen` is the address actually bound. */
export function instanceFromFlags(values: FlagValues, listen: { host: string; port: number }): InstanceOptions {
  const byDefault = defaultInstance(listen)
  const instance = stringValue(values, 'instance') ?? byDefault.instance
  if (!ID_RE.test(instance))
    throw new UsageError(`--instance: '${instance}' must be letters, digits and . _ : - (at most 128), e.g. web-1`)
  const advertise = stringValue(values, 'advertise') ?? byDefault.advertise
  let u: URL
  try {
    u = new URL(advertise)
  } catch {
    throw new UsageError(`--advertise: '${advertise}' is not a URL (e.g. http://10.0.0.5:7420)`)
  }
  if (u.protocol !== 'http:' || u.pathname !== '/' || u.search || u.hash || u.username)
    throw new UsageError(
      `--advertise: '${advertise}' must be http://HOST:PORT, with no path (e.g. http://10.0.0.5:7420)`,
    )
  const raw = stringValue(values, 'owner-lease') ?? DEFAULT_OWNER_LEASE
  let s: number
  try {
    s = parseDuration(raw)
  } catch {
    throw new UsageError(`--owner-lease: '${raw}' is not a duration (e.g. 15s, 1m)`)
  }
  if (s < 1) throw new UsageError(`--owner-lease: '${raw}' must be at least 1s`)
  return { instance, advertise: u.origin, leaseMs: s * 1000 }
}
