// The reading tools with AGIT's texts, and search over pending and committed thoughts.
import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import {
  NO_COMMITS,
  NO_ROADMAP,
  getContext,
  getRecentSummaries,
  getRelevantContext,
  getStatus,
  readRoadmap,
} from '../../../plugins/agit/queries.ts'
import { AgitRepo } from '../../../plugins/agit/repo.ts'
import { ThoughtSearch } from '../../../plugins/agit/search.ts'
import { makeRepo, sh } from './_repo.ts'

async function setup() {
  const dir = makeRepo()
  const repo = new AgitRepo(dir)
  await repo.init()
  return { dir, repo }
}

t.test('status: branch, counts, newest entries', async (t) => {
  const { repo } = await setup()
  t.equal((await getStatus(repo)).text, 'On branch main\nNo pending thoughts.')
  await repo.append([
    { role: 'user', category: 'intent', content: 'first', timestamp: 1 },
    { role: 'ai', category: 'reasoning', content: 'second', timestamp: 2 },
  ])
  t.equal(
    (await getStatus(repo)).text,
    'On branch main\nPending thoughts: 2\n\nNewest entries:\n- [ai/reasoning] second\n- [user/intent] first',
  )
  t.same(await getStatus(new AgitRepo(makeRepo())), {
    text: "AGIT not initialized. Run 'ag-mcp agit init --write' first, or log a first step with agit_log_step, which starts it.",
    isError: true,
    code: 'not_initialized',
  })
})

t.test('summaries and context: empty, then one', async (t) => {
  const { dir, repo } = await setup()
  t.same(await getRecentSummaries(repo), { text: NO_COMMITS })
  t.same(await getContext(repo, 'abc'), {
    text: "No context found for git hash 'abc': Not found in neural commit history",
    isError: true,
    code: 'not_found',
  })
  await repo.append([{ role: 'user', category: 'intent', content: 'ship it', timestamp: 1 }])
  const head = sh(dir, 'rev-parse', 'HEAD').trim()
  await repo.linkPending(head)
  t.match(
    (await getRecentSummaries(repo)).text,
    new RegExp(`^# Recent Activity\\n\\n## \\[${head.slice(0, 7)}\\] \\d{4}-\\d\\d-\\d\\d\\nIntent: ship it\\.$`),
  )
  t.same(await getRecentSummaries(repo, 0), { text: NO_COMMITS })
  t.ok(
    (await getContext(repo, head)).text.endsWith(
      '\n\n## Summary\n\nIntent: ship it.\n\n## Trace\n\n```\n[00:00:01] user/intent: ship it\n```\n',
    ),
    "AGIT's layout: blank lines after the headings, a final newline",
  )
})

t.test('roadmap: .agit/roadmap.md, else ROADMAP.md, never a file outside the repository', async (t) => {
  const { dir, repo } = await setup()
  t.same(await readRoadmap(repo), { text: NO_ROADMAP })
  symlinkSync('/etc/passwd', join(dir, 'ROADMAP.md'))
  t.same(await readRoadmap(repo), { text: NO_ROADMAP }, 'a symlink out of the repository is not followed')
  sh(dir, 'rm', '-q', '--cached', '--ignore-unmatch', 'ROADMAP.md')
  writeFileSync(join(dir, '.agit/roadmap.md'), 'Goal: v1\n')
  t.equal((await readRoadmap(repo)).text, '# Roadmap (.agit/roadmap.md)\n\nGoal: v1\n')
})

t.test('search: BM25 over pending and committed thoughts, persisted, loaded lazily', async (t) => {
  const { dir, repo } = await setup()
  await repo.append([
    { role: 'ai', category: 'reasoning', content: 'authentication tokens rotate on every use', timestamp: 1 },
    { role: 'user', category: 'intent', content: 'speed up the build', timestamp: 2 },
  ])
  await repo.linkPending(sh(dir, 'rev-parse', 'HEAD').trim())
  await repo.append([
    { role: 'ai', category: 'error', content: 'authentication failed for the token cache', timestamp: 3 },
  ])
  const search = new ThoughtSearch(repo)
  t.notOk(search.loaded, 'nothing is built before the first search')
  t.notOk(existsSync(join(dir, '.agit/ag-mcp/search.json')))
  const r = await getRelevantContext(search, repo, 'authentication token', 5)
  const lines = r.text.split('\n\n')
  t.equal(lines.length, 2)
  t.match(lines[0], /^\[(reasoning|error)\] \(score: \d+\.\d\d\) authentication/)
  t.ok(existsSync(join(dir, '.agit/ag-mcp/search.json')), 'persisted after indexing committed thoughts')
  t.same(await getRelevantContext(search, repo, 'kubernetes', 5), { text: 'No relevant context found.' })
  // A fresh process loads the persisted index and picks up new pending thoughts incrementally.
  await repo.append([{ role: 'user', category: 'intent', content: 'kubernetes deployment', timestamp: 4 }])
  const again = new ThoughtSearch(repo)
  t.match(
    (await getRelevantContext(again, repo, 'kubernetes', 1)).text,
    /^\[intent\] \(score: [\d.]+\) kubernetes deployment$/,
  )
  // Linked thoughts stop being pending without being counted twice.
  sh(dir, 'commit', '-q', '--allow-empty', '-m', 'x')
  await repo.linkPending(sh(dir, 'rev-parse', 'HEAD').trim())
  const hits = await again.search('kubernetes', 10)
  t.equal(hits.length, 1)
  t.equal(hits[0]?.pending, false)
  t.equal((await getRelevantContext(again, repo, 'build', 100)).text.split('\n\n').length, 1, 'limit clamps to 50')
})

t.test('searches at once index each thought once', async (t) => {
  const { repo } = await setup()
  await repo.append([{ role: 'ai', category: 'note', content: 'parallel words', timestamp: 1 }])
  const search = new ThoughtSearch(repo)
  const all = await Promise.all([1, 2, 3, 4].map(() => search.search('parallel', 5)))
  t.same(
    all.map((h) => h.length),
    [1, 1, 1, 1],
  )
})

t.test('a corrupt search cache is rebuilt, not fatal', async (t) => {
  const { dir, repo } = await setup()
  mkdirSync(join(dir, '.agit/ag-mcp'), { recursive: true })
  writeFileSync(join(dir, '.agit/ag-mcp/search.json'), '{not json')
  await repo.append([{ role: 'ai', category: 'note', content: 'hello world', timestamp: 1 }])
  t.match((await getRelevantContext(new ThoughtSearch(repo), repo, 'hello', 5)).text, 'hello world')
})
