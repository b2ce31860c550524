// createTestPipeline: the real call pipeline (registry, policy, validators, safety) in-process,
// with stub plugins, for unit tests of the core. The spawned-binary tests cover the real path.
import { createPipeline } from '../../core/src/pipeline/pipeline.ts'
import { PluginSet } from '../../core/src/pipeline/plugins.ts'
import type { CallPolicy } from '../../core/src/pipeline/policy-check.ts'
import { Registry } from '../../core/src/manifest/registry.ts'
import type { CallOutcome, CallPipeline } from '../../core/src/mcp/pipeline-api.ts'
import type { Logger, Plugin } from '../../core/src/plugin-api.ts'
import { resolveGroups } from '../../core/src/policy/groups.ts'
import { createTokenBucket } from '../../core/src/policy/rate-limit.ts'
import { createScrubber } from '../../core/src/safety/scrub.ts'
import { manifests } from '../../generated/manifests.js'

export interface TestPipelineOptions {
  plugins: Record<string, Plugin>
  allow?: string[]
  enable?: string[]
  policy?: Partial<CallPolicy>
  secrets?: string[]
  maxOutputBytes?: number
  ratePerSec?: number
  /** Replaces the registry built from the generated manifests (a build defect's stand-in). */
  registry?: Registry
}

export interface TestPipeline {
  pipeline: CallPipeline
  logs: string[]
  call(name: string, args: unknown, signal?: AbortSignal): Promise<CallOutcome>
}

export function createTestPipeline(o: TestPipelineOptions): TestPipeline {
  const logs: string[] = []
  const log: Logger = {
    debug: (m, f) => void logs.push(`debug ${m} ${JSON.stringify(f ?? {})}`),
    info: (m, f) => void logs.push(`info ${m} ${JSON.stringify(f ?? {})}`),
    warn: (m, f) => void logs.push(`warn ${m} ${JSON.stringify(f ?? {})}`),
    error: (m, f) => void logs.push(`error ${m} ${JSON.stringify(f ?? {})}`),
  }
  const secrets = o.secrets ?? []
  const registry = o.registry ?? new Registry(manifests)
  const groups = resolveGroups(registry.groups, o.allow, o.enable ?? [])
  if (!groups.ok) throw new Error(groups.error)
  // Stub plugins are bundled as they are: no options, loaded as given.
  const bundled = Object.fromEntries(
    Object.entries(o.plugins).map(([k, p]) => [
      k,
      { optionPrefix: `${k}-`, options: {}, validators: {}, load: async () => p },
    ]),
  )
  const tokens = { current: async () => o.secrets?.[0], refresh: async () => o.secrets?.[0] }
  const pipeline = createPipeline({
    identity: { name: 'ag-mcp', title: 'test', version: '0.0.0' },
    instructions: 'test',
    registry,
    enabled: groups.enabled,
    plugins: new PluginSet(bundled, { options: {}, credentials: { agwp: tokens }, log }),
    log,
    scrubber: createScrubber(() => secrets),
    maxOutputBytes: o.maxOutputBytes ?? 65536,
    rateLimit: createTokenBucket({ ratePerSec: o.ratePerSec ?? 1000, burst: Math.ceil((o.ratePerSec ?? 1000) * 2) }),
    policy: { repoGlobs: [], writeGlobs: [], requireLease: false, ...o.policy },
    serverInfo: {
      name: 'ag-mcp',
      version: '0.0.0',
      groups: [...groups.enabled],
      revisions: ['2026-07-28'],
      limits: {},
    },
  })
  return {
    pipeline,
    logs,
    call: (name, args, signal) =>
      pipeline.callTool(name, args, { signal: signal ?? new AbortController().signal, structured: true, requestId: 1 }),
  }
}
