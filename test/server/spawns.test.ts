import t from 'tap'
import { fixture } from './helpers.ts'
import { gitSpawns } from '../../server/src/git.ts'

// Throughput guard: a workspace write and a proposal start no git process; objects are
// written and the proposal ref compare-and-swapped in-process (refs.ts).

const fx = await fixture()
t.teardown(fx.close)
const { api } = fx
const total = (): Record<string, number> => Object.fromEntries(gitSpawns)
const delta = (before: Record<string, number>): Record<string, number> => {
  const out: Record<string, number> = {}
  for (const [k, v] of gitSpawns) if (v !== (before[k] ?? 0)) out[k] = v - (before[k] ?? 0)
  return out
}

t.test('git processes per request', async (t) => {
  const ws = (await api('alice', 'POST', '/repos/demo/workspaces', {})).body.id
  await api('alice', 'GET', `/workspaces/${ws}/file?path=README.md`) // warm the cat-file process
  let before = total()
  for (let i = 0; i < 5; i++)
    t.equal(
      (await api('alice', 'PUT', `/workspaces/${ws}/files`, { path: `lib/deep/n${i}.ts`, content: `${i}\n` })).status,
      200,
    )
  t.equal((await api('alice', 'PUT', `/workspaces/${ws}/files`, { path: 'README.md', content: 'x\n' })).status, 200)
  t.same(delta(before), {}, 'workspace writes: no git process')
  before = total()
  const p = await api('alice', 'POST', `/workspaces/${ws}/proposals`, { title: 'spawns' })
  t.equal(p.status, 201)
  t.equal(p.body.mergeability, 'fast_forward')
  t.same(delta(before), {}, 'propose (with its evaluation): no git process')
})

t.test('reads start no git process', async (t) => {
  const ws = (await api('alice', 'POST', '/repos/demo/workspaces', {})).body.id
  await api('alice', 'GET', '/repos/demo/file?path=README.md') // warm the cat-file process
  const before = total()
  for (const p of [
    '/repos/demo/file?path=README.md',
    '/repos/demo/file?path=lib/deep/leaf.txt',
    '/repos/demo/file?path=logo.bin',
    '/repos/demo/tree',
    '/repos/demo/tree?path=lib',
    '/repos/demo/log?limit=2',
    '/repos/demo/file?ref=main&path=lib/util.ts',
    `/workspaces/${ws}/file?path=README.md`,
    `/workspaces/${ws}/file?path=lib`,
  ])
    t.equal((await api('alice', 'GET', p)).status, 200, p)
  t.equal((await api('alice', 'GET', '/repos/demo/file?path=nope.txt')).status, 404)
  t.same(delta(before), {}, 'file, tree and log reads: no git process')
})

t.test('search, diff, log with a path, commit detail: no git process per request', async (t) => {
  const ws = (await api('alice', 'POST', '/repos/demo/workspaces', {})).body.id
  t.equal(
    (await api('alice', 'PUT', `/workspaces/${ws}/files`, { path: 'lib/util.ts', content: 'changed\n' })).status,
    200,
  )
  const log = (await api('alice', 'GET', '/repos/demo/log?limit=5')).body.commits
  const [head, first] = [log[0].id, log[log.length - 1].id]
  const prop = (await api('alice', 'POST', `/workspaces/${ws}/proposals`, { title: 'diffs' })).body.id
  const reads = [
    '/repos/demo/search?q=export',
    '/repos/demo/search?q=leaf&path=lib',
    `/repos/demo/diff?base=${first}&head=main`,
    `/repos/demo/diff?base=${first}&head=${head}&path=lib`,
    '/repos/demo/log?path=lib/util.ts&limit=2',
    '/repos/demo/log?path=README.md',
    `/repos/demo/commits/${head}`,
    `/repos/demo/commits/${first}`,
    '/repos/demo',
    `/workspaces/${ws}/diff`,
    `/proposals/${prop}/diff`,
  ]
  // The long-lived processes (cat-file, one diff-tree per option set and pathspec) start
  // on first use; after that, reading again starts nothing.
  for (const p of reads) t.equal((await api('alice', 'GET', p)).status, 200, p)
  const before = total()
  for (let round = 0; round < 3; round++) for (const p of reads) t.equal((await api('alice', 'GET', p)).status, 200, p)
  t.same(delta(before), {}, 'reads again: no git process')
  const d = (await api('alice', 'GET', `/repos/demo/diff?base=${first}&head=main`)).body
  t.ok(d.files.length > 0 && d.files.every((f: { patch: string }) => f.patch.startsWith('diff --git ')), 'real diffs')
  const s = (await api('alice', 'GET', '/repos/demo/search?q=export')).body
  t.ok(s.matches.length > 0, 'real search results')
})

t.test('a merge of changes to different files starts no git process; a conflict asks git', async (t) => {
  const propose = async (file: string, content: string): Promise<string> => {
    const ws = (await api('mona', 'POST', '/repos/demo/workspaces', {})).body.id
    t.equal((await api('mona', 'PUT', `/workspaces/${ws}/files`, { path: file, content })).status, 200)
    const id = (await api('mona', 'POST', `/workspaces/${ws}/proposals`, { title: file })).body.id
    t.equal((await api('rita', 'POST', `/proposals/${id}/reviews`, { verdict: 'approve' })).status, 201)
    return id
  }
  const integrate = (id: string) => api('mona', 'POST', `/proposals/${id}/integrate`, { strategy: 'merge' })
  const [one, two, three, four] = [
    await propose('lib/one.txt', '1\n'),
    await propose('lib/two.txt', '2\n'),
    await propose('README.md', 'three\n'),
    await propose('README.md', 'four\n'),
  ]
  t.equal((await integrate(one as string)).status, 200)
  let before = total()
  t.equal((await api('mona', 'GET', `/proposals/${two}`)).body.mergeability, 'clean')
  t.equal((await integrate(two as string)).status, 200)
  t.same(delta(before), {}, 'evaluated and integrated in process')
  const main = (await api('mona', 'GET', '/repos/demo/tree?path=lib')).body.entries.map((e: { name: string }) => e.name)
  t.ok(main.includes('one.txt') && main.includes('two.txt'), 'main holds both changes')
  t.equal((await integrate(three as string)).status, 200)
  before = total()
  const ev = (await api('mona', 'GET', `/proposals/${four}`)).body
  t.equal(ev.mergeability, 'conflicts')
  t.same(ev.conflicts, ['README.md'])
  t.same(delta(before), { 'merge-tree': 1 }, 'a path both sides changed: git merges it')
})
