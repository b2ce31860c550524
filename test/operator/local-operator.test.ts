// The operator's commands speak local mode, and say what ag-mcp really serves (issue 26, frictions 7
// and 8): `tools` is compared with a real tools/list of ag-mcp with the same flags, plain and local;
// `doctor --local` checks what a local session needs; the config file takes "local" (true or a
// path) and `config init --local` writes a file for it whose $schema is a file beside it; groups
// add to the default set with `+GROUP` or `default`, from a flag, the environment or the file.
import t from 'tap'
import type { Test } from 'tap'
import { execFileSync, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Ajv } from 'ajv'
import { parse as parseJsonc } from 'jsonc-parser'
import { GIT_IDENTITY } from '../helpers/git-identity.ts'
import { BINARY, startMcp } from '../helpers/mcp-process.ts'

// Outside this repository: a folder no git repository contains (the sessions run from there).
const outside = mkdtempSync(join(tmpdir(), 'ag-mcp-local-operator-'))
t.teardown(() => rmSync(outside, { recursive: true, force: true }))
const env = { PATH: process.env['PATH'] ?? '', HOME: outside, ...GIT_IDENTITY }

function makeRepo(name: string, commit = true): string {
  const repo = join(outside, name)
  mkdirSync(repo)
  const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, env })
  git('init', '-q', '-b', 'main')
  writeFileSync(join(repo, 'readme.md'), '# a project\n')
  if (commit) {
    git('add', '.')
    git('commit', '-qm', 'initial')
  }
  return repo
}

const agMcp = (cwd: string, args: string[], extra: Record<string, string> = {}) =>
  spawnSync(process.execPath, [BINARY, ...args], { cwd, env: { ...env, ...extra }, encoding: 'utf8', timeout: 60_000 })

/** What `ag-mcp tools ARGS --json` says is exposed, by name. */
function toolsSays(cwd: string, args: string[]): string[] {
  const r = agMcp(cwd, ['tools', ...args, '--json'])
  if (r.status !== 0) throw new Error(`ag-mcp tools ${args.join(' ')}: ${r.stderr}`)
  const j = JSON.parse(r.stdout) as { groups: { enabled: boolean; tools: string[] }[] }
  return j.groups.flatMap((g) => (g.enabled ? g.tools : [])).sort()
}

/** What `ag-mcp ARGS` really lists, by name (tools/list of a real process, then `then`, then closed). */
async function served(
  t: Test,
  cwd: string,
  args: string[],
  then?: (p: ReturnType<typeof startMcp>) => Promise<void>,
): Promise<string[]> {
  const p = startMcp(t, { args, env, exactEnv: true, cwd })
  const r = await p.request('tools/list', {})
  await then?.(p)
  t.equal((await p.close()).code, 0, p.stderr)
  return ((r.result?.['tools'] ?? []) as { name: string }[]).map((x) => x.name).sort()
}

const repo = makeRepo('project')

t.test('tools says exactly what ag-mcp with the same flags serves, plain and local', async (t) => {
  // Plain, in the repository, no upstream: core and agit only (main said 31 tools here).
  const plain = await served(t, repo, [])
  t.same(toolsSays(repo, []), plain)
  t.ok(plain.includes('agit_log_step') && !plain.includes('file_read'), 'no AGWP tool without an upstream')
  // Local mode from outside the repository, asked for in a config file, continuity added.
  const config = join(outside, 'local.json')
  writeFileSync(config, JSON.stringify({ local: repo, allow: '+continuity' }))
  const local = await served(t, outside, ['--config', config], async (p) => {
    const logged = await p.request('tools/call', {
      name: 'agit_log_step',
      arguments: { batch: [{ role: 'user', category: 'intent', content: 'try local mode' }] },
    })
    t.notOk(logged.result?.['isError'], JSON.stringify(logged.result))
  })
  t.same(toolsSays(outside, ['--config', config]), local)
  for (const name of ['file_read', 'propose', 'agit_log_step', 'load_context', 'passport_list'])
    t.ok(local.includes(name), `local mode serves ${name}`)
  t.same(toolsSays(outside, ['--local', repo, '--allow', 'default,continuity']), local, '--local REPO is the same')
  // The session ran outside the repository: its thought log is the repository's all the same.
  t.ok(existsSync(join(repo, '.agit')), 'agit logged into the repository the session serves')
  t.notOk(existsSync(join(outside, '.agit')), 'nothing was written where the host started ag-mcp')
})

