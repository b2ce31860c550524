// Every agwp tool, end to end: the real ag-server over a real git repository, the real bundled
// ag-mcp over stdio, in the modern era and in each legacy era; every message is validated
// against the MCP schema of its revision. Also resources, prompts and the tools/list budget.
import t from 'tap'
import { ERAS, agwpFixture, client, fencedJson, mcp } from './agwp-fixture.ts'
import type { CallResult, Era } from './agwp-fixture.ts'
import type { Json } from '../helpers/json.ts'

const fx = await agwpFixture()
t.teardown(() => fx.close())
const aliceFile = fx.tokenFile('alice')
const maxiFile = fx.tokenFile('maxi')
// Each era integrates a proposal into main, so reads are pinned to the initial commits.
const initial = (await fx.api('alice', 'GET', '/repos/demo/log')).body['commits'] as { id: string }[]
const HEAD = initial[0]?.id ?? ''
const FIRST = initial[1]?.id ?? ''

const DEFAULT_TOOLS = [
  'server_info',
  'whoami',
  'repo_list',
  'log',
  'commit_show',
  'file_read',
  'diff',
  'search',
  'task_list',
  'proposal_list',
  'workspace_create',
  'workspace_status',
  'file_write',
  'file_delete',
  'file_move',
  'workspace_discard',
  'propose',
  'proposal_revise',
  'proposal_withdraw',
  'task_claim',
  'run_update',
  'run_release',
  'lease_acquire',
  'lease_release',
  // ag-mcp runs inside this repository's checkout (a git work tree): the agit group is on too.
  'agit_log_step',
  'agit_get_status',
  'agit_get_file_history',
  'agit_get_relevant_context',
  'agit_read_roadmap',
  'agit_get_recent_summaries',
  'agit_get_context',
]

interface Asserts {
  notOk(v: unknown, m: string): unknown
  match(a: unknown, b: unknown, m: string): unknown
  equal(a: unknown, b: unknown, m: string): unknown
  type(a: unknown, b: string, m: string): unknown
}

function ok(t: Asserts, era: Era, r: CallResult, what: string): Record<string, Json> {
  t.notOk(r.isError, `${what}: not an error${r.isError ? ` (${r.text.slice(0, 300)})` : ''}`)
  t.match(r.text, /^[a-z_]+: ok; .*\n<<<AGENTGIT-DATA [0-9a-f]+ kind=/, `${what}: summary line, then the fence`)
  if (era === '2025-03-26') {
    t.equal(r.structured, undefined, `${what}: no structuredContent in 2025-03-26`)
    return fencedJson(r.text)
  }
  t.type(r.structured, 'object', `${what}: structuredContent`)
  return r.structured ?? {}
}

