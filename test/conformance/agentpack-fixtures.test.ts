// Agentpack's own outputs on our inputs, recorded once from the real peer (Agentpack 1.6.0 built
// from its source; test/fixtures/peers/agentpack/README.md says how), against ag-mcp now:
// - ag-mcp reads the pack Agentpack wrote and prints, for every read-only call, the text
//   Agentpack printed (content[0].text, or the JSON-RPC error's message);
// - ag-mcp exports, from that pack, the very bundle Agentpack was shown and accepted, and reads
//   it as Agentpack read it.
import { execFileSync } from 'node:child_process'
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import t from 'tap'
import { startMcp } from '../helpers/mcp-process.ts'
import type { McpProcess } from '../helpers/mcp-process.ts'

const FIXTURE = new URL('../fixtures/peers/agentpack/', import.meta.url).pathname
const recipe = JSON.parse(readFileSync(join(FIXTURE, 'recipe.json'), 'utf8')) as {
  gitEnv: Record<string, string>
  initial: Record<string, string>
  reads: { key: string; name: string; args?: Record<string, unknown> }[]
  bundleSources: string[]
}
const texts = JSON.parse(readFileSync(join(FIXTURE, 'texts.json'), 'utf8')) as Record<string, string>

/** The repository as Agentpack left it: the same commit (fixed identity and dates), its pack, its changes. */
function workspace(): string {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'apfx-')))
  t.teardown(() => rmSync(base, { recursive: true, force: true }))
  const ws = join(base, 'ws')
  mkdirSync(ws)
  for (const [f, text] of Object.entries(recipe.initial)) {
    mkdirSync(dirname(join(ws, f)), { recursive: true })
    writeFileSync(join(ws, f), text)
  }
  const git = (...a: string[]) => execFileSync('git', a, { cwd: ws, env: { ...process.env, ...recipe.gitEnv } })
  git('init', '-q', '-b', 'main')
  git('add', '.')
  git('commit', '-q', '-m', 'initial')
  for (const name of readdirSync(ws)) if (name !== '.git') rmSync(join(ws, name), { recursive: true })
  const copy = (from: string, to: string) => {
    for (const name of readdirSync(from)) {
      const a = join(from, name)
      if (statSync(a).isDirectory()) {
        mkdirSync(join(to, name), { recursive: true })
        copy(a, join(to, name))
      } else writeFileSync(join(to, name), readFileSync(a, 'utf8').split('<ROOT>').join(ws))
    }
  }
  copy(join(FIXTURE, 'workspace'), ws)
  return ws
}

/** What differs from run to run: the root, the resume's generation time, and (the root's length) its estimate. */
const norm = (s: string, root: string) =>
  s
    .split(root)
    .join('<ROOT>')
    .replace(/^Generated: .*$/m, 'Generated: <TS>')
    .replace(/^Estimated usage: ~\d+ tokens \(\d+% of target\)$/m, 'Estimated usage: <N>')

async function text(p: McpProcess, name: string, args: Record<string, unknown> = {}) {
  const r = await p.request('tools/call', { name, arguments: args }, { era: 'legacy' })
  const first = (r.result?.['content'] as { text: string }[] | undefined)?.[0]?.text
  return r.error ? `ERROR ${r.error.code}: ${r.error.message}` : (first ?? '')
}

t.test("ag-mcp reads Agentpack's pack and prints Agentpack's texts", async (t) => {
  const ws = workspace()
  const p = startMcp(t, { cwd: ws, env: recipe.gitEnv, args: ['--allow', 'continuity,bundles'] })
  for (const c of recipe.reads) {
    const expected = texts[c.key]
    if (expected === undefined) throw new Error(`no recorded text for ${c.key}`)
    t.equal(norm(await text(p, c.name, c.args), ws), norm(expected, '<ROOT>'), c.key)
  }
})

t.test('ag-mcp exports the bundle Agentpack accepted, and reads it as Agentpack does', async (t) => {
  const ws = workspace()
  const p = startMcp(t, { cwd: ws, env: recipe.gitEnv, args: ['--allow', 'continuity,bundles'] })
  const out = await text(p, 'bundle_export', { outputPath: 'ag-mcp.bundle.json', sources: recipe.bundleSources })
  t.match(out, /^Exported bundle sha256:[0-9a-f]{64}\n/)
  const made = JSON.parse(readFileSync(join(ws, 'ag-mcp.bundle.json'), 'utf8')) as Record<string, unknown>
  const shown = JSON.parse(readFileSync(join(FIXTURE, 'ag-mcp.bundle.json'), 'utf8')) as Record<string, unknown>
  // The producer names ag-mcp's version, which moves; all else is the bundle Agentpack accepted.
  const content = (b: Record<string, unknown>) => ({ ...b, exportedAt: 'x', bundleId: 'x', producer: 'x' })
  t.same(content(made), content(shown), 'the bundle Agentpack inspected and planned')
  const version = (b: Record<string, unknown>) => (b['producer'] as { version: string }).version
  if (version(made) === version(shown)) t.equal(made['bundleId'], shown['bundleId'], 'so the same bundle id')
  writeFileSync(join(ws, 'shown.bundle.json'), readFileSync(join(FIXTURE, 'ag-mcp.bundle.json')))
  const ours = await text(p, 'bundle_inspect', { path: 'shown.bundle.json', json: true })
  t.equal(ours, texts['agentpack reads ag-mcp bundle: inspect json'], "ag-mcp's reading of it is Agentpack's")
  t.match(
    texts['agentpack reads ag-mcp bundle: import plan'],
    /^Bundle import plan sha256:[0-9a-f]{64}\nMode: read-only/,
  )
})
