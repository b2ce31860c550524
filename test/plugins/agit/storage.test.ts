// AGIT's V2 layout, both directions: a .agit/ written as AGIT writes it reads correctly here,
// and what we write is byte-for-byte what AGIT's readers expect.
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { parseIndex, serializeEntry } from '../../../plugins/agit/entry.ts'
import { decodeNeuralCommit } from '../../../plugins/agit/objects.ts'
import { getContext, getFileHistory, getRecentSummaries, getStatus } from '../../../plugins/agit/queries.ts'
import { AgitRepo } from '../../../plugins/agit/repo.ts'
import { formatTrace, synthesizeSummary, truncateChars } from '../../../plugins/agit/text.ts'
import { agitInitLayout, agitNeuralCommit, gitIn, makeRepo, sh } from './_repo.ts'

t.test('a repository filled by AGIT reads correctly', async (t) => {
  const dir = makeRepo()
  agitInitLayout(dir)
  const head = sh(dir, 'rev-parse', 'HEAD').trim()
  const at = 1767225600 // 2026-01-01 00:00:00 UTC
  const n1 = agitNeuralCommit(dir, {
    gitHash: head,
    summary: 'Intent: Fix login. Plan: Guard the token.',
    trace: '[00:00:00] user/intent: Fix login\n[00:00:05] ai/reasoning: Guard the token',
    at,
  })
  writeFileSync(
    join(dir, '.agit/index'),
    '{"role":"user","category":"intent","content":"Next: refresh tokens","timestamp":1767225700}\n' +
      '{"role":"ai","category":"reasoning","content":"Rotate on use","timestamp":1767225701,"locations":[{"file":"src/auth.ts","start_line":1}]}\n' +
      '{"role":"user","category":"note","content":"legacy","timestamp":1767225702,"file_path":"README.md","line_number":1}\n',
  )
  const repo = new AgitRepo(dir)
  t.equal(await repo.storageVersion(), 2)
  t.equal(await repo.head(), 'main')
  const idx = await repo.readIndex()
  t.equal(idx.entries.length, 3)
  t.same(idx.entries[1]?.locations, [{ file: 'src/auth.ts', start_line: 1 }])
  t.equal(idx.entries[2]?.file_path, 'README.md')

  const status = await getStatus(repo)
  t.match(status.text, /^On branch main\nPending thoughts: 3/)
  const recent = await getRecentSummaries(repo)
  t.equal(
    recent.text,
    `# Recent Activity\n\n## [${head.slice(0, 7)}] 2026-01-01\nIntent: Fix login. Plan: Guard the token.`,
  )
  const ctx = await getContext(repo, head.slice(0, 7))
  t.notOk(ctx.isError)
  t.match(ctx.text, `# Context for git commit ${head}`)
  t.match(ctx.text, `**Neural Commit:** ${n1}`)
  t.match(ctx.text, '**Date:** 2026-01-01 00:00:00 UTC')
  t.match(ctx.text, '[00:00:05] ai/reasoning: Guard the token')
  const hist = await getFileHistory(repo, 'src/auth.ts')
  t.equal(
    hist.text,
    `File history for 'src/auth.ts':\n\n1. [${head.slice(0, 7)}] Intent: Fix login. Plan: Guard the token.`,
  )
})

