// The review page in a real browser (Debian's Chromium through playwright-core) against a real
// ag-server (dist/ag-server.mjs serve --ui), with proposals a real agent session made through
// dist/ag-mcp.mjs over stdio: a reviewer signs in and approves, a maintainer integrates, an
// agent's token is refused at sign-in, and a hostile repository executes nothing and shows its
// hidden characters. One browser for the whole file; screenshots go to .tap/screenshots/
// (AG_MCP_DOCS_SCREENSHOTS=1 also writes docs/review-list.png and docs/review-proposal.png).
import t from 'tap'
import { execFileSync } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { McpStdioClient, type ToolResult } from '../../../examples/agents/mcp-client.ts'
import { CSP } from '../../../server/src/ui/guard.ts'
import { browserMissing, launchBrowser } from '../../helpers/browser.ts'
import { GIT_IDENTITY } from '../../helpers/git-identity.ts'
import { BINARY, REPO_ROOT } from '../../helpers/mcp-process.ts'
import { startUiServer, type UiServer } from '../../helpers/ui-server.ts'

const PWNED = 'window.__pwned=1'

// The page's globals, as the functions page.evaluate runs there use them (this file is compiled for Node).
interface PageElement {
  setAttribute(name: string, value: string): void
  append(e: PageElement): void
  src: string
  innerHTML: string
}
declare const document: {
  createElement(tag: string): PageElement
  body: PageElement
  addEventListener(type: string, f: (e: { violatedDirective: string; blockedURI: string }) => void): void
}
declare const window: { __violations: string[]; __pwned?: unknown }
const SHOTS = join(REPO_ROOT, '.tap', 'screenshots')

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, ...GIT_IDENTITY } })
}

function write(dir: string, files: Record<string, string | Buffer>): void {
  for (const [p, c] of Object.entries(files)) {
    mkdirSync(join(dir, p, '..'), { recursive: true })
    writeFileSync(join(dir, p), c)
  }
}

function sources(root: string): { demo: string; hostile: string } {
  const demo = join(root, 'demo')
  mkdirSync(demo)
  git(demo, 'init', '-q', '-b', 'main')
  write(demo, {
    'README.md': '# demo\n\nSmall helpers.\n',
    'lib/math.js': 'export function add(a, b) {\n  return a + b\n}\n',
  })
  git(demo, 'add', '.')
  git(demo, 'commit', '-qm', 'initial')
  const hostile = join(root, 'hostile')
  mkdirSync(hostile)
  git(hostile, 'init', '-q', '-b', 'main')
  write(hostile, { 'README.md': '# hostile\n' })
  git(hostile, 'add', '.')
  git(hostile, 'commit', '-qm', 'initial')
  git(hostile, 'checkout', '-qb', 'feature')
  write(hostile, {
    [`docs/<img src=x onerror=${PWNED}>.md`]: `# Hello <script>${PWNED}</script>\n"><img src=x onerror="${PWNED}">\n`,
    [`src/"><script>${PWNED}</script>.js`]:
      'const admin = isAdmin\u202e ? 1 : 0 // \u2066hidden\u2069\nconsole.log("\u001b[31mred\u001b[0m")\n// zero\u200bwidth\n',
    'bin/evil\u202egnp.exe': 'MZ\n',
    'assets/logo.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 1, 2, 3]),
    'data/big.csv': Array.from({ length: 1200 }, (_, i) => `${i},<script>${PWNED}</script>\n`).join(''),
  })
  git(hostile, 'add', '.')
  git(
    hostile,
    'commit',
    '-qm',
    `feat: <script>${PWNED}</script> "><img src=x onerror=${PWNED}>\n\nreversed \u202e text and an \u001b[2J escape`,
  )
  git(hostile, 'checkout', '-q', 'main')
  return { demo, hostile }
}

