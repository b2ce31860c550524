// What an AGIT client reads from every agit tool (content[0].text) against AGIT's exact text for
// the same repository. AGIT itself (Rust, crates.io) cannot be built here, so the expected texts
// are AGIT's format strings applied to the repository's own data (its neural commit, its trace):
// agit_get_context as AGIT's get_context.rs builds it, agit_read_roadmap's text from
// read_roadmap.rs, the others from AGIT's documented formats (test/fixtures/peers/README.md).
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { AgitRepo } from '../../plugins/agit/repo.ts'
import { startMcp } from '../helpers/mcp-process.ts'
import { GIT_ENV, makeRepo, sh } from '../plugins/agit/_repo.ts'

type Mcp = ReturnType<typeof startMcp>
async function first(p: Mcp, name: string, args: Record<string, unknown> = {}) {
  const r = await p.request('tools/call', { name, arguments: args })
  const content = (r.result?.['content'] as { text: string }[] | undefined) ?? []
  return { text: content[0]?.text, isError: r.result?.['isError'] === true, items: content.length }
}

const hhmmss = (s: number) => new Date(s * 1000).toISOString().slice(11, 19)
const dateTime = (s: number) => `${new Date(s * 1000).toISOString().slice(0, 19).replace('T', ' ')} UTC`

