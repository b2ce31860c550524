// agit and continuity beside the AGWP groups in local mode (issue 26, frictions 5 and 6), through
// the real binary: a location may name the file the agent just wrote into its server-side
// workspace (it is not in the work tree until a person integrates it), a location that names
// nothing says what works here, not AGIT's "use cd", and a bundle export never lands in the work
// tree.
import t from 'tap'
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { GIT_IDENTITY } from '../helpers/git-identity.ts'
import { BINARY, startMcp } from '../helpers/mcp-process.ts'
import type { McpProcess } from '../helpers/mcp-process.ts'

const home = mkdtempSync(join(tmpdir(), 'ag-mcp-local-groups-'))
t.teardown(() => rmSync(home, { recursive: true, force: true }))
const env = { PATH: process.env['PATH'] ?? '', HOME: home, ...GIT_IDENTITY }

const repo = join(home, 'shop')
mkdirSync(repo)
const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, env, encoding: 'utf8' }).trim()
git('init', '-q', '-b', 'main')
writeFileSync(join(repo, 'readme.md'), '# shop\n')
git('add', '.')
git('commit', '-qm', 'initial')

async function call(p: McpProcess, name: string, args: Record<string, unknown>) {
  const r = await p.request('tools/call', { name, arguments: args })
  const text = ((r.result?.['content'] as { text: string }[] | undefined) ?? []).map((c) => c.text).join('\n')
  return {
    isError: r.result?.['isError'] === true,
    text,
    data: r.result?.['structuredContent'] as Record<string, unknown>,
  }
}

t.test("a location may name a file of the agent's open workspace", async (t) => {
  const p = startMcp(t, { args: ['--local', repo], env, exactEnv: true, cwd: repo })
  const ws = await call(p, 'workspace_create', { repo: 'shop' })
  t.notOk(ws.isError, ws.text)
  const workspace = ws.data['id'] as string
  const wrote = await call(p, 'file_write', { repo: 'shop', workspace, path: 'src/cart.js', content: 'export {}\n' })
  t.notOk(wrote.isError, wrote.text)
  const logged = await call(p, 'agit_log_step', {
    batch: [
      { role: 'user', category: 'intent', content: 'Add a cart' },
      { role: 'ai', category: 'reasoning', content: 'A module of its own', locations: [{ file: 'src/cart.js' }] },
    ],
  })
  t.notOk(logged.isError, logged.text)
  t.match(logged.text, 'Logged 2 entries')
  t.notMatch(logged.text, /skipped|rejected|cd/)
  t.match(readFileSync(join(repo, '.agit', 'index'), 'utf8'), /"file":"src\/cart\.js"/, 'the location is kept')
  // A file that exists nowhere: refused, with what works here.
  const none = await call(p, 'agit_log_step', {
    batch: [{ role: 'ai', category: 'reasoning', content: 'Nothing', locations: [{ file: 'src/nowhere.js' }] }],
  })
  t.ok(none.isError)
  t.match(none.text, '1 entry rejected (no location names an existing file)')
  t.match(none.text, 'a file of this repository, or one a workspace of this session holds (write it there first)')
  t.notMatch(none.text, /Use `cd`/)
  // A path out of the repository is still AGIT's security refusal, never asked of a workspace.
  const out = await call(p, 'agit_log_step', {
    batch: [{ role: 'ai', category: 'reasoning', content: 'Out', locations: [{ file: '../other/x.js' }] }],
  })
  t.ok(out.isError)
  t.equal(git('status', '--porcelain'), '', 'the work tree is untouched')
  t.equal((await p.close()).code, 0, p.stderr)
})

t.test('in local mode a bundle export stays in the pack, never the work tree', async (t) => {
  const init = spawnSync(process.execPath, [BINARY, 'continuity', 'init'], { cwd: repo, env, encoding: 'utf8' })
  t.equal(init.status, 0, init.stderr)
  const p = startMcp(t, { args: ['--local', repo, '--allow', '+continuity,+bundles'], env, exactEnv: true, cwd: repo })
  t.notOk((await call(p, 'task_start', { title: 'Hand this over' })).isError)
  const out = await call(p, 'bundle_export', { outputPath: 'src/new-file.js' })
  t.notOk(out.isError, out.text)
  t.equal(out.data['outputPath'], '.agentpack/exports/src/new-file.js')
  t.notOk(existsSync(join(repo, 'src', 'new-file.js')), 'no file in the work tree (main wrote src/new-file.js)')
  t.ok(existsSync(join(repo, '.agentpack', 'exports', 'src', 'new-file.js')))
  t.equal(git('status', '--porcelain'), '', 'nothing to commit, nothing tracked changed')
  t.equal((await p.close()).code, 0, p.stderr)
})
