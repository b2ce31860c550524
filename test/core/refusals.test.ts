// Every refusal the pipeline makes, through the real pipeline (registry, validators, policy,
// rendering) with stub plugins: the summary says why in the catalog's words and ends with the
// code, and structuredContent.error carries the code and its holes.
import t from 'tap'
import type { Test } from 'tap'
import type { Plugin, ToolArgs } from '../../core/src/plugin-api.ts'
import { localFailure, relayed } from '../../core/src/plugin-api.ts'
import type { CallOutcome } from '../../core/src/mcp/pipeline-api.ts'
import { Registry } from '../../core/src/manifest/registry.ts'
import type { GroupManifest } from '../../core/src/manifest/types.ts'
import { manifests } from '../../generated/manifests.js'
import { createTestPipeline } from '../helpers/test-pipeline.ts'

/** An agwp stand-in: counts what reached it, answers or throws what `answer` gives. */
function stubAgwp(answer: (tool: string, args: ToolArgs) => unknown) {
  const calls: string[] = []
  const plugin: Plugin = {
    name: 'agwp',
    api: 1,
    handlers: {},
    operation: {
      schema: {},
      run: async (args, ctx) => {
        calls.push(ctx.tool.name)
        const a = answer(ctx.tool.name, args)
        if (a instanceof Error || (typeof a === 'object' && a !== null && 'pluginFailure' in a)) throw a
        return a
      },
    },
  }
  return { plugin, calls }
}

function refused(t: Test, r: CallOutcome, code: string, text: RegExp, holes: Record<string, unknown> = {}) {
  t.equal(r.isError, true, `${code}: an isError result`)
  const summary = r.text.split('\n')[0] ?? ''
  t.match(summary, text, `${code}: the catalog's words`)
  t.match(summary, new RegExp(`\\[${code}\\]$`), `${code}: the summary ends with the code`)
  t.same(r.structured, { error: { code, ...holes } }, `${code}: structuredContent.error`)
}

const LOG = { repo: 'team/a' }

t.test('refusals before anything is sent', async (t) => {
  const agwp = stubAgwp(() => ({}))
  const h = createTestPipeline({ plugins: { agwp: agwp.plugin }, policy: { repoGlobs: ['team/*'] } })
  refused(
    t,
    await h.call('proposal_integrate', { proposal: 'pr-1' }),
    'group_disabled',
    /^proposal_integrate: refused: .*--enable-integrate/,
    {
      group: 'integrate',
      explanation:
        'Tool proposal_integrate belongs to the "integrate" group, which this server has not enabled. The operator can enable it only with --enable-integrate.',
    },
  )
  refused(t, await h.call('log', [1]), 'arguments_not_object', /^log: refused: "arguments" must be a JSON object\./)
  refused(
    t,
    await h.call('log', { repo: 7 }),
    'input_invalid',
    /^log: refused: the arguments do not match the input schema: /,
    {
      problems: 'repo: must be string',
    },
  )
  refused(t, await h.call('log', { repo: 'other/x' }), 'policy_refused', /^log: refused by --repo: /, {
    rule: '--repo',
    reason: 'repository "other/x" matches no --repo glob. Allowed repositories: team/*.',
  })
  t.equal(agwp.calls.length, 0, 'nothing reached the plugin')
})

t.test('the rate limit', async (t) => {
  const agwp = stubAgwp(() => ({}))
  const h = createTestPipeline({ plugins: { agwp: agwp.plugin }, ratePerSec: 0.001 })
  await h.call('log', LOG) // the burst of one
  const r = await h.call('log', LOG)
  t.equal(r.isError, true)
  t.match(r.text, /^log: refused by the rate limit \(--rate-limit\): .* \[rate_limited\]$/)
  t.equal((r.structured?.['error'] as { code?: string } | undefined)?.code, 'rate_limited')
  t.equal(agwp.calls.length, 1, 'the refused call was not sent')
})

t.test('failures the plugin reports, and the core concludes', async (t) => {
  const answers: Record<string, () => unknown> = {
    local: () => localFailure('not_found', 'no such thing'),
    upstream: () => relayed('conflict', 'moved on', { status: 409 }),
    crash: () => new Error('boom'),
    shape: () => ({ not: 'a log' }),
  }
  let next = 'local'
  const agwp = stubAgwp(() => answers[next]?.())
  const h = createTestPipeline({ plugins: { agwp: agwp.plugin } })
  refused(
    t,
    await h.call('log', LOG),
    'plugin_failed',
    /^log: failed: the agwp plugin reported not_found\. Its message, quoted:/,
    {
      plugin: 'agwp',
      failure: 'not_found',
      shown: 'quoted',
    },
  )
  next = 'upstream'
  refused(t, await h.call('log', LOG), 'upstream_failed', /^log: failed: the upstream answered 409 conflict\./, {
    failure: 'conflict',
    status: 409,
    shown: 'quoted',
  })
  next = 'crash'
  const crash = await h.call('log', LOG)
  refused(t, crash, 'internal', /^log: failed inside ag-mcp \(see its log\)/)
  t.notMatch(crash.text, /boom/, 'an internal error is not shown to the model')
  next = 'shape'
  refused(
    t,
    await h.call('log', LOG),
    'output_invalid',
    /^log: failed: the agwp plugin's answer did not have the expected shape/,
    {
      plugin: 'agwp',
    },
  )
})

// Build defects no process can be brought to from outside (test/conformance/refusals.test.ts
// covers the rest there): a registry that lost a group, a tool the build wrote no validator for.
t.test('refusals for a build defect', async (t) => {
  const agwp = stubAgwp(() => ({}))
  const lost = new Registry(manifests)
  const read = lost.tool('log')?.group as string
  ;(lost.groups as Map<string, unknown>).delete(read)
  const h = createTestPipeline({ plugins: { agwp: agwp.plugin }, registry: lost })
  refused(t, await h.call('log', LOG), 'group_unknown', /^log: refused: its group is unknown \[group_unknown\]$/)

  // The read group as written, plus a tool the build never saw (so it has no validator).
  const written = manifests.map((m): GroupManifest => {
    const plain = { ...m, tools: m.tools } as GroupManifest
    if (m.group !== read) return plain
    const log = m.tools.find((x) => x.name === 'log') as GroupManifest['tools'][number]
    return { ...plain, tools: [...m.tools, { ...log, name: 'log_unbuilt' }] }
  })
  const unbuilt = createTestPipeline({ plugins: { agwp: agwp.plugin }, registry: new Registry(written) })
  refused(
    t,
    await unbuilt.call('log_unbuilt', LOG),
    'no_validator',
    /^log_unbuilt: refused: no validator was built for this tool \(a build defect; see the log\)\. \[no_validator\]$/,
  )
  t.equal(agwp.calls.length, 0, 'nothing reached the plugin')
})