t.test('every agit tool: the text a client reads is AGIT’s text, byte for byte', async (t) => {
  const dir = makeRepo('agit-texts')
  const p = startMcp(t, { cwd: dir, env: GIT_ENV, args: ['--allow', 'agit'] })

  const logged = await first(p, 'agit_log_step', {
    batch: [
      { role: 'user', category: 'intent', content: 'Rotate tokens on use' },
      {
        role: 'ai',
        category: 'reasoning',
        content: 'One-time tokens stop replays',
        locations: [{ file: 'src/auth.ts', start_line: 1, end_line: 1 }],
      },
    ],
  })
  t.equal(logged.text, 'Logged 2 entries', 'log_step, batch')
  t.same(
    await first(p, 'agit_get_recent_summaries'),
    {
      text: "No commits yet.\n\nRecent summaries will appear here after you make commits with AGIT.\nUse 'agit commit' to create commits that capture your reasoning.",
      isError: false,
      items: 2,
    },
    'no commits: recent summaries',
  )
  const single = await first(p, 'agit_log_step', {
    role: 'ai',
    category: 'error',
    content: 'A very long note that goes on well past the fifty byte cut of AGIT',
  })
  t.equal(single.text, 'Logged: [ai/error] A very long note that goes on well past the fif...', 'log_step, single')
  t.equal(
    (await first(p, 'agit_get_context', { git_hash: 'abc1234' })).text,
    "No context found for git hash 'abc1234': Not found in neural commit history",
  )
  t.equal(
    (await first(p, 'agit_read_roadmap')).text,
    "No roadmap set yet.\n\nThe roadmap captures high-level project goals and direction.\n\nTo set a roadmap, create an 'agit commit' with context that includes\nyour project goals, or add a ROADMAP.md file to your project.",
  )
  t.equal(
    (await first(p, 'agit_get_file_history', { filepath: 'src/auth.ts' })).text,
    'No history found for file: src/auth.ts',
  )
  t.equal((await first(p, 'agit_get_relevant_context', { query: 'kubernetes' })).text, 'No relevant context found.')

  // A neural commit linked to HEAD, as `agit commit` / the post-commit hook makes it.
  const head = sh(dir, 'rev-parse', 'HEAD').trim()
  const entries = readFileSync(join(dir, '.agit/index'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { role: string; category: string; content: string; timestamp: number })
  const repo = new AgitRepo(dir)
  await repo.linkPending(head)
  const [neural] = await repo.history(undefined, 1)
  if (!neural) throw new Error('no neural commit')
  const summary = 'Intent: Rotate tokens on use. Plan: One-time tokens stop replays.'
  t.equal(neural.commit.summary, summary, "AGIT's synthesized summary")
  const trace = entries.map((e) => `[${hhmmss(e.timestamp)}] ${e.role}/${e.category}: ${e.content}`).join('\n')
  t.equal(
    (await first(p, 'agit_get_context', { git_hash: head.slice(0, 7) })).text,
    `# Context for git commit ${head}\n\n**Neural Commit:** ${neural.id}\n**Author:** ${neural.commit.author}\n**Date:** ${dateTime(neural.commit.created_at)}\n\n## Summary\n\n${summary}\n\n## Trace\n\n\`\`\`\n${trace}\n\`\`\`\n`,
    'get_context: blank lines after the headings, the trace fenced, a final newline',
  )
  const day = dateTime(neural.commit.created_at).slice(0, 10)
  t.equal(
    (await first(p, 'agit_get_recent_summaries', { count: 3 })).text,
    `# Recent Activity\n\n## [${head.slice(0, 7)}] ${day}\n${summary}`,
  )
  t.equal(
    (await first(p, 'agit_get_file_history', { filepath: 'src/auth.ts' })).text,
    `File history for 'src/auth.ts':\n\n1. [${head.slice(0, 7)}] ${summary}`,
  )
  const hit = (await first(p, 'agit_get_relevant_context', { query: 'replays' })).text ?? ''
  t.match(
    hit,
    /^\[reasoning\] \(score: \d+\.\d\d\) One-time tokens stop replays$/,
    "AGIT's line (its score is BM25 too)",
  )
  writeFileSync(join(dir, 'ROADMAP.md'), 'Ship v1.\n')
  t.equal(
    (await first(p, 'agit_read_roadmap')).text,
    '# Roadmap (ROADMAP.md)\n\nShip v1.\n',
    'a deliberate difference: the ROADMAP.md AGIT’s own text tells users to add is read (docs/agit.md)',
  )
  const status = await first(p, 'agit_get_status')
  t.equal(
    status.text,
    'On branch main\nNo pending thoughts.',
    '`agit status` words (AGIT’s MCP server has no such tool)',
  )
})

t.test('before the first step: AGIT’s not-initialized refusal, naming what works here', async (t) => {
  // A repository without .agit/: every tool but agit_log_step refuses. AGIT's own text says "Run
  // 'agit init' first."; ours names the command of ag-mcp and the tool that starts the log
  // (docs/agit.md: a hint names what works here).
  const dir = makeRepo('agit-texts')
  const p = startMcp(t, { cwd: dir, env: GIT_ENV, args: ['--allow', 'agit'] })
  const refusal = {
    text: "AGIT not initialized. Run 'ag-mcp agit init --write' first, or log a first step with agit_log_step, which starts it.",
    isError: true,
  }
  const reads: [string, Record<string, unknown>][] = [
    ['agit_get_status', {}],
    ['agit_get_recent_summaries', {}],
    ['agit_read_roadmap', {}],
    ['agit_get_file_history', { filepath: 'src/auth.ts' }],
    ['agit_get_relevant_context', { query: 'tokens' }],
    ['agit_get_context', { git_hash: 'abc1234' }],
  ]
  for (const [name, args] of reads) {
    const r = await first(p, name, args)
    t.same({ text: r.text, isError: r.isError }, refusal, name)
  }
  t.notOk(existsSync(join(dir, '.agit')), 'a refusal starts nothing')
  // What the hint says works: the first step starts the log, and the other tools then answer.
  t.equal(
    (await first(p, 'agit_log_step', { role: 'ai', category: 'intent', content: 'start' })).text,
    'Logged: [ai/intent] start',
  )
  t.equal(
    (await first(p, 'agit_get_status')).text,
    'On branch main\nPending thoughts: 1\n\nNewest entries:\n- [ai/intent] start',
  )
  t.equal(sh(dir, 'status', '--porcelain'), '', 'the log it started is out of git status')
})

t.test('refusals are AGIT’s isError texts, first', async (t) => {
  const dir = makeRepo('agit-texts')
  const p = startMcp(t, { cwd: dir, env: GIT_ENV, args: ['--allow', 'agit'] })
  t.same(await first(p, 'agit_log_step', { batch: [] }), { text: 'No entries to log', isError: false, items: 2 })
  const outside = await first(p, 'agit_log_step', {
    batch: [{ role: 'ai', category: 'reasoning', content: 'x', locations: [{ file: '/etc/passwd' }] }],
  })
  t.ok(outside.isError)
  t.equal(
    outside.text,
    // AGIT writes ⚠️ (U+26A0 U+FE0F); the sanitizer removes every variation selector (they can
    // carry hidden text), so a client reads ⚠ alone: a documented deliberate difference.
    `⛔ 1 entry rejected (all locations outside repository scope)\n\u26a0 1 location skipped:\n  - /etc/passwd: ⛔ SECURITY VIOLATION: Path '/etc/passwd' is outside repository scope (${dir}). Agit is a single-repo tool. Switch to the correct directory to log context for external files.\n\nAgit is a single-repo tool. Use \`cd\` to switch to the correct repository before logging context for those files.`,
  )
  const role = await first(p, 'agit_log_step', { role: 'bot', category: 'intent', content: 'x' })
  t.same(
    { text: role.text, isError: role.isError },
    { text: "Invalid role 'bot'. Must be 'user' or 'ai'", isError: true },
  )
  const neither = await first(p, 'agit_log_step', { role: 'ai' })
  t.equal(neither.text, "Invalid parameters: provide either 'batch' array or 'role', 'category', 'content'")
})
