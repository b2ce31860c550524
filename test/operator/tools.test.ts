// `ag-mcp tools`: what this configuration exposes, by group, and what it hides with the flag that
// would show it; the same flags as ag-mcp, so a misspelt one is refused the same way.
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { BINARY } from '../helpers/mcp-process.ts'

const tools = (...args: string[]) =>
  spawnSync(process.execPath, [BINARY, 'tools', ...args], {
    encoding: 'utf8',
    env: { PATH: process.env['PATH'] ?? '' },
  })

t.test('exposed and hidden tools, by group, with the reason', async (t) => {
  const r = tools('--allow', 'read,review')
  t.equal(r.status, 0, r.stderr)
  t.match(r.stdout, /^exposed: \d+ tools in 3 groups$/m)
  t.match(r.stdout, /^ {2}review\s+review_submit$/m)
  // Without an upstream, an AGWP group not named says what it lacks; with one, the --allow that adds it.
  t.match(r.stdout, /^ {2}workspace\s+workspace_create.*\n\s+no upstream: the workspace group needs an AGWP server/m)
  const up = tools('--allow', 'read,review', '--upstream', 'http://127.0.0.1:9')
  t.match(up.stdout, /^ {2}workspace\s+workspace_create.*\n\s+left out of --allow \(--allow read,review,workspace\)$/m)
  t.match(
    tools('--upstream', 'http://127.0.0.1:9').stdout,
    /^ {2}review\s+review_submit\n\s+opt-in: name it in --allow \(--allow \+review\)$/m,
  )
  t.match(r.stdout, /^ {2}integrate\s+proposal_integrate\n\s+only with --enable-integrate$/m)
  const j = JSON.parse(tools('--enable-integrate', '--json').stdout) as {
    groups: { group: string; enabled: boolean; tools: string[]; why?: string }[]
  }
  t.match(
    j.groups.find((g) => g.group === 'integrate'),
    { enabled: true, tools: ['proposal_integrate'] },
  )
  t.match(
    j.groups.find((g) => g.group === 'review'),
    { enabled: false, why: /^opt-in: name it in --allow/ },
  )
})

t.test("the names a process exposes: Agentpack's task_list and diff without the read group", async (t) => {
  const alone = tools('--allow', 'continuity')
  t.equal(alone.status, 0, alone.stderr)
  t.match(alone.stdout, /^ {2}continuity\s+.*\btask_list\b.*\bdiff\b/m)
  t.notMatch(alone.stdout, /passport_list|checkpoint_diff/)
  const both = tools('--allow', 'continuity,read')
  t.match(both.stdout, /^ {2}continuity\s+.*\bpassport_list\b.*\bcheckpoint_diff\b/m)
  t.match(both.stdout, /^ {2}read\s+.*\btask_list\b/m)
})

t.test('bad flags are refused as ag-mcp refuses them', async (t) => {
  const r = tools('--allow', 'read,admin')
  t.equal(r.status, 2)
  t.match(r.stderr, /ag-mcp tools: --allow admin is refused/)
})