/** An agent session through the real binary: claim, log thoughts (agit), write, propose, note, release. */
async function agentSession(
  srv: UiServer,
  cwd: string,
  o: {
    repo: string
    task?: string
    base?: string
    files: Record<string, string>
    propose: Record<string, unknown>
    note: string
    handoff?: string
    thoughts?: unknown[]
  },
): Promise<string> {
  const env = { PATH: process.env['PATH'] ?? '', HOME: cwd, ...GIT_IDENTITY }
  const client = new McpStdioClient(
    process.execPath,
    [BINARY, '--upstream', srv.origin, '--token-file', srv.tokenFile['alice'] as string, '--log-level', 'warn'],
    { env, cwd },
  )
  const failures: string[] = []
  const call = async (name: string, args: Record<string, unknown>): Promise<ToolResult> => {
    const r = await client.callTool(name, args)
    if (r.isError) failures.push(`${name}: ${r.text}`)
    return r
  }
  await client.start()
  const run = o.task
    ? ((await call('task_claim', { repo: o.repo, task: o.task, ttl_s: 600 })).structured?.['run_id'] as string)
    : undefined
  const inRun = run ? { run_id: run } : {}
  if (o.thoughts) await call('agit_log_step', { batch: o.thoughts })
  const ws = (await call('workspace_create', { repo: o.repo, ...(o.base ? { base: o.base } : {}), ...inRun }))
    .structured?.['id'] as string
  for (const [path, content] of Object.entries(o.files))
    await call('file_write', { repo: o.repo, workspace: ws, path, content, ...inRun })
  const p = await call('propose', { repo: o.repo, workspace: ws, ...o.propose, ...inRun })
  if (run) {
    await call('run_update', { repo: o.repo, run_id: run, note: o.note })
    if (o.handoff) await call('run_update', { repo: o.repo, run_id: run, note: o.handoff })
    await call('run_release', { repo: o.repo, run_id: run, outcome: 'done' })
  }
  await client.close()
  if (failures.length) throw new Error(`the agent session failed:\n${failures.join('\n')}\n${client.stderr.join('\n')}`)
  return p.structured?.['id'] as string
}

async function signIn(page: Page, srv: UiServer, who: string): Promise<void> {
  await page.goto(`${srv.origin}/ui/`)
  await page.locator('#token').fill(srv.token[who] as string)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByTestId('principal').waitFor()
}

async function signOut(page: Page): Promise<void> {
  await page.getByTestId('sign-out').click()
  await page.locator('#token').waitFor()
}

