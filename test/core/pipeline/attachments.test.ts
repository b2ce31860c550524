// Attachments, in-process with stub plugins: a contributor's value reaches the target call
// (appended after the caller's own), settle gets the declared result fields only after success,
// and a contributor that fails or gives a value the schema refuses never fails the call.
import t from 'tap'
import type { AttachmentSupport, Plugin, ToolArgs } from '../../../core/src/plugin-api.ts'
import { relayed } from '../../../core/src/plugin-api.ts'
import { createTestPipeline } from '../../helpers/test-pipeline.ts'

function stubAgwp(answer: (args: ToolArgs) => unknown) {
  const calls: ToolArgs[] = []
  const plugin: Plugin = {
    name: 'agwp',
    api: 1,
    handlers: {},
    operation: {
      schema: {},
      run: async (args) => {
        calls.push(args)
        const a = answer(args)
        if (typeof a === 'object' && a !== null && 'pluginFailure' in a) throw a
        return a
      },
    },
  }
  return { plugin, calls }
}

function stubAgit(support: AttachmentSupport<unknown>): Plugin {
  return { name: 'agit', api: 1, handlers: {}, attachments: { staged_reasoning: support } }
}

const PROPOSE = { workspace: 'ws-1', title: 'T', reasoning: 'Mine.' }

t.test('the value travels, settle learns the declared result fields', async (t) => {
  const agwp = stubAgwp(() => ({ id: 'pr-1', state: 'open', head: 'c0ffee', extra: 'not declared' }))
  const settled: unknown[] = []
  const p = createTestPipeline({
    plugins: {
      agwp: agwp.plugin,
      agit: stubAgit({
        provide: async ({ tool, args }) => ({
          value: `thoughts for ${tool} (${String(args['title'])})`,
          receipt: 'r1',
        }),
        settle: async (receipt, result) => void settled.push({ receipt, result }),
      }),
    },
  })
  const r = await p.call('propose', PROPOSE)
  t.notOk(r.isError)
  t.equal(agwp.calls[0]?.['reasoning'], 'Mine.\n\nthoughts for propose (T)')
  t.same(settled, [{ receipt: 'r1', result: { proposal: 'pr-1', commit: 'c0ffee' } }])
})

t.test('without the agit group enabled, nothing is attached', async (t) => {
  const agwp = stubAgwp(() => ({ id: 'pr-1', state: 'open' }))
  let asked = 0
  const p = createTestPipeline({
    allow: ['read', 'workspace', 'propose', 'coordinate'],
    plugins: { agwp: agwp.plugin, agit: stubAgit({ provide: async () => (asked++, { value: 'x' }) }) },
  })
  t.notOk((await p.call('propose', PROPOSE)).isError)
  t.equal(asked, 0)
  t.equal(agwp.calls[0]?.['reasoning'], 'Mine.')
})

t.test('a failed target call is not settled', async (t) => {
  const agwp = stubAgwp(() => relayed('conflict', 'stale base'))
  let settled = 0
  const p = createTestPipeline({
    plugins: {
      agwp: agwp.plugin,
      agit: stubAgit({ provide: async () => ({ value: 'x' }), settle: async () => void settled++ }),
    },
  })
  t.equal((await p.call('propose', PROPOSE)).isError, true)
  t.equal(settled, 0, 'the thoughts stay staged')
})

t.test('a failing contributor is left out and logged; the call goes on', async (t) => {
  for (const [label, support] of [
    ['throws', { provide: async () => Promise.reject(new Error('disk on fire')) }],
    ['gives a value the schema refuses', { provide: async () => ({ value: 42 }) }],
  ] as const) {
    const agwp = stubAgwp(() => ({ id: 'pr-1', state: 'open' }))
    const p = createTestPipeline({ plugins: { agwp: agwp.plugin, agit: stubAgit(support) } })
    const r = await p.call('propose', { workspace: 'ws-1', title: 'T' })
    t.notOk(r.isError, label)
    t.equal(agwp.calls[0]?.['reasoning'], undefined, `${label}: nothing attached`)
    t.ok(
      p.logs.some((l) => l.startsWith('warn attachment left out')),
      `${label}: logged`,
    )
  }
})

