// agit_log_step with AGIT's texts: batch and single mode, repo_path, location validation.
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { logStep } from '../../../plugins/agit/log-step.ts'
import { AgitRepo } from '../../../plugins/agit/repo.ts'
import { makeRepo } from './_repo.ts'

async function setup() {
  const dir = makeRepo()
  const repo = new AgitRepo(dir)
  await repo.init()
  const lines = () => readFileSync(join(dir, '.agit/index'), 'utf8').split('\n').filter(Boolean)
  return { dir, repo, lines }
}
const now = () => 1767225600

t.test('not initialized', async (t) => {
  const dir = makeRepo()
  const r = await logStep(new AgitRepo(dir), { batch: [] })
  // AGIT's text, naming what works here (ag-mcp's command, or the tool that starts the log).
  t.same(r, {
    text: "AGIT not initialized. Run 'ag-mcp agit init --write' first, or log a first step with agit_log_step, which starts it.",
    isError: true,
    code: 'not_initialized',
  })
})

t.test('batch: all valid, then empty', async (t) => {
  const { repo, lines } = await setup()
  const r = await logStep(
    repo,
    {
      batch: [
        { role: 'user', category: 'intent', content: 'Fix authentication bug in login flow' },
        {
          role: 'AI',
          category: 'Reasoning',
          content: 'Added try/catch around token validation',
          locations: [{ file: 'src/auth.ts', start_line: 42, end_line: 65 }],
        },
      ],
    },
    now,
  )
  t.same(r, { text: 'Logged 2 entries' })
  t.same(lines(), [
    '{"role":"user","category":"intent","content":"Fix authentication bug in login flow","timestamp":1767225600}',
    '{"role":"ai","category":"reasoning","content":"Added try/catch around token validation","timestamp":1767225600,"locations":[{"file":"src/auth.ts","start_line":42,"end_line":65}]}',
  ])
  t.same(await logStep(repo, { batch: [] }), { text: 'No entries to log' })
})

t.test('batch: mixed valid and invalid entries', async (t) => {
  const { dir, repo, lines } = await setup()
  symlinkSync('/etc', join(dir, 'escape'))
  const r = await logStep(
    repo,
    {
      batch: [
        {
          role: 'ai',
          category: 'reasoning',
          content: 'ok',
          locations: [{ file: 'src/auth.ts' }, { file: 'missing.ts' }],
        },
        { role: 'ai', category: 'reasoning', content: 'outside', locations: [{ file: '/etc/passwd' }] },
        { role: 'ai', category: 'reasoning', content: 'via symlink', locations: [{ file: 'escape/passwd' }] },
        { role: 'robot', category: 'reasoning', content: 'bad role' },
        { role: 'ai', category: 'musing', content: 'bad category' },
        { role: 'user', category: 'intent', content: 'no locations is general context' },
      ],
    },
    now,
  )
  t.notOk(r.isError)
  const [head, ...rest] = r.text.split('\n')
  t.equal(head, "Logged 2 entries. 2 errors: Invalid role 'robot'; Invalid category 'musing'")
  const msg = rest.join('\n')
  t.match(msg, /^⛔ 2 entries rejected \(all locations outside repository scope\)\n⚠️ 3 locations skipped:\n/)
  t.match(msg, "missing.ts: File 'missing.ts' does not exist in repository")
  t.match(msg, "/etc/passwd: ⛔ SECURITY VIOLATION: Path '/etc/passwd' is outside repository scope")
  t.match(msg, "escape/passwd: ⛔ SECURITY VIOLATION: Path 'escape/passwd' is outside repository scope")
  t.match(
    msg,
    /\n\nAgit is a single-repo tool\. Use `cd` to switch to the correct repository before logging context for those files\.$/,
  )
  const written = lines().map((l) => JSON.parse(l) as { content: string; locations?: unknown })
  t.same(
    written.map((e) => e.content),
    ['ok', 'no locations is general context'],
  )
  t.same(written[0]?.locations, [{ file: 'src/auth.ts' }], 'invalid locations dropped, valid kept')
})

t.test('batch: all invalid → error, nothing written', async (t) => {
  const { repo, lines } = await setup()
  const r = await logStep(repo, {
    batch: [{ role: 'ai', category: 'reasoning', content: 'x', locations: [{ file: '../../../etc/passwd' }] }],
  })
  t.equal(r.isError, true)
  t.match(r.text, /^⛔ 1 entry rejected \(all locations outside repository scope\)\n⚠️ 1 location skipped:/)
  t.same(lines(), [])
  const bad = await logStep(repo, {
    batch: [
      { role: 'x', category: 'intent', content: 'a' },
      { role: 'ai', category: 'y', content: 'b' },
    ],
  })
  t.same(bad, { text: "All entries failed: Invalid role 'x'; Invalid category 'y'", isError: true })
  t.same(lines(), [])
})

