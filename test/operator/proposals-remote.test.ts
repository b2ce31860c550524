// `ag-mcp proposals … --upstream URL --token-file FILE` from outside: the real binary against a
// real ag-server on loopback. A reviewer lists, shows, diffs and approves; a maintainer
// integrates and rejects; what a token may not do is refused with the server's reason; what the
// server returns cannot drive the terminal and shows no credential; bad input changes nothing.
import t from 'tap'
import { execFileSync, spawnSync } from 'node:child_process'
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { GIT_IDENTITY } from '../helpers/git-identity.ts'
import { BINARY } from '../helpers/mcp-process.ts'
import { startUiServer } from '../helpers/ui-server.ts'

const root = mkdtempSync(join(tmpdir(), 'ag-cli-src-'))
const src = join(root, 'demo')
mkdirSync(join(src, 'lib'), { recursive: true })
const git = (...args: string[]) => execFileSync('git', args, { cwd: src, env: { ...process.env, ...GIT_IDENTITY } })
git('init', '-q', '-b', 'main')
writeFileSync(join(src, 'lib', 'math.js'), 'export const add = (a, b) => a + b\n')
git('add', '.')
git('commit', '-qm', 'initial')

const srv = await startUiServer({
  repos: { demo: src },
  people: {
    alice: {
      principal: 'agent:alice',
      scopes: ['read', 'workspace', 'propose', 'coordinate', 'review'],
      role: 'reviewer',
    },
    rita: { principal: 'human:rita', scopes: ['read', 'review'], role: 'reviewer' },
    mona: { principal: 'human:mona', scopes: ['read', 'review', 'integrate', 'propose'], role: 'maintainer' },
  },
  policy: { required_approvals: 1 },
})
t.teardown(async () => {
  await srv.close()
  rmSync(root, { recursive: true, force: true })
})

async function agwp(who: string, method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${srv.origin}/agwp/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${srv.token[who]}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
  return (await res.json()) as Record<string, unknown>
}

const planted = `agwp_${'K'.repeat(43)}`
async function propose(title: string, files: Record<string, string>, reasoning = ''): Promise<string> {
  const ws = (await agwp('alice', 'POST', '/repos/demo/workspaces', {}))['id'] as string
  for (const [path, content] of Object.entries(files))
    await agwp('alice', 'PUT', `/workspaces/${ws}/files`, { path, content })
  return (await agwp('alice', 'POST', `/workspaces/${ws}/proposals`, { title, reasoning }))['id'] as string
}

const first = await propose(
  'Add sub \u001b]0;owned\u0007',
  { 'lib/math.js': 'export const add = (a, b) => a + b\nexport const sub = (a, b) => a - b\n' },
  `Mirrors add.\u202e Key: ${planted}. \u001b[2J`,
)
const second = await propose('Add mul', { 'lib/mul.js': 'export const mul = (a, b) => a * b\n' })

function cli(who: string | null, ...args: string[]): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(
    process.execPath,
    [
      BINARY,
      'proposals',
      ...args,
      ...(who === null ? [] : ['--upstream', srv.origin, '--token-file', srv.tokenFile[who] as string]),
    ],
    { encoding: 'utf8', env: { PATH: process.env['PATH'] ?? '', HOME: root }, timeout: 60_000 },
  )
  return { status: r.status, stdout: r.stdout, stderr: r.stderr }
}

