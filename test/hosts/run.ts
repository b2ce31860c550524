// `npm run test:hosts`: the real MCP hosts' own clients against the real ag-mcp (docs/hosts.md).
// Installs the pinned hosts into their cache when needed, then, in each mode (local: `ag-mcp
// --local` in a temporary git repository; agit: plain ag-mcp inside one), wires ag-mcp into each
// host, approves the entry where the host asks a person to, and runs the host's checks, with a
// temporary home. One line per host and check, then a summary; exit 1 when a check failed (a
// check a host cannot do is n/a, never a pass).
import { PINS, binaries, cacheDir, ensureCache } from './cache.ts'
import { HOSTS, expectFor } from './hosts.ts'
import type { Host, Mode } from './hosts.ts'
import type { Outcome } from './outcome.ts'
import { openSandbox } from './sandbox.ts'
import type { Sandbox } from './sandbox.ts'

const MODES: Mode[] = ['local', 'agit']
const say = (s: string) => process.stdout.write(`${s}\n`)

async function hostInMode(h: Host, mode: Mode, box: Sandbox, b: ReturnType<typeof binaries>): Promise<Outcome[]> {
  const v = h.version(b, box)
  const pinned = PINS[h.pkg]
  const version: Outcome =
    v.version === pinned
      ? { check: 'version', status: 'ok', detail: `${v.ran.shown}: ${v.version}` }
      : {
          check: 'version',
          status: 'FAIL',
          detail: `${v.ran.shown}: ${v.version ?? v.ran.stdout.trim()} (pinned ${pinned})`,
        }
  const e = expectFor(mode, box, h.name)
  let wired: string
  try {
    wired = h.wire(b, box, e)
  } catch (err) {
    return [version, { check: 'wire', status: 'FAIL', detail: (err as Error).message.split('\n')[0] ?? '' }]
  }
  const approved = h.approve?.(b, box, e)
  const checks = await h
    .checks(b, box, e)
    .catch((err: unknown): Outcome[] => [
      { check: 'checks', status: 'FAIL', detail: (err as Error).message.split('\n')[0] ?? '' },
    ])
  return [version, { check: 'wire', status: 'ok', detail: wired }, ...(approved ? [approved] : []), ...checks]
}

async function main(): Promise<number> {
  const started = Date.now()
  const dir = cacheDir()
  const cache = ensureCache(dir, say)
  say(
    cache.installed.length
      ? `hosts installed into ${dir} in ${(cache.ms / 1000).toFixed(1)} s`
      : `hosts found in ${dir} (warm: npm not run)`,
  )
  const b = binaries(dir)
  const tally = { ok: 0, FAIL: 0, 'n/a': 0 }
  const versions = new Map<string, string>()
  for (const mode of MODES) {
    const box = openSandbox(mode)
    try {
      for (const h of HOSTS) {
        const t0 = Date.now()
        const outcomes = await hostInMode(h, mode, box, b)
        const version = /: (\S+)$/.exec(outcomes[0]?.detail ?? '')?.[1] ?? '?'
        versions.set(h.name, version)
        for (const o of outcomes) {
          tally[o.status]++
          say(
            `${o.status.padEnd(4)} ${h.name.padEnd(11)} ${version.padEnd(8)} ${mode.padEnd(5)} ${o.check.padEnd(7)} ${o.detail}`,
          )
        }
        say(
          `     ${h.name.padEnd(11)} ${version.padEnd(8)} ${mode.padEnd(5)} (${((Date.now() - t0) / 1000).toFixed(1)} s)`,
        )
      }
    } finally {
      box.close()
    }
  }
  const hosts = [...versions].map(([n, v]) => `${n} ${v}`).join(', ')
  say(`test:hosts: ${hosts}`)
  say(
    `test:hosts: ${tally.ok} ok, ${tally.FAIL} failed, ${tally['n/a']} not possible without a model (n/a) in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  )
  return tally.FAIL === 0 ? 0 : 1
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    process.stderr.write(`test:hosts: ${(e as Error).stack ?? String(e)}\n`)
    process.exit(1)
  },
)