async function openProposal(page: Page, srv: UiServer, id: string, query = ''): Promise<void> {
  await page.goto(`${srv.origin}/ui/p/${id}${query}`)
  await page.locator('html[data-rendered]').waitFor({ state: 'attached' })
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'ag-ui-src-'))
  const src = sources(root)
  const srv = await startUiServer({
    repos: { demo: src.demo, hostile: src.hostile },
    people: {
      alice: { principal: 'agent:alice', scopes: ['read', 'workspace', 'propose', 'coordinate'], role: 'contributor' },
      rita: { principal: 'human:rita', scopes: ['read', 'review'], role: 'reviewer' },
      mona: { principal: 'human:mona', scopes: ['read', 'review', 'integrate', 'propose'], role: 'maintainer' },
    },
    policy: { required_approvals: 1 },
    tasks: [
      { repo: 'demo', title: 'Add subtraction', body: 'lib/math.js has add(); callers need sub() too.' },
      { repo: 'hostile', title: 'Hostile task <script>window.__pwned=1</script>' },
    ],
  })
  t.teardown(async () => {
    await srv.close()
    rmSync(root, { recursive: true, force: true })
  })
  // The agent works in a clone of the repository with AGIT on: its logged thoughts travel as reasoning.
  const work = join(root, 'work')
  git(root, 'clone', '-q', src.demo, work)
  execFileSync(process.execPath, [BINARY, 'agit', 'init'], {
    cwd: work,
    env: { PATH: process.env['PATH'] ?? '', HOME: root, ...GIT_IDENTITY },
  })
  const demo = await agentSession(srv, work, {
    repo: 'demo',
    task: srv.tasks[0] as string,
    thoughts: [
      {
        role: 'user',
        category: 'intent',
        content: 'Add sub() next to add() in the math helpers',
        locations: [{ file: 'lib/math.js' }],
      },
      {
        role: 'ai',
        category: 'reasoning',
        content: 'Mirror add() so both read alike, and document both in docs/math.md',
        locations: [{ file: 'lib/math.js', start_line: 1, end_line: 3 }],
      },
    ],
    files: {
      'lib/math.js':
        'export function add(a, b) {\n  return a + b\n}\n\n/** a - b */\nexport function sub(a, b) {\n  return a - b\n}\n',
      'docs/math.md': '# Math helpers\n\n- `add(a, b)` returns a + b.\n- `sub(a, b)` returns a - b.\n',
    },
    propose: {
      title: 'Add sub() to the math helpers',
      description: 'Adds sub() beside add() and a page documenting both.',
      task: srv.tasks[0],
      reasoning: 'The task asks for subtraction; sub() mirrors add() so the two read alike.',
    },
    note: 'Proposed; the doc page is new, please check its wording.',
  })
  const planted = `agwp_${'Z'.repeat(43)}`
  const hostile = await agentSession(srv, root, {
    repo: 'hostile',
    task: srv.tasks[1] as string,
    base: 'feature',
    files: { [`notes/"><img src=x onerror=${PWNED}>.txt`]: `<script>${PWNED}</script>\u202e\n` },
    propose: {
      title: `Fix <img src=x onerror=${PWNED}> "><script>${PWNED}</script>`,
      description: `\u202edesc <b onmouseover=${PWNED}>bold</b>`,
      reasoning: `Because <script>${PWNED}</script> and "><img src=x onerror=${PWNED}> and a key ${planted} and \u202ereversed`,
      target: 'main',
      task: srv.tasks[1],
    },
    note: `"><img src=x onerror=${PWNED}> \u202e note`,
    handoff: `Task handoff\nObjective: keep the page safe <script>${PWNED}</script>\nNext: review`,
  })

  const browser = await launchBrowser()
  t.teardown(() => browser.close())
  const page = browser.context.pages()[0] ?? (await browser.context.newPage())
  // Recorded from the page's own start, before any of its script runs: what the page would hide.
  await browser.context.addInitScript(() => {
    window.__violations = []
    document.addEventListener('securitypolicyviolation', (e) =>
      window.__violations.push(`${e.violatedDirective} ${e.blockedURI}`),
    )
  })
  const reports: string[] = []
  const dialogs: string[] = []
  const errors: string[] = []
  page.on('request', (r) => {
    if (r.url().endsWith('/ui/csp-report')) reports.push(r.postData() ?? '')
    if (!r.url().startsWith(srv.origin)) errors.push(`request to another origin: ${r.url()}`)
  })
  page.on('dialog', (d) => {
    dialogs.push(d.message())
    void d.dismiss()
  })
  page.on('pageerror', (e) => errors.push(e.message))
  mkdirSync(SHOTS, { recursive: true })
  const shot = async (name: string): Promise<void> => {
    await page.screenshot({ path: join(SHOTS, name), fullPage: !name.includes('list') })
    if (process.env['AG_MCP_DOCS_SCREENSHOTS'] === '1' && !name.includes('hostile'))
      copyFileSync(join(SHOTS, name), join(REPO_ROOT, 'docs', name))
  }

  await t.test("an agent's token is refused at sign-in, with the reason", async (t) => {
    await page.goto(`${srv.origin}/ui/`)
    await page.locator('#token').fill(srv.token['alice'] as string)
    await page.getByRole('button', { name: 'Sign in' }).click()
    const err = page.getByTestId('sign-in-error')
    await err.waitFor()
    t.match(await err.textContent(), /agent:alice is an agent: agents' tokens cannot sign in/)
    t.equal((await browser.context.cookies()).length, 0, 'no cookie was set')
    t.equal(await page.locator('#token').inputValue(), '', 'the field no longer holds the token')
  })

  await t.test('a maintainer who integrates too early is refused with the server’s reason', async (t) => {
    await signIn(page, srv, 'mona')
    const [cookie] = await browser.context.cookies()
    t.match(cookie, { name: 'agwp_ui_session', httpOnly: true, sameSite: 'Strict', path: '/ui' })
    t.notOk(cookie?.value.includes(srv.token['mona'] as string), 'the cookie is not the token')
    await openProposal(page, srv, demo)
    await page.getByRole('button', { name: 'Integrate' }).click()
    const flash = page.getByTestId('flash')
    await flash.waitFor()
    t.match(await flash.textContent(), /Refused \(forbidden\): integration refused by policy: 0 of 1 required approval/)
    await signOut(page)
    t.equal((await browser.context.cookies()).length, 0, 'signing out clears the cookie')
  })

  await t.test('a reviewer signs in, sees the diff and the reasoning, approves', async (t) => {
    await signIn(page, srv, 'rita')
    const rows = page.getByTestId('proposal-row')
    await rows.first().waitFor()
    t.equal(await rows.count(), 2, 'both open proposals are listed')
    t.match(await page.getByTestId('range').textContent(), /1–2 of 2/)
    await shot('review-list.png')
    await page.getByRole('link', { name: /Add sub\(\) to the math helpers/ }).click()
    await page.locator('html[data-rendered]').waitFor({ state: 'attached' })
    const changes = page.getByTestId('changes')
    t.match(await changes.textContent(), /export function sub\(a, b\)/, 'the diff shows the new function')
    t.equal(await page.getByTestId('diff-file').count(), 2, 'file by file')
    t.ok(await page.locator('td.code.add .tok-kw', { hasText: 'function' }).count(), 'highlighted')
    const reasoning = page.getByTestId('reasoning')
    t.match(await reasoning.textContent(), /sub\(\) mirrors add\(\)/, "the agent's own reasoning")
    const thoughts = page.getByTestId('thought-log')
    t.match(
      await thoughts.textContent(),
      /AGIT thought log \(2\)/,
      'the thoughts logged with agit travelled with the proposal',
    )
    t.match(await thoughts.textContent(), /Mirror add\(\) so both read alike/)
    t.match(
      await page.getByTestId('task').textContent(),
      /Add subtraction[\s\S]*please check its wording/,
      'task, run and notes',
    )
    t.match(await page.getByTestId('integrate-action').textContent(), /Not for you: token lacks the 'integrate' scope/)
    await page.locator('#review-body').fill('Reads well; thanks.')
    await page.getByRole('button', { name: 'Approve' }).click()
    await page.getByTestId('flash').waitFor()
    t.match(await page.getByTestId('flash').textContent(), /Approve: recorded/)
    t.match(await page.getByTestId('approvals').textContent(), /1 of 1/)
    t.match(await page.getByTestId('reviews').textContent(), /approved\s*human:rita[\s\S]*Reads well/)
    await openProposal(page, srv, demo, '?view=split')
    t.equal(await page.locator('table.diff.split').count(), 2, 'side by side')
    await openProposal(page, srv, demo)
    await shot('review-proposal.png')
    await signOut(page)
  })

  await t.test('a maintainer integrates with a strategy', async (t) => {
    await signIn(page, srv, 'mona')
    await openProposal(page, srv, demo)
    await page.locator('#strategy').selectOption('squash')
    await page.getByRole('button', { name: 'Integrate' }).click()
    await page.getByTestId('flash').waitFor()
    t.match(await page.getByTestId('flash').textContent(), /Integrated into main \(squash\)/)
    t.match(await page.getByTestId('title').textContent(), /Add sub\(\)/)
    t.match(await page.locator('.byline .badge').first().textContent(), /integrated/)
    const main = git(join(srv.data, 'repos', 'demo.git'), 'show', 'main:lib/math.js')
    t.match(main, /export function sub/, 'the target branch holds the change')
    await signOut(page)
  })

  await t.test('a hostile repository executes nothing and shows its hidden characters', async (t) => {
    await signIn(page, srv, 'rita')
    t.equal(await page.evaluate(() => window.__pwned), undefined, 'the list ran nothing')
    const res = await page.goto(`${srv.origin}/ui/p/${hostile}`)
    t.equal(res?.headers()['content-security-policy'], CSP, 'the page carries the policy')
    await page.locator('html[data-rendered]').waitFor({ state: 'attached' })
    // Give any planted handler its chance: every image the page has would have loaded or failed.
    await page.waitForLoadState('load')
    t.equal(await page.evaluate(() => window.__pwned), undefined, 'nothing ran')
    t.same(await page.evaluate(() => window.__violations), [], 'no violation')
    t.equal(await page.locator('img').count(), 0, 'no element came from the data')
    t.equal(await page.locator('script').count(), 1, 'the one script is the bundle')
    const text = (await page.locator('main').textContent()) ?? ''
    t.ok(text.includes(`Fix <img src=x onerror=${PWNED}> "><script>${PWNED}</script>`), 'the title, as text')
    t.ok(text.includes(`feat: <script>${PWNED}</script>`), 'the commit message, as text')
    t.ok(text.includes(`docs/<img src=x onerror=${PWNED}>.md`), 'a file name, as text')
    t.ok(text.includes('isAdmin\\u{202e} ? 1 : 0'), 'a bidi override in the code, visible')
    t.ok(text.includes('evil\\u{202e}gnp.exe'), 'a bidi override in a file name, visible')
    t.ok(text.includes('\\u{1b}[31mred'), 'an escape character, visible')
    t.ok(text.includes('zero\\u{200b}width'), 'a zero-width space, visible')
    t.notOk(/[\u202e\u2066\u2069\u200b\u001b]/.test(text), 'no hidden character is left in the page text')
    t.ok(await page.locator('.hidden-char.bidi').count(), 'bidi controls are marked')
    t.ok(text.includes('Binary file: not shown.'), 'the binary file is named, not shown')
    const large = page.getByTestId('diff-file').filter({ hasText: 'data/big.csv' })
    t.match(await large.textContent(), /Large diff \(1200 changed lines\), collapsed/, 'a large file is collapsed')
    t.equal(await large.locator('table.diff').count(), 0, 'and not built until asked for')
    t.ok(text.includes('a key [REDACTED] and'), 'a token shape in the reasoning is scrubbed')
    t.notOk(text.includes(planted))
    await shot('review-hostile.png')
    await large.getByRole('button', { name: 'Show the diff' }).click()
    t.equal(await large.locator('table.diff tr.add').count(), 1200, 'opened on request')
    t.match(
      await page.getByTestId('task').textContent(),
      /Continuity handoff[\s\S]*Objective: keep the page safe/,
      'a handoff note stands out',
    )
    await openProposal(page, srv, hostile, '?view=split')
    t.equal(await page.evaluate(() => window.__pwned), undefined, 'nothing ran side by side')
    t.same(reports, [], 'the browser reported no violation')
    t.same(dialogs, [])
    t.same(errors, [], 'no page error, no request elsewhere')
  })

  await t.test('the detectors above would have seen an attack: the policy blocks it and reports it', async (t) => {
    const reported = page.waitForRequest((r) => r.url().endsWith('/ui/csp-report'))
    // (No named functions in here: tsx would wrap them in a helper the page does not have.)
    const outcome = await page.evaluate(
      (code) =>
        [
          () => document.createElement('img').setAttribute('onerror', code),
          () => {
            document.body.innerHTML = '<b>markup</b>'
          },
          // Accepted by the DOM; the policy then refuses the load (img-src 'self'): no request leaves.
          () => {
            const far = document.createElement('img')
            far.src = 'http://192.0.2.1/tracker.png'
            document.body.append(far)
          },
        ].map((f) => {
          try {
            f()
            return 'accepted'
          } catch (e) {
            return (e as Error).name
          }
        }),
      PWNED,
    )
    t.same(
      outcome,
      ['TypeError', 'TypeError', 'accepted'],
      'an event handler attribute or markup from a string throws (Trusted Types)',
    )
    await page.waitForFunction(() => window.__violations.some((v) => v.startsWith('img-src')))
    const seen = await page.evaluate(() => window.__violations)
    t.ok(
      seen.some((v) => v.startsWith('require-trusted-types-for')),
      'the refused markup is a violation',
    )
    t.ok(
      seen.some((v) => v.startsWith('img-src') && v.includes('192.0.2.1')),
      'so is the remote image',
    )
    t.match((await reported).postData(), /violated-directive/, 'and the report endpoint heard of it')
    t.equal(await page.evaluate(() => window.__pwned), undefined, 'nothing ran')
  })
}

const missing = browserMissing()
if (missing && process.env['CI']) throw new Error(missing)
if (missing) t.test('the review page in a browser', { skip: missing }, async () => undefined)
else await main()
