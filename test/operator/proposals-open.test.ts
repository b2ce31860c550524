// Local mode's review page from outside: `ag-mcp proposals open --browser` starts the private
// ag-server, prints a loopback URL whose one-time secret (in the fragment) signs human:owner in
// once, hands it to the desktop's opener, and serves until told to stop; `proposals review`
// reuses that server. The real binary, a real repository, a fake xdg-open on PATH.
import t from 'tap'
import { execFileSync, spawn, spawnSync } from 'node:child_process'
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { GIT_IDENTITY } from '../helpers/git-identity.ts'
import { BINARY } from '../helpers/mcp-process.ts'

const home = mkdtempSync(join(tmpdir(), 'ag-open-'))
t.teardown(() => rmSync(home, { recursive: true, force: true }))
const repo = join(home, 'project')
mkdirSync(repo)
const git = (...args: string[]) => execFileSync('git', args, { cwd: repo, env: { ...process.env, ...GIT_IDENTITY } })
git('init', '-q', '-b', 'main')
writeFileSync(join(repo, 'README.md'), '# project\n')
git('add', '.')
git('commit', '-qm', 'initial')
// The desktop's opener, as far as this test is concerned: it writes down what it was asked to open.
const bin = join(home, 'bin')
mkdirSync(bin)
writeFileSync(join(bin, 'xdg-open'), `#!/bin/sh\nprintf '%s' "$1" > "${join(home, 'opened')}"\n`)
chmodSync(join(bin, 'xdg-open'), 0o755)
const env = { PATH: `${bin}:${process.env['PATH'] ?? ''}`, HOME: home, ...GIT_IDENTITY }

// Local mode's state: one session that ends at once (stdin is empty).
const setup = spawnSync(process.execPath, [BINARY, '--local', repo, '--log-level', 'warn'], {
  env,
  input: '',
  encoding: 'utf8',
})
if (setup.status !== 0) throw new Error(`ag-mcp --local: ${setup.stderr}`)

t.test('proposals open: a one-time loopback link that signs you in once; review reuses its server', async (t) => {
  const open = spawn(process.execPath, [BINARY, 'proposals', 'open', '--browser', '--repo-dir', repo], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const exited = new Promise<number | null>((r) => open.once('exit', (code) => r(code)))
  let stderr = ''
  open.stderr.on('data', (d) => {
    stderr += String(d)
  })
  const lines: string[] = []
  // The URL, once the line after it (what the link is) has come too.
  const url = await new Promise<string>((resolve, reject) => {
    let found = ''
    createInterface({ input: open.stdout }).on('line', (l) => {
      lines.push(l)
      found ||= /^review page: (\S+)$/.exec(l)?.[1] ?? ''
      if (found && l.includes('one-time link')) resolve(found)
    })
    open.once('exit', () => reject(new Error(`proposals open exited: ${stderr}`)))
  })
  t.teardown(() => void open.kill('SIGKILL'))
  const u = new URL(url)
  t.equal(u.hostname, '127.0.0.1', 'a loopback URL')
  t.equal(u.pathname, '/ui/')
  t.match(u.hash, /^#sign-in=[A-Za-z0-9_-]{43}$/, 'the secret rides in the fragment')
  t.notOk(url.includes('agwp_'), 'no token in the URL')
  t.match(lines.join('\n'), /one-time link: it signs you in as human:owner once, within 2 minutes/)
  await new Promise<void>((r) => {
    const check = (n: number): void => {
      if (existsSync(join(home, 'opened')) || n === 0) r()
      else setTimeout(() => check(n - 1), 50)
    }
    check(200)
  })
  t.equal(readFileSync(join(home, 'opened'), 'utf8'), url, '--browser handed the URL to the opener')

  const secret = u.hash.slice('#sign-in='.length)
  const signIn = () =>
    fetch(`${u.origin}/ui/api/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: u.origin },
      body: JSON.stringify({ link: secret }),
    })
  const first = await signIn()
  t.equal(first.status, 200)
  const cookie = (first.headers.get('set-cookie') ?? '').split(';')[0] as string
  t.match(cookie, /^agwp_ui_session=/)
  t.equal((await signIn()).status, 401, 'the link died with its first use')
  const session = (await (await fetch(`${u.origin}/ui/api/session`, { headers: { cookie } })).json()) as Record<
    string,
    unknown
  >
  t.match(session, { principal: 'human:owner', repos: [{ name: 'project', role: 'maintainer' }] })

  // An agent's proposal, through the private server's AGWP (a token minted with the admin token).
  const admin = readFileSync(join(repo, '.ag', 'server', 'admin.token'), 'utf8').trim()
  const call = async (token: string, method: string, path: string, body: unknown) =>
    (await (
      await fetch(`${u.origin}/agwp/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
    ).json()) as Record<string, unknown>
  const agent = String(
    (
      await call(admin, 'POST', '/admin/tokens', {
        principal: 'agent:local',
        scopes: ['read', 'workspace', 'propose'],
        repos: ['project'],
        ttl_s: 600,
      })
    )['token'],
  )
  const ws = String((await call(agent, 'POST', '/repos/project/workspaces', {}))['id'])
  await call(agent, 'PUT', `/workspaces/${ws}/files`, { path: 'docs/a.md', content: 'a\n' })
  const id = String((await call(agent, 'POST', `/workspaces/${ws}/proposals`, { title: 'Add a' }))['id'])

  const review = spawnSync(process.execPath, [BINARY, 'proposals', 'review', id, '--approve', '--repo-dir', repo], {
    env,
    encoding: 'utf8',
  })
  t.equal(review.status, 0, review.stderr)
  t.match(review.stdout, new RegExp(`^approved ${id} at [0-9a-f]{10}\\n$`))
  const page = (await (await fetch(`${u.origin}/ui/api/proposals/${id}`, { headers: { cookie } })).json()) as {
    proposal: { reviews: { reviewer: string; verdict: string }[] }
  }
  t.match(page.proposal.reviews, [{ reviewer: 'human:owner', verdict: 'approve' }], 'the page sees the review')

  open.kill('SIGTERM')
  t.equal(await exited, 0, 'stopped when told to')
  await t.rejects(fetch(`${u.origin}/ui/`), 'the private server stopped with it')
})

t.test('proposals open outside local mode says what to do', async (t) => {
  const elsewhere = join(home, 'elsewhere')
  mkdirSync(elsewhere)
  execFileSync('git', ['init', '-q'], { cwd: elsewhere, env })
  const r = spawnSync(process.execPath, [BINARY, 'proposals', 'open'], { cwd: elsewhere, env, encoding: 'utf8' })
  t.equal(r.status, 2)
  t.match(r.stderr, /has no local-mode state \(\.ag\/\): run ag-mcp --local there first/)
  const bad = spawnSync(process.execPath, [BINARY, 'proposals', 'open', '--browse'], {
    cwd: repo,
    env,
    encoding: 'utf8',
  })
  t.equal(bad.status, 2)
  t.match(bad.stderr, /unexpected --browse \(did you mean --browser\?\)/)
})