for (const era of ERAS) {
  t.test(`every tool succeeds (${era})`, async (t) => {
    const taskId = await fx.task(`tools ${era}`, ['lib/**'])
    const spare = await fx.task(`spare ${era}`)
    const p = mcp(t, fx.upstream, aliceFile)
    const c = await client(p, era)

    const list = await c.request('tools/list')
    const names = ((list.result?.['tools'] as { name: string }[]) ?? []).map((x) => x.name)
    t.same(
      [...names].sort(),
      [...DEFAULT_TOOLS].sort(),
      'the default groups: core, read, workspace, propose, coordinate, agit',
    )
    const bytes = Buffer.byteLength(JSON.stringify(list))
    t.ok(
      names.length <= 32 && bytes <= 24 * 1024,
      `tools/list: ${names.length} tools, ${bytes} bytes (limits 32 and 24 KiB)`,
    )
    t.comment(`tools/list ${era}: ${names.length} tools, ${bytes} bytes`)

    const me = ok(t, era, await c.call('whoami'), 'whoami')
    t.equal(me['principal'], 'agent:alice')
    t.match(ok(t, era, await c.call('repo_list'), 'repo_list'), { repos: [{ name: 'demo' }] })
    t.match(ok(t, era, await c.call('repo_list', { repo: 'demo' }), 'repo_list one'), {
      repos: [{ name: 'demo', policy: { required_approvals: 1 } }],
    })
    const log = ok(t, era, await c.call('log', { repo: 'demo', ref: HEAD, limit: 5 }), 'log')
    const head = HEAD
    const first = FIRST
    t.same(
      log['commits'].map((x: { id: string }) => x.id),
      [HEAD, FIRST],
    )
    t.match(ok(t, era, await c.call('commit_show', { repo: 'demo', commit: head }), 'commit_show'), {
      id: head,
      files: [{ path: 'lib/util.ts' }],
    })
    const readme = await c.call('file_read', { repo: 'demo', path: 'README.md', ref: HEAD })
    ok(t, era, readme, 'file_read')
    t.match(readme.text, /\n# demo\nhello world\n/, 'a file is shown as itself inside the fence')
    const root = ok(t, era, await c.call('file_read', { repo: 'demo', ref: first }), 'file_read dir')
    t.equal(root['kind'], 'dir')
    const bin = ok(t, era, await c.call('file_read', { repo: 'demo', path: 'logo.bin', ref: HEAD }), 'file_read binary')
    if (era !== '2025-03-26') t.match(bin, { encoding: 'base64', content: 'AAEC//4ABw==' })
    const d = await c.call('diff', { repo: 'demo', base: first, head })
    ok(t, era, d, 'diff')
    t.match(
      d.text,
      /\ndiff --git a\/lib\/util.ts b\/lib\/util.ts\n[\s\S]*\+export const y = 2/,
      'the patch is shown raw',
    )
    t.match(ok(t, era, await c.call('search', { repo: 'demo', q: 'hello', ref: HEAD }), 'search'), {
      matches: [{ path: 'README.md', line: 2 }],
    })
    const tasks = ok(t, era, await c.call('task_list', { repo: 'demo', state: 'open' }), 'task_list')
    t.ok(tasks['tasks'].some((x: { id: string }) => x.id === taskId))

    const run = ok(t, era, await c.call('task_claim', { task: taskId, ttl_s: 600 }), 'task_claim')
    const runId = run['run_id'] as string
    t.match(runId, /^run-\d+$/)
    t.match(ok(t, era, await c.call('run_update', { run_id: runId, note: 'starting' }), 'run_update'), {
      run_id: runId,
      state: 'active',
      note: { body: 'starting' },
    })
    t.match(ok(t, era, await c.call('task_list', { repo: 'demo', task: taskId }), 'task_list one'), {
      tasks: [{ id: taskId, state: 'claimed' }],
      run: { run_id: runId, notes: [{ body: 'starting' }] },
    })
    const lease = ok(
      t,
      era,
      await c.call('lease_acquire', { repo: 'demo', paths: ['lib/**'], run_id: runId }),
      'lease_acquire',
    )
    const ws = ok(t, era, await c.call('workspace_create', { repo: 'demo', run_id: runId }), 'workspace_create')
    const wsId = ws['id'] as string
    const util = ok(
      t,
      era,
      await c.call('file_read', { repo: 'demo', path: 'lib/util.ts', workspace: wsId }),
      'file_read blob through the workspace',
    )
    const blob = util['blob'] as string
    t.match(
      ok(
        t,
        era,
        await c.call('file_write', {
          workspace: wsId,
          path: 'lib/util.ts',
          content: `export const x = 3 // ${era}\n`,
          if_match: blob,
          run_id: runId,
          lease_id: lease['id'],
        }),
        'file_write',
      ),
      { path: 'lib/util.ts', created: false },
    )
    ok(
      t,
      era,
      await c.call('file_write', {
        workspace: wsId,
        path: 'lib/new.bin',
        content: 'AAEC',
        encoding: 'base64',
        run_id: runId,
      }),
      'file_write base64',
    )
    ok(
      t,
      era,
      await c.call('file_write', { workspace: wsId, path: 'lib/tmp.txt', content: 'tmp\n', if_match: 'absent' }),
      'file_write new',
    )
    const through = await c.call('file_read', { repo: 'demo', path: 'lib/util.ts', workspace: wsId })
    ok(t, era, through, 'file_read through the workspace')
    t.match(through.text, /\nexport const x = 3 \/\/ 20/)
    t.match(
      ok(
        t,
        era,
        await c.call('file_move', { workspace: wsId, from: 'lib/tmp.txt', to: 'lib/moved.txt', run_id: runId }),
        'file_move',
      ),
      { to: 'lib/moved.txt' },
    )
    t.match(
      ok(t, era, await c.call('file_delete', { workspace: wsId, path: 'lib/moved.txt', run_id: runId }), 'file_delete'),
      { deleted: true },
    )
    const status = await c.call('workspace_status', { workspace: wsId, diff: true })
    ok(t, era, status, 'workspace_status')
    t.match(status.text, /\n?diff --git a\/lib\/util.ts b\/lib\/util.ts[\s\S]*\+export const x = 3/)
    const prop = ok(
      t,
      era,
      await c.call('propose', {
        workspace: wsId,
        title: `Change x (${era})`,
        task: taskId,
        reasoning: 'because',
        run_id: runId,
      }),
      'propose',
    )
    const propId = prop['id'] as string
    t.equal(prop['state'], 'open')
    ok(
      t,
      era,
      await c.call('file_write', {
        workspace: wsId,
        path: 'lib/util.ts',
        content: `export const x = 4 // ${era}\n`,
        run_id: runId,
      }),
      'file_write again',
    )
    t.match(
      ok(
        t,
        era,
        await c.call('proposal_revise', { proposal: propId, workspace: wsId, note: 'x = 4', run_id: runId }),
        'proposal_revise',
      ),
      { id: propId, state: 'open' },
    )
    const full = ok(t, era, await c.call('proposal_list', { repo: 'demo', proposal: propId }), 'proposal_list one')
    t.match(full, { proposals: [{ id: propId, revisions: [{}, {}], mergeability: String }] })
    t.ok(
      ok(t, era, await c.call('proposal_list', { repo: 'demo', state: 'open' }), 'proposal_list')['proposals'].some(
        (x: { id: string }) => x.id === propId,
      ),
    )
    const pd = await c.call('diff', { repo: 'demo', proposal: propId })
    ok(t, era, pd, 'diff of a proposal')
    t.match(pd.text, new RegExp(`\\+export const x = 4 // ${era}`))

    // A second proposal, withdrawn; its workspace discarded.
    const ws2 = ok(t, era, await c.call('workspace_create', { repo: 'demo', base: 'main' }), 'workspace_create 2')
    ok(t, era, await c.call('file_write', { workspace: ws2['id'], path: 'NOTES.md', content: 'n\n' }), 'file_write 2')
    const p2 = ok(
      t,
      era,
      await c.call('propose', { workspace: ws2['id'], title: 'throwaway', task: spare }),
      'propose 2',
    )
    t.match(
      ok(t, era, await c.call('proposal_withdraw', { proposal: p2['id'], reason: 'not needed' }), 'proposal_withdraw'),
      { state: 'withdrawn' },
    )
    t.match(ok(t, era, await c.call('workspace_discard', { workspace: ws2['id'] }), 'workspace_discard'), {
      state: 'discarded',
    })

    t.match(ok(t, era, await c.call('lease_release', { lease_id: lease['id'] }), 'lease_release'), { ok: true })
    t.match(
      ok(t, era, await c.call('run_release', { run_id: runId, outcome: 'done', note: 'proposed' }), 'run_release'),
      { state: 'released', outcome: 'done' },
    )

    // Review and integration: another principal, with the opt-in and flag-only groups enabled.
    const m = mcp(t, fx.upstream, maxiFile, ['--allow', 'read,review', '--enable-integrate'])
    const r = await client(m, era)
    const names2 = (((await r.request('tools/list')).result?.['tools'] as { name: string }[]) ?? []).map((x) => x.name)
    t.ok(
      names2.includes('review_submit') && names2.includes('proposal_integrate') && !names2.includes('file_write'),
      'review and integrate listed; workspace not',
    )
    t.match(
      ok(
        t,
        era,
        await r.call('review_submit', {
          proposal: propId,
          verdict: 'approve',
          body: 'LGTM',
          comments: [{ path: 'lib/util.ts', line: 1, body: 'nice' }],
        }),
        'review_submit',
      ),
      { verdict: 'approve' },
    )
    const before = ok(
      t,
      era,
      await r.call('proposal_list', { repo: 'demo', proposal: propId }),
      'proposal_list for integration',
    )['proposals'][0]
    t.same(before.integration_blockers, [], 'nothing blocks integration')
    const integrated = ok(
      t,
      era,
      await r.call('proposal_integrate', {
        proposal: propId,
        expected_target_head: before.target_head,
        strategy: 'merge',
      }),
      'proposal_integrate',
    )
    t.match(integrated, { target: 'main', strategy: String, commit: /^[0-9a-f]{40}$/ })
    t.match(m.stderr, /integrate/i, 'the flag-only group is warned about')

    t.equal((await p.close()).code, 0)
    t.equal((await m.close()).code, 0)
    p.assertValid(t)
    m.assertValid(t)
  })
}

t.test('resources and prompts, in every era', async (t) => {
  for (const era of ERAS) {
    const p = mcp(t, fx.upstream, aliceFile)
    const c = await client(p, era)
    const templates = (await c.request('resources/templates/list')).result?.['resourceTemplates'] as {
      uriTemplate: string
    }[]
    t.same(
      templates.map((x) => x.uriTemplate).sort(),
      ['agwp://{repo}/file/{ref}/{+path}', 'agwp://{repo}/proposals/{proposal}'],
      `${era}: templates`,
    )
    t.ok((await c.request('resources/list')).result?.['resources'], `${era}: resources/list answers`)
    const read = await c.request('resources/read', { uri: `agwp://demo/file/${FIRST}/lib/util.ts` })
    const contents = (read.result?.['contents'] as { uri: string; text: string }[]) ?? []
    t.match(contents[0]?.text, /\nexport const x = 1\n/, `${era}: a file at a ref, fenced`)
    const missing = await c.request('resources/read', { uri: 'agwp://demo/proposals/prop-999' })
    t.ok(missing.error, `${era}: an unknown proposal is an error`)
    const prompts = (await c.request('prompts/list')).result?.['prompts'] as { name: string }[]
    t.ok(
      prompts.some((x) => x.name === 'agwp_workflow'),
      `${era}: the workflow prompt is listed`,
    )
    const got = await c.request('prompts/get', { name: 'agwp_workflow', arguments: { repo: 'demo', task: 'task-1' } })
    const text = ((got.result?.['messages'] as { content: { text: string } }[]) ?? [])[0]?.content.text ?? ''
    t.match(
      text,
      /repository demo[\s\S]*Task id: task-1[\s\S]*task_claim[\s\S]*workspace_create[\s\S]*file_write[\s\S]*propose[\s\S]*run_release/,
      `${era}: claim → workspace → write → propose → release`,
    )
    t.equal((await p.close()).code, 0)
    p.assertValid(t)
  }
})