t.test('what we write reads by AGIT rules', async (t) => {
  const dir = makeRepo()
  const repo = new AgitRepo(dir)
  await repo.init()
  t.equal(readFileSync(join(dir, '.agit/HEAD'), 'utf8'), 'main')
  t.equal(readFileSync(join(dir, '.agit/index'), 'utf8'), '')
  t.same(JSON.parse(readFileSync(join(dir, '.agit/config.json'), 'utf8')), { storage_version: 2 })
  t.ok(existsSync(join(dir, '.agit/tmp')))

  await repo.append([
    { role: 'user', category: 'intent', content: 'Fix the auth bug', timestamp: 1767225600 },
    {
      role: 'ai',
      category: 'reasoning',
      content: 'Added try/catch',
      timestamp: 1767225601,
      locations: [{ file: 'src/auth.ts', start_line: 42, end_line: 65 }],
    },
  ])
  // serde's field order, compact, one object per line, locations omitted when empty.
  t.equal(
    readFileSync(join(dir, '.agit/index'), 'utf8'),
    '{"role":"user","category":"intent","content":"Fix the auth bug","timestamp":1767225600}\n' +
      '{"role":"ai","category":"reasoning","content":"Added try/catch","timestamp":1767225601,"locations":[{"file":"src/auth.ts","start_line":42,"end_line":65}]}\n',
  )
  const head = sh(dir, 'rev-parse', 'HEAD').trim()
  const first = await repo.linkPending(head)
  t.ok(first)
  t.equal(first?.summary, 'Intent: Fix the auth bug. Plan: Added try/catch.')
  t.equal(readFileSync(join(dir, '.agit/index'), 'utf8'), '', 'the index is cleared')
  // The ref and the envelope, read with plain git as AGIT's git2 would.
  const tip = sh(dir, 'rev-parse', 'refs/agit/heads/main').trim()
  t.equal(tip, first?.neural)
  const raw = gitIn(dir, '', 'cat-file', 'blob', tip)
  t.match(
    raw,
    /^\{"object_type":"neural_commit","schema_version":1,"created_at":\d+,"data":\{"git_hash":"[0-9a-f]{40}","author":"agit@test\.invalid","roadmap_hash":"[0-9a-f]{40}","trace_hash":"[0-9a-f]{40}","summary":"Intent: Fix the auth bug\. Plan: Added try\/catch\.","created_at":\d+\}\}$/,
  )
  const nc = decodeNeuralCommit(raw)
  const trace = JSON.parse(gitIn(dir, '', 'cat-file', 'blob', nc.trace_hash)) as Record<string, unknown>
  t.same(Object.keys(trace), ['object_type', 'schema_version', 'created_at', 'data'])
  t.same(trace.data, {
    content_type: 'trace',
    content: '[00:00:00] user/intent: Fix the auth bug\n[00:00:01] ai/reasoning: Added try/catch',
  })
  const roadmap = JSON.parse(gitIn(dir, '', 'cat-file', 'blob', nc.roadmap_hash)) as { data: unknown }
  t.same(roadmap.data, { content_type: 'roadmap', content: "No roadmap set. Use 'agit roadmap' to set project goals." })

  // A second link chains to the first through parent_hash (AGIT's single-parent form).
  writeFileSync(join(dir, 'src/auth.ts'), 'export const auth = 2\n')
  sh(dir, 'commit', '-q', '-am', 'second')
  await repo.append([{ role: 'user', category: 'note', content: 'second', timestamp: 1767225700 }])
  const second = await repo.linkPending(sh(dir, 'rev-parse', 'HEAD').trim())
  const nc2 = decodeNeuralCommit(gitIn(dir, '', 'cat-file', 'blob', second?.neural ?? ''))
  t.equal(nc2.parent_hash, tip)
  t.equal(nc2.summary, 'Manual update.')
  t.equal(await repo.linkPending(head), undefined, 'nothing pending: no neural commit')
  t.equal(sh(dir, 'branch', '-a').includes('agit'), false, 'refs/agit/* is hidden from git branch -a')
})

t.test('a malformed index line is reported with its number and the others survive', async (t) => {
  const text =
    '{"role":"user","category":"intent","content":"one","timestamp":1}\n' +
    '{"role":"user","category":"intent","content":"tw\n' +
    '\n' +
    '{"role":"robot","category":"intent","content":"x","timestamp":2}\n' +
    '{"role":"ai","category":"reasoning","content":"four","timestamp":3}\n'
  const p = parseIndex(text)
  t.same(
    p.entries.map((e) => e.content),
    ['one', 'four'],
  )
  t.same(
    p.malformed.map((m) => m.line),
    [2, 4],
  )
  const dir = makeRepo()
  const repo = new AgitRepo(dir)
  await repo.init()
  writeFileSync(join(dir, '.agit/index'), text)
  const status = await getStatus(repo)
  t.match(status.text, 'Pending thoughts: 2')
  t.match(status.text, '.agit/index line 2 is malformed')
  t.match(status.text, '.agit/index line 4 is malformed')
  await repo.append([{ role: 'user', category: 'note', content: 'five', timestamp: 4 }])
  t.equal((await repo.readIndex()).entries.length, 3, 'an append keeps the bad lines and the good ones')
  await repo.linkPending(sh(dir, 'rev-parse', 'HEAD').trim())
  const after = readFileSync(join(dir, '.agit/index'), 'utf8')
  t.equal(after.split('\n').filter(Boolean).length, 2, 'linking consumes the good lines, keeps the bad ones to repair')
})

t.test('summary and truncation: by characters, AGIT bounds', async (t) => {
  const long = 'é'.repeat(300)
  const s = synthesizeSummary([{ role: 'user', category: 'intent', content: long, timestamp: 0 }])
  t.equal(s, `Intent: ${'é'.repeat(197)}....`)
  t.equal(Array.from(truncateChars('😀'.repeat(60), 50)).length, 50)
  t.equal(truncateChars('😀'.repeat(60), 50), `${'😀'.repeat(47)}...`, 'never half a surrogate pair or UTF-8 sequence')
  t.equal(truncateChars('short', 50), 'short')
  t.equal(formatTrace([{ role: 'ai', category: 'error', content: 'x', timestamp: 3661 }]), '[01:01:01] ai/error: x')
  t.equal(
    serializeEntry({ role: 'ai', category: 'note', content: 'c', timestamp: 1, locations: [] }),
    '{"role":"ai","category":"note","content":"c","timestamp":1}',
  )
})