t.test('repo_path: same root spelled differently is accepted; a subdirectory or another repo is not', async (t) => {
  const { dir, repo, lines } = await setup()
  const link = `${dir}-link`
  symlinkSync(dir, link)
  t.teardown(() => rmSync(link))
  const entry = { role: 'user', category: 'intent', content: 'x' }
  t.same(await logStep(repo, { repo_path: `${dir}/.`, batch: [entry] }), { text: 'Logged 1 entry' })
  t.same(await logStep(repo, { repo_path: link, batch: [entry] }), { text: 'Logged 1 entry' })
  const sub = await logStep(repo, { repo_path: join(dir, 'src'), batch: [entry] })
  t.same(sub, {
    text: `Repository mismatch: entries target '${join(dir, 'src')}' but current repo is '${dir}'.\nUse \`cd\` to switch to the target repository, or omit repo_path to log to current repo.`,
    isError: true,
  })
  const gone = await logStep(repo, { repo_path: '/no/such/repo', batch: [entry] })
  t.same(gone, { text: "Target repository '/no/such/repo' does not exist or is not accessible", isError: true })
  t.equal(lines().length, 2, 'a rejected batch writes nothing')
})

t.test('single mode (deprecated) keeps AGIT texts', async (t) => {
  const { repo, lines } = await setup()
  const long = 'x'.repeat(60)
  t.same(await logStep(repo, { role: 'AI', category: 'reasoning', content: long }), {
    text: `Logged: [AI/reasoning] ${'x'.repeat(47)}...`,
  })
  t.same(await logStep(repo, { role: 'ai', category: 'reasoning', content: '日本語'.repeat(20) }), {
    text: `Logged: [ai/reasoning] ${Array.from('日本語'.repeat(20)).slice(0, 47).join('')}...`,
  })
  t.same(await logStep(repo, { role: 'bot', category: 'intent', content: 'c' }), {
    text: "Invalid role 'bot'. Must be 'user' or 'ai'",
    isError: true,
  })
  t.same(await logStep(repo, { role: 'ai', category: 'note', content: 'c' }), {
    text: "Invalid category 'note'. Must be 'intent', 'reasoning', or 'error'",
    isError: true,
  })
  const all = await logStep(repo, { role: 'ai', category: 'error', content: 'c', locations: [{ file: '/etc/passwd' }] })
  t.equal(all.isError, true)
  t.match(all.text, /^⛔ All paths rejected:\n\/etc\/passwd: ⛔ SECURITY VIOLATION/)
  t.match(all.text, /\n\nAgit is a single-repo tool\.$/)
  const legacy = await logStep(repo, { role: 'ai', category: 'error', content: 'c', file_path: 'nope.ts' })
  t.match(legacy.text, /^⛔ Path rejected: File 'nope.ts' does not exist/)
  t.same(
    await logStep(repo, {
      role: 'ai',
      category: 'error',
      content: 'legacy ok',
      file_path: 'README.md',
      line_number: 1,
    }),
    {
      text: 'Logged: [ai/error] legacy ok',
    },
  )
  t.same(await logStep(repo, { role: 'ai' }), {
    text: "Invalid parameters: provide either 'batch' array or 'role', 'category', 'content'",
    isError: true,
  })
  const written = lines()
  t.equal(written.length, 3)
  t.match(written[2], /"file_path":"README.md","line_number":1\}$/)
})

t.test('a 300-character intent is summarized within bounds', async (t) => {
  const { dir, repo } = await setup()
  await logStep(repo, { batch: [{ role: 'user', category: 'intent', content: `${'ü'.repeat(299)}!` }] })
  const linked = await repo.linkPending((await repo.gitHeadCommit()) as string)
  t.equal(linked?.summary, `Intent: ${'ü'.repeat(197)}....`)
  t.ok(dir)
})

t.test('a new file under a new directory resolves; a directory is a valid location', async (t) => {
  const { dir, repo } = await setup()
  mkdirSync(join(dir, 'lib'))
  writeFileSync(join(dir, 'lib/new.ts'), '')
  t.same(
    await logStep(repo, {
      batch: [
        {
          role: 'ai',
          category: 'reasoning',
          content: 'x',
          locations: [{ file: 'lib/../lib/new.ts' }, { file: 'lib' }],
        },
      ],
    }),
    {
      text: 'Logged 1 entry',
    },
  )
})
