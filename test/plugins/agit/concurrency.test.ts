// Several processes append at once (ag-mcp sessions, the CLI, hooks): no torn, lost or
// duplicated line; and one more process turning pending thoughts into neural commits meanwhile
// neither loses a thought nor links one twice.
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { parseIndex } from '../../../plugins/agit/entry.ts'
import { ObjectReader, decodeBlob, listRefs, walk } from '../../../plugins/agit/objects.ts'
import { AgitRepo } from '../../../plugins/agit/repo.ts'
import { parseTrace } from '../../../plugins/agit/text.ts'
import { makeRepo } from './_repo.ts'

const worker = fileURLToPath(new URL('./_worker.ts', import.meta.url))
// The TypeScript loader the tests run with (package.json "tap"), and nothing of tap's reporting.
const loader = ['--import=tsx']

function run(...args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const c = spawn(process.execPath, [...loader, worker, ...args], { stdio: ['ignore', 'ignore', 'inherit'] })
    c.on('error', reject)
    c.on('exit', (code) => resolve(code ?? -1))
  })
}

const WRITERS = 4
const EACH = 500
const expected = new Set<string>()
for (let w = 0; w < WRITERS; w++) for (let i = 0; i < EACH; i++) expected.add(`w${w}-${i} ${'é'.repeat(i % 7)}`)

t.test(`${WRITERS} processes × ${EACH} appends → exactly ${WRITERS * EACH} well-formed lines`, async (t) => {
  const dir = makeRepo()
  const repo = new AgitRepo(dir)
  await repo.init()
  const codes = await Promise.all(
    Array.from({ length: WRITERS }, (_, w) => run('append', dir, String(w), String(EACH))),
  )
  t.same(codes, Array(WRITERS).fill(0))
  const text = readFileSync(join(dir, '.agit/index'), 'utf8')
  t.ok(text.endsWith('\n'))
  const lines = text.split('\n').slice(0, -1)
  t.equal(lines.length, WRITERS * EACH)
  const p = parseIndex(text)
  t.same(p.malformed, [], 'no torn line')
  t.same(new Set(p.entries.map((e) => e.content)), expected, 'every thought once')
})

t.test('the same while one more process links neural commits: nothing lost, nothing linked twice', async (t) => {
  const dir = makeRepo()
  const repo = new AgitRepo(dir)
  await repo.init()
  const codes = await Promise.all([
    ...Array.from({ length: WRITERS }, (_, w) => run('append', dir, String(w), String(EACH))),
    run('link', dir, '6'),
  ])
  t.same(codes, Array(WRITERS + 1).fill(0))
  const seen: string[] = (await repo.readIndex()).entries.map((e) => e.content)
  const reader = new ObjectReader(dir)
  const commits = await walk(reader, (await listRefs(dir)).get('main'))
  t.ok(commits.length >= 1, 'at least one neural commit was made')
  for (const c of commits) {
    const trace = decodeBlob((await reader.read(c.commit.trace_hash)) ?? '').content
    for (const e of parseTrace(trace)) seen.push(e.content)
  }
  reader.close()
  t.equal(seen.length, WRITERS * EACH, 'no thought lost or duplicated')
  t.same(new Set(seen), expected)
  const linked = commits.map((c) => c.commit.git_hash)
  t.equal(new Set(linked).size, linked.length, 'no git commit linked twice')
})