t.test('doctor --local checks what a local session needs', async (t) => {
  const ok = agMcp(repo, ['doctor', '--local'])
  t.equal(ok.status, 0, ok.stdout + ok.stderr)
  t.match(
    ok.stdout,
    new RegExp(`^ok\\s+config\\s+local mode on ${repo}; groups core, agit, coordinate, propose, read, workspace$`, 'm'),
  )
  t.match(ok.stdout, /^ok\s+token\s+local mode mints one per session \(agent:local, /m)
  t.match(ok.stdout, /^ok\s+upstream\s+local mode starts a private ag-server/m)
  t.match(ok.stdout, /^ok\s+repository\s+/m)
  t.notMatch(ok.stdout, /^FAIL/m)
  const review = agMcp(repo, ['doctor', '--local', '--allow', '+review'])
  t.equal(review.status, 1)
  t.match(
    review.stdout,
    /^FAIL\s+scopes\s+enabled group\(s\) review need scope\(s\) local mode's agent never gets.*\n\s+fix: leave review out of --allow$/m,
  )
  const empty = makeRepo('empty', false)
  const none = agMcp(outside, ['doctor', '--local', empty])
  t.equal(none.status, 1)
  t.match(none.stdout, /^FAIL\s+repository\s+.*empty has no commit yet.*\n\s+fix: make a first commit/m)
  const clash = agMcp(repo, ['doctor', '--local', '--upstream', 'http://127.0.0.1:9'])
  t.equal(clash.status, 1)
  t.match(clash.stdout, /^FAIL\s+config\s+--local starts its own ag-server and token; drop --upstream$/m)
  const fromShell = agMcp(repo, ['doctor', '--local'], { AG_MCP_UPSTREAM: 'http://127.0.0.1:9' })
  t.match(fromShell.stdout, /^FAIL\s+config\s+--local starts its own ag-server and token; drop AG_MCP_UPSTREAM$/m)
})

t.test('config init --local: a local file, its $schema beside it, accepted as is', async (t) => {
  const dir = join(repo, 'conf')
  mkdirSync(dir)
  const r = agMcp(dir, ['config', 'init', '--local'])
  t.equal(r.status, 0, r.stderr)
  const file = join(dir, 'ag-mcp.config.jsonc')
  const data = parseJsonc(readFileSync(file, 'utf8')) as Record<string, unknown>
  t.equal(data['$schema'], './ag-mcp.schema.json', 'a relative reference, not a path into a clone')
  t.match(data, { local: true, allow: ['default'] })
  t.notOk('repo' in data || 'upstream' in data, 'no demo repository, no upstream')
  const schema = readFileSync(join(dir, 'ag-mcp.schema.json'), 'utf8')
  t.equal(schema, agMcp(dir, ['config', 'schema']).stdout, 'the schema beside it is the one ag-mcp prints')
  const validate = new Ajv({ strict: false }).compile(JSON.parse(schema))
  t.ok(validate(data), JSON.stringify(validate.errors))
  const doctor = agMcp(dir, ['doctor', '--config', file])
  t.equal(doctor.status, 0, doctor.stdout)
  t.match(doctor.stdout, new RegExp(`^ok\\s+config\\s+local mode on ${dir}; groups`, 'm'))
  const shared = agMcp(dir, ['config', 'init', '--out', 'shared.jsonc'])
  t.equal(shared.status, 0, shared.stderr)
  const s = parseJsonc(readFileSync(join(dir, 'shared.jsonc'), 'utf8')) as Record<string, unknown>
  t.notOk('repo' in s, 'the shared template names no repository of ours')
  t.match(s, { upstream: /^https:\/\//, allow: ['default'] })
})

t.test('+GROUP and default add to the default set: flag, environment and config file', async (t) => {
  const groups = (args: string[], extra: Record<string, string> = {}) => {
    const r = agMcp(repo, [...args, '--upstream', 'http://127.0.0.1:9', '--print-config'], extra)
    if (r.status !== 0) throw new Error(r.stderr)
    return (JSON.parse(r.stdout) as { enabledGroups: string[] }).enabledGroups.sort()
  }
  const expected = ['agit', 'continuity', 'coordinate', 'core', 'propose', 'read', 'workspace']
  t.same(groups(['--allow', '+continuity']), expected)
  t.same(groups(['--allow', 'default,continuity']), expected)
  t.same(groups([], { AG_MCP_ALLOW: '+continuity' }), expected)
  const config = join(outside, 'groups.json')
  writeFileSync(config, JSON.stringify({ allow: ['default', 'continuity'] }))
  t.same(groups(['--config', config]), expected)
  // Naming groups without either word still means exactly those groups.
  t.same(groups(['--allow', 'continuity,bundles']), ['bundles', 'continuity', 'core'])
  const bad = agMcp(repo, ['--allow', '+bogus'])
  t.equal(bad.status, 2)
  t.match(bad.stderr, /unknown group "bogus".*\(and default for the default set, or \+GROUP to add one to it\)/)
})
