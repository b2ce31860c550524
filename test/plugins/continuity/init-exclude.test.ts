// `ag-mcp continuity init` changes no tracked file (issue 26, friction 4): what Agentpack's init
// appends to the tracked .gitignore (the seven entries its doctor checks) goes to
// .git/info/exclude, git honours every one of them, and the command says what it wrote.
import { execFileSync, spawnSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { BINARY } from '../../helpers/mcp-process.ts'
import { GIT_ENV, git, repo } from './_pack.ts'

const init = (cwd: string) =>
  spawnSync(process.execPath, [BINARY, 'continuity', 'init'], { cwd, env: GIT_ENV, encoding: 'utf8' })

t.test('continuity init: .git/info/exclude, not the tracked .gitignore, and it says so', async (t) => {
  const root = await repo(t, { init: false })
  writeFileSync(join(root, '.gitignore'), 'node_modules/\n')
  git(root, 'add', '.gitignore')
  git(root, 'commit', '-qm', 'ignore node_modules')
  const r = init(root)
  t.equal(r.status, 0, r.stderr)
  t.match(r.stdout, `Initialized ${join(root, '.agentpack')}`)
  t.match(
    r.stdout,
    'Added to .git/info/exclude (no tracked file changed): .agentpack/, .codex, .claude, .cursor, .mcp.json, AGENTS.md, CLAUDE.md',
  )
  t.equal(readFileSync(join(root, '.gitignore'), 'utf8'), 'node_modules/\n', 'the tracked .gitignore is untouched')
  t.equal(git(root, 'status', '--porcelain'), '', 'nothing to commit: the pack and its ignores are out of sight')
  // Agentpack's own files are ignored as its .gitignore lines would ignore them.
  const probe = ['.agentpack/state.json', '.codex/config.toml', '.claude/settings.json', '.cursor/mcp.json']
  const ignored = execFileSync('git', ['check-ignore', '--', ...probe, '.mcp.json', 'AGENTS.md', 'CLAUDE.md'], {
    cwd: root,
    env: GIT_ENV,
    encoding: 'utf8',
  })
  t.same(ignored.trim().split('\n'), [...probe, '.mcp.json', 'AGENTS.md', 'CLAUDE.md'])
  const again = init(root)
  t.equal(again.status, 0, again.stderr)
  t.match(again.stdout, '.git/info/exclude already lists what Agentpack keeps out of git')
  t.equal(
    readFileSync(join(root, '.git', 'info', 'exclude'), 'utf8')
      .split('\n')
      .filter((l) => l === '.agentpack/').length,
    1,
    'listed once',
  )
})

t.test('outside git there is nothing to exclude, and it says that', async (t) => {
  const root = await repo(t, { init: false, git: false })
  const r = init(root)
  t.equal(r.status, 0, r.stderr)
  t.match(r.stdout, 'Not in a git repository: nothing to keep out of git.')
})
