// Real git with the hooks installed by the bundled `ag-mcp agit init`: commits link thoughts,
// branch switches stash and restore them, reset --hard snaps the pointer back, AGIT's own hook
// block and ours share the hook file, and uninstall removes only ours.
import { execFileSync } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { basename, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { getFileHistory } from '../../../plugins/agit/queries.ts'
import { AgitRepo } from '../../../plugins/agit/repo.ts'
import { GIT_ENV, makeRepo, sh } from './_repo.ts'

const bin = fileURLToPath(new URL('../../../dist/ag-mcp.mjs', import.meta.url))
const agit = (dir: string, ...args: string[]) =>
  execFileSync(process.execPath, [bin, 'agit', ...args], {
    cwd: dir,
    env: { ...process.env, ...GIT_ENV },
    encoding: 'utf8',
  })
const agitJson = <T>(dir: string, ...args: string[]) => JSON.parse(agit(dir, ...args, '--json')) as T
type Logged = Array<{ neural: string; git_hash: string; summary: string }>

const AGIT_BLOCK =
  '# AGIT-HOOK-START\nif command -v agit >/dev/null 2>&1; then\n  agit sync --hook post-commit --quiet 2>/dev/null || true\nfi\n# AGIT-HOOK-END\n'

t.test('hooks, commits, branches, rewinds', async (t) => {
  const dir = makeRepo()
  const hook = join(dir, '.git/hooks/post-commit')
  writeFileSync(hook, `#!/bin/sh\necho user hook\n${AGIT_BLOCK}`, { mode: 0o755 })

  const init = agit(dir, 'init', '--write')
  t.match(init, `Initialized .agit/ in ${dir}`)
  t.match(init, 'hook post-commit: appended')
  t.match(init, 'hook post-checkout: created')
  t.match(init, '.mcp.json: created')
  const both = readFileSync(hook, 'utf8')
  t.match(
    both,
    /^#!\/bin\/sh\necho user hook\n# AGIT-HOOK-START[\s\S]*# AGIT-HOOK-END\n# >>> ag-mcp agit hook >>>\n.*agit' 'sync' '--hook' 'post-commit'[\s\S]*# <<< ag-mcp agit hook <<<\n$/,
  )
  t.match(agit(dir, 'init'), 'hook post-commit: would refresh', 'a dry run says so')
  t.match(
    agit(dir, 'init', '--write'),
    'hook post-commit: replaced',
    'a second init refreshes our block, not a second copy',
  )
  t.equal(readFileSync(hook, 'utf8').split('# >>> ag-mcp agit hook >>>').length, 2)
  t.match(
    sh(dir, 'status', '--porcelain'),
    /^\?\? CLAUDE\.md\n$/,
    '.agit/ and the host files are excluded from git status',
  )

  // A commit links the pending thoughts.
  t.match(agit(dir, 'record', '--intent', 'Fix login'), 'Recorded user intent to staging area')
  agit(dir, 'record', '--ai', 'Guard the token', '-f', 'src/auth.ts', '-l', '1')
  writeFileSync(join(dir, 'src/auth.ts'), 'export const auth = 2\n')
  sh(dir, 'commit', '-q', '-am', 'fix login')
  const c1 = sh(dir, 'rev-parse', 'HEAD').trim()
  let log = agitJson<Logged>(dir, 'log')
  t.equal(log.length, 1)
  t.equal(log[0]?.git_hash, c1)
  t.equal(log[0]?.summary, 'Intent: Fix login. Plan: Guard the token.')
  t.match(agit(dir, 'status'), 'No pending thoughts.')
  // AGIT's hook running too (or ours twice) links nothing twice.
  agit(dir, 'sync', '--hook', 'post-commit')
  t.equal(agitJson<Logged>(dir, 'log').length, 1)

  // Branch switch stashes and restores pending thoughts per branch.
  agit(dir, 'record', 'pending on main')
  sh(dir, 'checkout', '-q', '-b', 'feature')
  t.match(agit(dir, 'status'), /On branch feature\nNo pending thoughts\./)
  t.equal(sh(dir, 'rev-parse', 'refs/agit/heads/feature').trim(), log[0]?.neural, 'a new branch forks the pointer')
  agit(dir, 'record', 'feature thought')
  sh(dir, 'checkout', '-q', 'main')
  let st = agitJson<{ branch: string; entries: Array<{ content: string }> }>(dir, 'status')
  t.equal(st.branch, 'main')
  t.same(
    st.entries.map((e) => e.content),
    ['pending on main'],
  )
  sh(dir, 'checkout', '-q', 'feature')
  st = agitJson(dir, 'status')
  t.same(
    st.entries.map((e) => e.content),
    ['feature thought'],
  )
  sh(dir, 'checkout', '-q', 'main')

  // A second commit on main, then reset --hard: the pointer snaps back, the orphan stays.
  writeFileSync(join(dir, 'src/auth.ts'), 'export const auth = 3\n')
  sh(dir, 'commit', '-q', '-am', 'second')
  const c2 = sh(dir, 'rev-parse', 'HEAD').trim()
  log = agitJson<Logged>(dir, 'log')
  t.same(
    log.map((l) => l.git_hash),
    [c2, c1],
  )
  const repo = new AgitRepo(dir)
  const hist = await getFileHistory(repo, 'src/auth.ts', 5)
  t.equal(
    hist.text,
    `File history for 'src/auth.ts':\n\n1. [${c2.slice(0, 7)}] Manual update.\n2. [${c1.slice(0, 7)}] Intent: Fix login. Plan: Guard the token.`,
  )
  const orphan = log[0]?.neural as string
  sh(dir, 'reset', '-q', '--hard', 'HEAD~1')
  log = agitJson<Logged>(dir, 'log')
  t.same(
    log.map((l) => l.git_hash),
    [c1],
    'snapped back to the newest neural commit still in history',
  )
  t.equal(sh(dir, 'cat-file', '-t', orphan).trim(), 'blob', 'the orphan is kept')

  // Amend: post-rewrite + post-commit move the pointer onto the amended commit.
  agit(dir, 'record', '--intent', 'amend it')
  sh(dir, 'commit', '-q', '--amend', '-m', 'fix login (amended)')
  const amended = sh(dir, 'rev-parse', 'HEAD').trim()
  log = agitJson<Logged>(dir, 'log')
  t.equal(log[0]?.git_hash, amended)
  t.notOk(
    log.some((l) => l.git_hash === c1),
    'the replaced commit is no longer on the branch',
  )

  // Uninstall removes only our blocks.
  t.match(agit(dir, 'hooks', 'uninstall'), 'post-commit: removed')
  t.equal(readFileSync(hook, 'utf8'), `#!/bin/sh\necho user hook\n${AGIT_BLOCK}`)
  t.notOk(existsSync(join(dir, '.git/hooks/post-checkout')), 'a hook that only held ours is deleted')
})

t.test('hostile file names and messages are data', async (t) => {
  const dir = makeRepo()
  agit(dir, 'init', '--write', '--no-hooks')
  const weird = ':(top)$(touch pwned)`id`;\n.ts'
  writeFileSync(join(dir, weird), 'x')
  sh(dir, '--literal-pathspecs', 'add', '--', weird)
  sh(dir, 'commit', '-q', '-m', 'weird')
  const repo = new AgitRepo(dir)
  await repo.append([{ role: 'ai', category: 'reasoning', content: "$(rm -rf /) '; --", timestamp: 1 }])
  await repo.linkPending(sh(dir, 'rev-parse', 'HEAD').trim())
  const h = await getFileHistory(repo, weird)
  t.match(
    h.text,
    /^File history for ':\(top\)\$\(touch pwned\)`id`;\n\.ts':\n\n1\. \[[0-9a-f]{7}\] Plan: \$\(rm -rf \/\) '; --\.$/,
  )
  t.notOk(existsSync(join(dir, 'pwned')))
  const none = await getFileHistory(repo, ':(top)README.md')
  t.equal(none.text, 'No history found for file: :(top)README.md', 'pathspec magic is not interpreted')
})

t.test('init --write creates host configs and rules only where none exist', async (t) => {
  const dir = makeRepo()
  writeFileSync(join(dir, '.mcp.json'), '{"mine": true}\n')
  const out = agit(dir, 'init', '--write', '--no-hooks')
  t.match(out, '.mcp.json: exists, left alone (ag-mcp install claude-code --local --write adds')
  t.match(out, 'CLAUDE.md: created')
  t.match(out, '.cursor/mcp.json: created')
  t.equal(readFileSync(join(dir, '.mcp.json'), 'utf8'), '{"mine": true}\n', "the user's file is untouched")
  const cursor = JSON.parse(readFileSync(join(dir, '.cursor/mcp.json'), 'utf8')) as {
    mcpServers: Record<string, { command: string; args: string[] }>
  }
  // The entry `ag-mcp install cursor --local` writes: local mode on this repository, named after it.
  const name = Object.keys(cursor.mcpServers)
  t.same(name, [`agentgit-${basename(dir).replace(/[^A-Za-z0-9_-]+/g, '-')}`])
  t.same(cursor.mcpServers[name[0] as string]?.args, [bin, '--local', dir])
  t.match(readFileSync(join(dir, 'CLAUDE.md'), 'utf8'), 'agit_get_file_history')
  t.notOk(existsSync(join(dir, '.git/hooks/post-commit')), '--no-hooks installs none')
  t.match(agit(dir, 'init'), '.agit/ already exists')
  t.match(
    sh(dir, 'status', '--porcelain'),
    /^\?\? \.mcp\.json\n\?\? CLAUDE\.md\n$/,
    "the host files it created are excluded from git (the .mcp.json it left alone is the user's)",
  )
})

t.test("init --write adds AGIT's rules to a CLAUDE.md the user has, once, keeping the user's text", async (t) => {
  const dir = makeRepo()
  const mine = '# My project\n\nUse tabs.' // no final newline: the rules still start after a blank line
  writeFileSync(join(dir, 'CLAUDE.md'), mine)
  t.match(agit(dir, 'init', '--no-hooks'), 'CLAUDE.md: would add rules', 'a dry run without --write')
  t.equal(readFileSync(join(dir, 'CLAUDE.md'), 'utf8'), mine, 'the dry run writes nothing')
  t.match(agit(dir, 'init', '--write', '--no-hooks'), 'CLAUDE.md: rules added')
  const once = readFileSync(join(dir, 'CLAUDE.md'), 'utf8')
  t.ok(
    once.startsWith(`${mine}\n\n# SYSTEM POLICY: AGIT MEMORY\n`),
    "the user's text first, unchanged, then a blank line",
  )
  t.match(once, 'agit_get_file_history')
  t.match(agit(dir, 'init', '--write', '--no-hooks'), 'CLAUDE.md: rules already there')
  t.equal(readFileSync(join(dir, 'CLAUDE.md'), 'utf8'), once, 'a second run adds nothing')
})
