// Every tool refusal in the catalog (core/src/errors.ts), provoked from outside: the real
// bundle spawned over stdio, its answer read off the wire. Each answer is an isError result
// whose summary (the last text item) is the catalog's words ending with `[code]`, and whose
// structuredContent.error carries the code. The product's bundle serves what a product plugin
// can cause; the test bundle (`npm run build:test`) adds test/fixtures/plugin-tree, whose rogue
// plugin misbehaves as no product plugin does. The last test fails when a catalog code is in
// neither list: a new refusal comes with its test here.
import t from 'tap'
import type { Test } from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { CATALOG } from '../../core/src/errors.ts'
import type { RefusalCode } from '../../core/src/errors.ts'
import { startMcp, TEST_BUNDLE } from '../helpers/mcp-process.ts'
import type { McpProcess, StartOptions } from '../helpers/mcp-process.ts'
import { recordingServer } from '../helpers/recording-server.ts'

interface Answer {
  isError: boolean
  summary: string
  code: unknown
  texts: string[]
}

async function call(p: McpProcess, name: string, args: unknown): Promise<Answer> {
  const r = await p.request('tools/call', { name, arguments: args })
  const texts = ((r.result?.['content'] as { text: string }[] | undefined) ?? []).map((c) => c.text)
  const structured = r.result?.['structuredContent'] as { error?: { code?: unknown } } | undefined
  // ag-mcp's own line: the first line of its item, the last item (a peer's words come first).
  const summary = (texts.at(-1) ?? '').split('\n')[0] ?? ''
  return { isError: r.result?.['isError'] === true, summary, code: structured?.error?.code, texts }
}

/** The codes seen on the wire, for the last test. */
const seen = new Set<string>()

function refused(t: Test, a: Answer, code: RefusalCode, summary: string | RegExp): void {
  seen.add(code)
  t.equal(a.isError, true, `${code}: isError`)
  if (typeof summary === 'string') t.equal(a.summary, summary, `${code}: the summary`)
  else t.match(a.summary, summary, `${code}: the summary`)
  t.ok(a.summary.endsWith(` [${code}]`), `${code}: the summary ends with [${code}]`)
  t.equal(a.code, code, `${code}: structuredContent.error.code`)
}

const start = (t: Test, o: StartOptions) => startMcp(t, { ...o, args: ['--log-level', 'warn', ...(o.args ?? [])] })
const testBundle = (t: Test, args: string[], cwd?: string) =>
  start(t, { command: [process.execPath, TEST_BUNDLE], args, ...(cwd ? { cwd } : {}) })

/** An AGWP upstream that answers every request 409 conflict, as a server does for a moved ref. */
async function conflictUpstream(t: Test) {
  const server = await recordingServer((_req, res) => {
    res.writeHead(409, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ error: { code: 'conflict', message: 'the ref moved on' } }))
  })
  t.teardown(() => server.close())
  const token = join(t.testdir({}), 'token')
  writeFileSync(token, `agwp_${'a'.repeat(43)}\n`, { mode: 0o600 })
  return ['--upstream', server.url, '--token-file', token]
}

t.test('product: refusals before anything is sent, and an upstream failure', async (t) => {
  const p = start(t, { args: [...(await conflictUpstream(t)), '--repo', 'team/*'] })
  refused(
    t,
    await call(p, 'proposal_integrate', { proposal: 'pr-1' }),
    'group_disabled',
    'proposal_integrate: refused: Tool proposal_integrate belongs to the "integrate" group, which this server has not enabled. The operator can enable it only with --enable-integrate. [group_disabled]',
  )
  refused(
    t,
    await call(p, 'log', [1]),
    'arguments_not_object',
    'log: refused: "arguments" must be a JSON object. [arguments_not_object]',
  )
  refused(
    t,
    await call(p, 'log', { repo: 7 }),
    'input_invalid',
    'log: refused: the arguments do not match the input schema: repo: must be string. [input_invalid]',
  )
  refused(
    t,
    await call(p, 'log', { repo: 'other/x' }),
    'policy_refused',
    'log: refused by --repo: repository "other/x" matches no --repo glob. Allowed repositories: team/*. [policy_refused]',
  )
  const upstream = await call(p, 'log', { repo: 'team/a' })
  refused(
    t,
    upstream,
    'upstream_failed',
    'log: failed: the upstream answered 409 conflict. Its message, quoted: [upstream_failed]',
  )
  t.match(upstream.texts[0], /\nthe ref moved on\n/, "the upstream's message, fenced")
})

