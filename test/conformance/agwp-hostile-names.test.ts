// Hostile names end to end (issues 10 and 27), through the real bundled ag-mcp and a real
// ag-server on a hostile repository:
// - a file whose name holds a bidi, zero-width or control character, or a backslash, is listed
//   under an escaped name (`\u{202e}`) that is visible, and every listed name reads back: as
//   structuredContent gives it, and as the fenced JSON line shows it (`\\u{202e}`, what a model
//   copies from the text), instead of a cleaned name that does not exist;
// - other values (a commit's author) are cleaned, not escaped: no `\u{1b}[32m` residue;
// - and no byte that comes back holds the hidden or control characters themselves.
import fs from 'node:fs'
import t, { type Test } from 'tap'
import { agwpFixture, client, fencedJson, mcp } from './agwp-fixture.ts'
import type { McpProcess } from '../helpers/mcp-process.ts'
import type { Json } from '../helpers/json.ts'

/** Committed names, each with the escaped name ag-mcp lists. */
const COMMITTED: Record<string, string> = {
  'names/evil\u202egnp.txt': 'names/evil\\u{202e}gnp.txt',
  'names/zero\u200bwidth.txt': 'names/zero\\u{200b}width.txt',
  'names/esc\x1b[31mred.txt': 'names/esc\\u{1b}[31mred.txt',
  'names/back\\slash.txt': 'names/back\\u{5c}slash.txt',
  'names/tab\there.txt': 'names/tab\\u{9}here.txt',
  'names/line\nbreak.txt': 'names/line\\u{a}break.txt',
}
const AUTHOR = 'Mal\x1b[32mlory \u202eevil\u202c\x07'
const AUTHOR_SHOWN = 'Mallory evil'

const fx = await agwpFixture({
  prepare: (src, git) => {
    fs.mkdirSync(`${src}/names`)
    for (const real of Object.keys(COMMITTED)) fs.writeFileSync(`${src}/${real}`, `inside ${real}\n`)
    git(src, 'add', 'names')
    git(src, 'commit', '-q', `--author=${AUTHOR} <mallory@test.invalid>`, '-m', 'hostile \x1b[31mnames')
  },
})
t.teardown(() => fx.close())

const ws = await fx.api('alice', 'POST', '/repos/demo/workspaces', { base: 'main' })
const WORKSPACE = String(ws.body['id'])
const WRITTEN: Record<string, string> = {
  'written/evil\u202egnp.txt': 'written/evil\\u{202e}gnp.txt',
  'written/zero\u200bwidth.txt': 'written/zero\\u{200b}width.txt',
}
for (const real of Object.keys(WRITTEN)) {
  const w = await fx.api('alice', 'PUT', `/workspaces/${WORKSPACE}/files`, { path: real, content: `inside ${real}\n` })
  if (w.status >= 300) throw new Error(`write ${JSON.stringify(real)}: ${JSON.stringify(w.body)}`)
}

/** Hidden or control characters, raw or as JSON `\u` escapes, in a stdout line. */
const RAW_HIDDEN =
  /[\p{Default_Ignorable_Code_Point}\p{Cf}\u0000-\u0008\u000b-\u001f\u007f-\u009f]|\\u00[01][0-9a-f]|\\u007f|\\u20[0-6][0-9a-f]/iu
const PATH_KEYS = new Set(['path', 'old_path', 'paths', 'from', 'to'])

/** Every string of a value outside a path-like key (a directory entry's name counts as one). */
function nonPathStrings(v: Json | undefined, key?: string, inEntry = false): string[] {
  if (typeof v === 'string') return PATH_KEYS.has(key ?? '') || (key === 'name' && inEntry) ? [] : [v]
  if (Array.isArray(v)) return v.flatMap((x) => nonPathStrings(x, key, inEntry))
  if (v && typeof v === 'object') {
    const entry = typeof v['path'] === 'string'
    return Object.entries(v).flatMap(([k, x]) => [k, ...nonPathStrings(x, k, entry)])
  }
  return []
}

