// A local plugin added by dropping a folder (test/fixtures/plugin-tree/plugins/notes, built into
// the test bundle by `npm run build:test`; nothing in core/ or bin/ names it), from outside the
// process: its option joins the one flag table (--help, --print-config, environment, config
// file, checked at start-up), and its write tool is refused before its handler runs for every
// path that leaves its root or the operator's --write-path.
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { REPO_ROOT, startMcp, TEST_BUNDLE } from '../helpers/mcp-process.ts'
import type { McpProcess } from '../helpers/mcp-process.ts'

function run(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [TEST_BUNDLE, ...args], {
    cwd: REPO_ROOT,
    input: '',
    encoding: 'utf8',
    env: { PATH: process.env['PATH'] ?? '', ...env },
    timeout: 10_000,
  })
  return { code: r.status, stdout: r.stdout, stderr: r.stderr }
}

async function call(p: McpProcess, name: string, args: unknown) {
  const r = await p.request('tools/call', { name, arguments: args })
  const text = ((r.result?.['content'] as { text: string }[] | undefined) ?? []).map((c) => c.text).join('\n')
  return { isError: r.result?.['isError'] === true, text, structured: r.result?.['structuredContent'] }
}

const HANDLER_RAN = /note_write handler ran/

t.test('the plugin option is in --help, under its plugin, with its variable', async (t) => {
  const help = run(['--help'])
  t.equal(help.code, 0)
  t.match(help.stdout, /Options of the notes plugin:/)
  t.match(
    help.stdout,
    /--notes-greeting TEXT\s+What note_read says with every note\. \[env\s+AG_MCP_NOTES_GREETING,\s+default\s+hello\]/,
  )
  t.match(help.stdout, /--notes-root/)
  t.match(help.stdout, /notes\s+opt-in\s+note_read, note_write/, 'its group, from its manifest')
  t.notOk(readFileSync(join(REPO_ROOT, 'dist', 'ag-mcp.mjs'), 'utf8').includes('notes-greeting'), 'not in the product')
})

t.test('the option comes from a flag, the environment or the config file, in that order', async (t) => {
  const dir = t.testdir({ 'c.json': JSON.stringify({ 'notes-greeting': 'from-file' }) })
  const config = join(dir, 'c.json')
  const greeting = (args: string[], env: Record<string, string> = {}) => {
    const r = run([...args, '--print-config'], env)
    t.equal(r.code, 0, r.stderr)
    return (JSON.parse(r.stdout) as { plugins: { notes: { greeting: string } } }).plugins.notes.greeting
  }
  t.equal(greeting([]), 'hello', 'the default')
  t.equal(greeting(['--config', config]), 'from-file')
  t.equal(greeting(['--config', config], { AG_MCP_NOTES_GREETING: 'from-env' }), 'from-env')
  t.equal(greeting(['--config', config, '--notes-greeting', 'from-flag'], { AG_MCP_NOTES_GREETING: 'x' }), 'from-flag')
})

t.test('a bad option value stops start-up with a message naming the option', async (t) => {
  const long = run(['--notes-greeting', 'x'.repeat(41)])
  t.equal(long.code, 2)
  t.match(long.stderr, /--notes-greeting must NOT have more than 40 characters/)
  const env = run([], { AG_MCP_NOTES_GREETING: '' })
  t.equal(env.code, 2)
  t.match(env.stderr, /--notes-greeting must NOT have fewer than 1 characters/)
  const root = run(['--notes-root', join(REPO_ROOT, 'no-such-dir')])
  t.equal(root.code, 2)
  t.match(root.stderr, /--notes-root .*no-such-dir: not a directory/)
  for (const r of [long, env, root]) t.equal(r.stdout, '')
})