// Asks: task_handoff (continuity) asks for `run_notes` during its call; the read group's
// attachment of that name answers. Stub plugins on both sides, the real manifests between.
function asker(input: Record<string, unknown>, name = 'run_notes'): Plugin {
  return {
    name: 'continuity',
    api: 1,
    handlers: {
      task_handoff: async (_args, ctx) => ({
        text: JSON.stringify((await ctx.attachment(name, input)) ?? 'nothing'),
        passport: null,
      }),
    },
  }
}

function answerer(provide: AttachmentSupport<unknown>['provide']): Plugin & { seen: unknown[] } {
  const seen: unknown[] = []
  return {
    name: 'agwp',
    api: 1,
    handlers: {},
    seen,
    attachments: { run_notes: { provide: async (call, ctx) => (seen.push(call.input), provide(call, ctx)) } },
  }
}

const NOTES = { notes: [{ author: 'agent:a#run-1', createdAt: '2026-01-01T00:00:00Z', body: 'tried X' }] }
const text = (r: { text: string }) => r.text

t.test('an ask reaches the enabled group that answers it, with its input; the answer comes back', async (t) => {
  const agwp = answerer(async () => ({ value: NOTES }))
  const p = createTestPipeline({
    allow: ['continuity', 'read'],
    plugins: { continuity: asker({ run: 'run-1' }), agwp },
  })
  const r = await p.call('task_handoff', {})
  t.notOk(r.isError, r.text)
  t.match(text(r), 'tried X')
  t.same(agwp.seen, [{ run: 'run-1' }])
})

t.test('an ask nobody enabled answers gives nothing, asks nothing and logs nothing', async (t) => {
  const agwp = answerer(async () => ({ value: NOTES }))
  const p = createTestPipeline({ allow: ['continuity'], plugins: { continuity: asker({ run: 'run-1' }), agwp } })
  const r = await p.call('task_handoff', {})
  t.notOk(r.isError)
  t.match(text(r), '"nothing"')
  t.same(agwp.seen, [])
  t.same(
    p.logs.filter((l) => l.startsWith('warn') || l.startsWith('error')),
    [],
  )
})

t.test('a failing or misfitting answer, or a bad ask, gives nothing and is logged; the call goes on', async (t) => {
  for (const [label, plugin, input, name, log] of [
    [
      'provider throws',
      answerer(async () => Promise.reject(relayed('internal', 'boom'))),
      { run: 'r' },
      'run_notes',
      /^warn attachment left out .*boom/,
    ],
    [
      'answer misfits',
      answerer(async () => ({ value: { notes: 'all good' } })),
      { run: 'r' },
      'run_notes',
      /^warn attachment left out .*does not fit the ask/,
    ],
    [
      'input misfits',
      answerer(async () => ({ value: NOTES })),
      { run: '' },
      'run_notes',
      /^error attachment not asked: the input does not fit/,
    ],
    [
      'undeclared ask',
      answerer(async () => ({ value: NOTES })),
      { run: 'r' },
      'secrets',
      /^error a tool asked for an attachment its manifest does not declare/,
    ],
  ] as const) {
    const p = createTestPipeline({
      allow: ['continuity', 'read'],
      plugins: { continuity: asker(input, name), agwp: plugin },
    })
    const r = await p.call('task_handoff', {})
    t.notOk(r.isError, label)
    t.match(text(r), '"nothing"', `${label}: nothing handed back`)
    t.ok(
      p.logs.some((l) => log.test(l)),
      `${label}: logged`,
    )
    if (label.endsWith('misfits') && label.startsWith('input')) t.same(plugin.seen, [], 'a bad input is never sent')
  }
})
