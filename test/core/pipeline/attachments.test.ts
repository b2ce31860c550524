// Attachments, in-process with stub plugins: a contributor's value reaches the target call
// (appended after the caller's own), settle gets the declared result fields only after success,
// and a contributor that fails or gives a value the schema refuses never fails the call.
import t from 'tap'
import type { AttachmentSupport, Plugin, ToolArgs } from '../../../core/src/plugin-api.ts'
import { upstreamFailure } from '../../../core/src/plugin-api.ts'
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
  const agwp = stubAgwp(() => upstreamFailure('conflict', 'stale base'))
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