function everyByteClean(t: Test, p: McpProcess): void {
  const dirty = p.lines.filter((l) => RAW_HIDDEN.test(l))
  t.same(
    dirty.map((l) => l.slice(0, 200)),
    [],
    'no stdout line holds a hidden or control character, raw or JSON-escaped',
  )
}

/** The name as the fenced JSON line shows it: what a model reading the text copies. */
const asInText = (shown: string): string => JSON.stringify(shown).slice(1, -1)

t.test('every listed name reads back, as structuredContent and as the text show it', async (t) => {
  const p = mcp(t, fx.upstream, fx.tokenFile('alice'))
  const c = await client(p, '2026-07-28')
  for (const [dirPath, names, workspace] of [
    ['names', COMMITTED, undefined],
    ['written', WRITTEN, WORKSPACE],
  ] as const) {
    const at = workspace ? { workspace } : {}
    const dir = await c.call('file_read', { repo: 'demo', path: dirPath, ...at })
    t.notOk(dir.isError, dir.text.slice(0, 300))
    const entries = (dir.structured?.['entries'] ?? []) as { name: string; path: string }[]
    t.same(entries.map((e) => e.path).sort(), Object.values(names).sort(), `${dirPath}: each listed, escaped`)
    t.same(
      (fencedJson(dir.text)['entries'] as { path: string }[]).map((e) => e.path).sort(),
      Object.values(names).sort(),
      'the text lists the same names',
    )
    for (const e of entries) t.equal(`${dirPath}/${e.name}`, e.path, `the entry's name is its path's last segment`)
    for (const shown of Object.values(names)) {
      for (const form of [shown, asInText(shown)]) {
        const r = await c.call('file_read', { repo: 'demo', path: form, ...at })
        t.notOk(r.isError, `${JSON.stringify(form)} reads back${r.isError ? `: ${r.text.slice(0, 300)}` : ''}`)
        t.equal(r.structured?.['path'], shown, 'under the name it was listed as')
        t.match(r.structured?.['content'], /^inside (names|written)\//, 'with its content')
      }
    }
  }
  const hist = await c.call('log', { repo: 'demo', path: asInText(COMMITTED['names/esc\x1b[31mred.txt'] as string) })
  t.notOk(hist.isError, hist.text.slice(0, 300))
  t.equal((hist.structured?.['commits'] as Json[] | undefined)?.length, 1, 'log of an escaped path finds its commit')
  t.match(
    dir0(await c.call('file_read', { repo: 'demo', path: 'names' })),
    /\d+ control or hidden character sequence\(s\) removed or escaped/,
    'the summary counts what was escaped',
  )
  everyByteClean(t, p)
  t.equal((await p.close()).code, 0)
  p.assertValid(t)
})

const dir0 = (r: { text: string }): string => r.text.split('\n')[0] ?? ''

t.test('a commit author is cleaned, not escaped; every other value too', async (t) => {
  const p = mcp(t, fx.upstream, fx.tokenFile('alice'))
  const c = await client(p, '2026-07-28')
  const log = await c.call('log', { repo: 'demo', limit: 1 })
  t.notOk(log.isError, log.text.slice(0, 300))
  const show = await c.call('commit_show', { repo: 'demo', commit: 'main' })
  t.notOk(show.isError, show.text.slice(0, 300))
  for (const [what, r] of [
    ['log', log],
    ['commit_show', show],
  ] as const) {
    const structured = r.structured as Json
    const pattern = { author: { name: AUTHOR_SHOWN, email: 'mallory@test.invalid' } }
    const want = what === 'log' ? { commits: [pattern] } : pattern
    t.match(structured, want, `${what}: the author's name without its escapes`)
    t.match(fencedJson(r.text), want, 'in the text too')
    const residue = [...nonPathStrings(structured), ...nonPathStrings(fencedJson(r.text))].filter((s) =>
      s.includes('\\u{'),
    )
    t.same(residue, [], `${what}: no \\u{…} residue outside path-like values`)
  }
  everyByteClean(t, p)
  t.equal((await p.close()).code, 0)
  p.assertValid(t)
})