t.test('writes: refused before the handler runs unless under the root and --write-path', async (t) => {
  const top = realpathSync(t.testdir({ repo: { notes: {} }, 'repo-evil': { notes: {} }, elsewhere: { 'f.md': 'x' } }))
  const root = join(top, 'repo')
  symlinkSync(join(top, 'elsewhere'), join(root, 'notes', 'out'))
  symlinkSync(join(top, 'elsewhere', 'f.md'), join(root, 'notes', 'link.md'))
  symlinkSync(join(top, 'elsewhere', 'missing.md'), join(root, 'notes', 'dangling.md'))
  const p = startMcp(t, {
    command: [process.execPath, TEST_BUNDLE],
    args: ['--allow', 'notes', '--notes-root', root, '--write-path', 'notes/**', '--notes-greeting', 'hey'],
  })
  const refusals: [string, RegExp][] = [
    ['../repo-evil/notes/x.md', /refused by path safety: path is outside the root directory/],
    // A sibling whose name starts with the root's: a plain prefix test would let it through.
    [join(top, 'repo-evil', 'notes', 'x.md'), /refused by path safety: path is outside the root directory/],
    ['notes/out/x.md', /refused by path safety: path leads out of the root directory through a symlink/],
    ['notes/link.md', /refused by path safety: path leads out of the root directory through a symlink/],
    ['notes/dangling.md', /refused by path safety: path goes through a symlink whose target does not exist/],
    ['notes/../.git/config', /refused by path safety: path names the \.git directory/],
    ['other/x.md', /refused by --write-path: "other\/x\.md" matches no --write-path glob/],
  ]
  for (const [path, re] of refusals) {
    const r = await call(p, 'note_write', { path, content: 'pwned' })
    t.equal(r.isError, true, path)
    t.match(r.text, re, path)
  }
  t.notMatch(p.stderr, HANDLER_RAN, 'the handler ran for none of them')
  t.notOk(existsSync(join(top, 'repo-evil', 'notes', 'x.md')))
  t.notOk(existsSync(join(top, 'elsewhere', 'x.md')))
  t.notOk(existsSync(join(top, 'elsewhere', 'missing.md')))
  t.equal(readFileSync(join(top, 'elsewhere', 'f.md'), 'utf8'), 'x', 'the file behind the symlink is untouched')
  t.notOk(existsSync(join(root, 'other')))

  const ok = await call(p, 'note_write', { path: 'notes/sub/../a.md', content: 'kept' })
  t.equal(ok.isError, false, ok.text)
  t.same(ok.structured, { path: 'notes/a.md', bytes: 4 }, 'the handler got the path as checked')
  t.equal(readFileSync(join(root, 'notes', 'a.md'), 'utf8'), 'kept')
  const read = await call(p, 'note_read', { path: 'notes/a.md' })
  t.match(read.structured, { content: 'kept', greeting: 'hey' }, 'the option reached the plugin')
  t.equal((await p.close()).code, 0)
  t.match(p.stderr, HANDLER_RAN, 'the allowed write did run the handler')
})

t.test('the root defaults to the git top level of the working directory', async (t) => {
  // Outside the repository (whose own .git would be found from inside it).
  const top = realpathSync(mkdtempSync(join(tmpdir(), 'ag-mcp-root-')))
  t.teardown(() => rmSync(top, { recursive: true, force: true }))
  mkdirSync(join(top, 'repo', 'sub'), { recursive: true })
  mkdirSync(join(top, 'plain'))
  const git = spawnSync('git', ['init', '-q', join(top, 'repo')], { encoding: 'utf8' })
  t.equal(git.status, 0, git.stderr)
  const p = startMcp(t, {
    command: [process.execPath, TEST_BUNDLE],
    args: ['--allow', 'notes'],
    cwd: join(top, 'repo', 'sub'),
  })
  const r = await call(p, 'note_write', { path: 'n.md', content: 'at the top' })
  t.equal(r.isError, false, r.text)
  t.equal(readFileSync(join(top, 'repo', 'n.md'), 'utf8'), 'at the top')
  t.equal((await p.close()).code, 0)

  const q = startMcp(t, {
    command: [process.execPath, TEST_BUNDLE],
    args: ['--allow', 'notes'],
    cwd: join(top, 'plain'),
  })
  const refused = await call(q, 'note_write', { path: 'n.md', content: 'nowhere' })
  t.match(
    refused.text,
    /not sent: no root directory: the working directory is not inside a git repository; start ag-mcp with --notes-root DIR/,
  )
  t.notOk(existsSync(join(top, 'plain', 'n.md')))
  t.notMatch(q.stderr, HANDLER_RAN)
  await q.close()
})