t.test('a reviewer lists, shows and diffs from a terminal; nothing in it can drive the terminal', async (t) => {
  const list = cli('rita', 'list')
  t.equal(list.status, 0, list.stderr)
  t.match(list.stdout, new RegExp(`^${first}\\s+open\\s+demo\\s+Add sub \\\\u\\{1b\\}\\]0;owned\\\\u\\{7\\}`, 'm'))
  t.match(list.stdout, new RegExp(`^${second}\\s+open\\s+demo\\s+Add mul`, 'm'))
  const show = cli('rita', 'show', first)
  t.equal(show.status, 0, show.stderr)
  t.match(show.stdout, /approvals {2}0 of 1/)
  t.match(show.stdout, /approvals_missing: 0 of 1 required approval/)
  t.match(
    show.stdout,
    /Mirrors add\.\\u\{202e\} Key: \[REDACTED\]\. \\u\{1b\}\[2J/,
    'hidden characters named, the token shape scrubbed',
  )
  t.match(show.stdout, /lib\/math\.js \| \+1 -0/)
  for (const out of [list.stdout, show.stdout]) {
    t.notOk(/[\u001b\u0007\u202e]/.test(out), 'no escape, bell or bidi control reaches the terminal')
    t.notOk(out.includes(planted))
  }
  const diff = cli('rita', 'diff', first)
  t.equal(diff.status, 0, diff.stderr)
  t.match(diff.stdout, /^diff --git a\/lib\/math\.js b\/lib\/math\.js$/m)
  t.match(diff.stdout, /^\+export const sub = \(a, b\) => a - b$/m)
})

t.test('each refusal carries the server’s reason; nothing changes', async (t) => {
  const integrate = cli('rita', 'integrate', first)
  t.equal(integrate.status, 1)
  t.equal(integrate.stderr, "ag-mcp proposals integrate: forbidden: token lacks the 'integrate' scope\n")
  const early = cli('mona', 'integrate', first)
  t.equal(early.status, 1)
  t.match(early.stderr, /forbidden: integration refused by policy: 0 of 1 required approval/)
  const reject = cli('rita', 'reject', first)
  t.equal(reject.stderr, "ag-mcp proposals reject: forbidden: token lacks the 'propose' scope\n")
  const missing = cli('rita', 'show', 'pr-999')
  t.match(missing.stderr, /not_found: proposal 'pr-999' not found/)
  t.equal((await agwp('rita', 'GET', `/proposals/${first}`))['state'] as string, 'open')
})

t.test('a reviewer approves; a maintainer integrates with a strategy and rejects another', async (t) => {
  const changes = cli('rita', 'review', first, '--request-changes', '--message', 'name it subtract?')
  t.equal(changes.status, 0, changes.stderr)
  t.match(changes.stdout, new RegExp(`^requested changes on ${first} at [0-9a-f]{10}\\n$`))
  const approve = cli('rita', 'review', first, '--approve', '--message', 'fine as it is')
  t.equal(approve.status, 0, approve.stderr)
  t.match(approve.stdout, new RegExp(`^approved ${first} at [0-9a-f]{10}\\n$`))
  const integrate = cli('mona', 'integrate', first, '--strategy', 'squash')
  t.equal(integrate.status, 0, integrate.stderr)
  t.match(
    integrate.stdout,
    new RegExp(`^integrated ${first} into main \\(squash\\): [0-9a-f]{10}\\.\\.[0-9a-f]{10}\\n$`),
  )
  const reject = cli('mona', 'reject', second, '--reason', 'not needed')
  t.equal(reject.status, 0, reject.stderr)
  t.equal(reject.stdout, `rejected ${second}: withdrawn ("not needed")\n`)
  const all = cli('rita', 'list', '--state', 'all')
  t.match(all.stdout, new RegExp(`^${first}\\s+integrated`, 'm'))
  t.match(all.stdout, new RegExp(`^${second}\\s+withdrawn`, 'm'))
  t.equal(cli('rita', 'list').stdout, 'no open proposals (--state all shows every one)\n')
})

t.test('bad input is refused with a clear message before anything is sent', async (t) => {
  const cases: [string[], RegExp][] = [
    [['review', first], /give exactly one of --approve, --request-changes, --comment/],
    [['review', first, '--request-changes'], /say what should change \(--message TEXT\)/],
    [['show'], /name the proposal/],
    [['list', '--stat', 'all'], /unknown flag --stat \(did you mean --state\?\)/],
    [['lst'], /unknown command "lst" \(did you mean list\?\)/],
  ]
  for (const [args, want] of cases) {
    const r = cli('rita', ...args)
    t.equal(r.status, 2, args.join(' '))
    t.match(r.stderr, want)
  }
  const plain = spawnSync(
    process.execPath,
    [BINARY, 'proposals', 'list', '--upstream', 'http://example.com', '--token-file', srv.tokenFile['rita'] as string],
    { encoding: 'utf8' },
  )
  t.equal(plain.status, 2)
  t.match(plain.stderr, /plain http:\/\/ would send the token in clear/)
  const nofile = spawnSync(
    process.execPath,
    [BINARY, 'proposals', 'list', '--upstream', srv.origin, '--token-file', join(root, 'none.token')],
    { encoding: 'utf8' },
  )
  t.equal(nofile.status, 2)
  t.match(nofile.stderr, /--token-file .*none\.token: cannot read it \(ENOENT\)/)
  const loose = join(root, 'loose.token')
  writeFileSync(loose, `${srv.token['rita']}\n`)
  chmodSync(loose, 0o644)
  const warned = spawnSync(
    process.execPath,
    [BINARY, 'proposals', 'list', '--upstream', srv.origin, '--token-file', loose],
    { encoding: 'utf8' },
  )
  t.match(warned.stderr, /token file is readable by group or others; chmod 600 it/)
  t.notOk(warned.stderr.includes(srv.token['rita'] as string), 'the token is never printed')
  const agent = cli('alice', 'review', second, '--approve')
  t.equal(agent.status, 1, 'an agent token is the server’s to refuse')
  t.match(agent.stderr, /conflict: proposal is withdrawn|forbidden/)
})