t.test('product: the rate limit', async (t) => {
  // A burst of one, refilled in 100 s: the second call finds no room, however slow the machine.
  const p = start(t, { args: [...(await conflictUpstream(t)), '--rate-limit', '0.01/s'] })
  await call(p, 'log', [])
  refused(
    t,
    await call(p, 'log', []),
    'rate_limited',
    /^log: refused by the rate limit \(--rate-limit\): too many tool calls; retry in \d+(\.\d)? s\. \[rate_limited\]$/,
  )
})

t.test('test bundle: failures the plugin reports or causes', async (t) => {
  const root = t.testdir({ notes: {} })
  const p = testBundle(t, ['--allow', 'notes,rogue', '--notes-root', root])
  const missing = await call(p, 'note_read', { path: 'notes/missing.md' })
  refused(
    t,
    missing,
    'plugin_failed',
    'note_read: failed: the notes plugin reported not_found. Its message, quoted: [plugin_failed]',
  )
  t.match(missing.texts[0], /\nno note at notes\/missing\.md\n/, "the plugin's message, fenced")
  const crash = await call(p, 'rogue_crash', {})
  refused(t, crash, 'internal', 'rogue_crash: failed inside ag-mcp (see its log); nothing more is known. [internal]')
  t.notMatch(crash.texts.join('\n'), /must not reach/, "the error's text is not shown")
  refused(
    t,
    await call(p, 'rogue_shape', {}),
    'output_invalid',
    "rogue_shape: failed: the rogue plugin's answer did not have the expected shape, so it is not shown (see the ag-mcp log). [output_invalid]",
  )
  refused(
    t,
    await call(p, 'rogue_vanish', {}),
    'no_handler',
    'rogue_vanish: failed: the rogue plugin has no handler for it. [no_handler]',
  )
  const peer = await call(p, 'rogue_crash', { extra: 1 })
  refused(
    t,
    peer,
    'peer_input_invalid',
    'rogue_crash: refused: its arguments; the reason is above. [peer_input_invalid]',
  )
  t.equal(peer.texts[0], 'rogue_crash takes no arguments; it was given extra.', "the peer's words come first")
})

t.test('test bundle: a plugin that cannot start', async (t) => {
  const threw = testBundle(t, ['--allow', 'rogue', '--rogue-init', 'throws'])
  refused(
    t,
    await call(threw, 'rogue_crash', {}),
    'plugin_unavailable',
    'rogue_crash: failed: the rogue plugin could not start (see the ag-mcp log). [plugin_unavailable]',
  )
  const refusedInit = testBundle(t, ['--allow', 'rogue', '--rogue-init', 'not-configured'])
  refused(
    t,
    await call(refusedInit, 'rogue_crash', {}),
    'not_sent',
    'rogue_crash: not sent: the rogue plugin was told to refuse [not_sent]',
  )
})

/**
 * Codes no process can be brought to answer from outside, each with why; test/core/refusals.test.ts
 * provokes them in-process.
 */
const IN_PROCESS_ONLY: Partial<Record<RefusalCode, string>> = {
  group_unknown:
    'a tool whose group the registry lacks: the registry builds its groups from the same manifests as its tools, so only a corrupted registry has one',
  no_validator:
    "a tool the build wrote no validator for: the build compiles one for every manifest tool, and the bundle's registry and validators come from the same manifests",
}

t.test('every tool refusal in the catalog is provoked here or, if it cannot be, in-process', async (t) => {
  const codes = Object.entries(CATALOG)
    .filter(([, e]) => e.as === 'result')
    .map(([c]) => c)
  const covered = [...seen, ...Object.keys(IN_PROCESS_ONLY)].sort()
  t.same(covered, [...codes].sort(), 'the codes above are the catalog’s tool refusals')
  const inProcess = await import('node:fs').then((fs) =>
    fs.readFileSync(new URL('../core/refusals.test.ts', import.meta.url), 'utf8'),
  )
  for (const code of Object.keys(IN_PROCESS_ONLY))
    t.match(inProcess, new RegExp(`'${code}',`), `${code} is provoked in test/core/refusals.test.ts`)
})
