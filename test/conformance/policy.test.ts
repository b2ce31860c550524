// Issue 3, from outside the process: the real binary over stdio, a recording upstream. For
// sampled allow-lists and every tool, a disallowed tool sends nothing; narrowing rules refuse
// before any write leaves; the token never appears in any byte ag-mcp writes.
import t from 'tap'
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { manifests } from '../../generated/manifests.js'
import type { JsonSchema } from '../../core/src/manifest/types.ts'
import { startMcp } from '../helpers/mcp-process.ts'
import type { McpProcess } from '../helpers/mcp-process.ts'
import { recorder } from './agwp-fixture.ts'
import type { IncomingMessage, ServerResponse } from 'node:http'

const TOKEN = 'agwp_' + 'Pq7'.repeat(14) + 'Z'
const tools = manifests.flatMap((m) => m.tools.map((tool) => ({ tool, group: m.group, access: m.access })))
// The local plugins' groups (agit, continuity, bundles) are not enumerated with the AGWP groups
// (each would double the processes): they are switched on together in every other allow-list
// instead (see below).
const LOCAL = ['agit', 'continuity', 'bundles']
const selectable = manifests
  .filter((m) => (m.access === 'default' || m.access === 'opt-in') && !LOCAL.includes(m.group))
  .map((m) => m.group)
/** Outside any git work tree (not under .tap/ in the checkout): an enabled agit group writes nothing there. */
const outsideGit = mkdtempSync(join(tmpdir(), 'ag-mcp-policy-'))
t.teardown(() => rmSync(outsideGit, { recursive: true, force: true }))
const everyProcess: McpProcess[] = []

/** Every request gets an AGWP 404, so callers see a well-formed upstream error. */
function notFound(_req: IncomingMessage, res: ServerResponse): void {
  res.writeHead(404, { 'content-type': 'application/json' })
  res.end(JSON.stringify({ error: { code: 'not_found', message: 'nothing here', details: {} } }))
}
const recordingUpstream = (answer: (req: IncomingMessage, res: ServerResponse) => void = notFound) => recorder(answer)

/** Arguments that satisfy a tool's input schema, built from its required properties. */
function sample(schema: JsonSchema): unknown {
  if (Array.isArray(schema['enum'])) return (schema['enum'] as unknown[])[0]
  switch (schema['type']) {
    case 'object': {
      const props = (schema['properties'] ?? {}) as Record<string, JsonSchema>
      return Object.fromEntries(((schema['required'] ?? []) as string[]).map((k) => [k, sample(props[k] ?? {})]))
    }
    case 'array':
      return [sample((schema['items'] ?? { type: 'string' }) as JsonSchema)]
    case 'integer':
    case 'number':
      return typeof schema['minimum'] === 'number' ? schema['minimum'] : 1
    case 'boolean':
      return true
    default:
      return 'src/a.txt'
  }
}

function tokenFile(dir: string): string {
  const f = join(dir, 'token')
  writeFileSync(f, `${TOKEN}\n`)
  chmodSync(f, 0o600)
  return f
}

async function call(p: McpProcess, name: string, args: unknown) {
  const r = await p.request('tools/call', { name, arguments: args })
  const text = ((r.result?.['content'] as { text: string }[] | undefined) ?? []).map((c) => c.text).join('\n')
  return { isError: r.result?.['isError'] === true, text, error: r.error }
}

t.test('allow-lists × every tool: a disallowed tool makes zero upstream requests', async (t) => {
  const dir = t.testdir({})
  const file = tokenFile(dir)
  // Allow-lists of the selectable groups: none, all, and every one that differs from none or
  // all by one group (so each group is refused beside every other one allowed, and allowed
  // beside every other one refused), plus a seeded sample of the rest. Enumerating all 2^n
  // subsets, each with and without --enable-integrate, cost 64 processes and a sixth of the
  // suite; the rule under test is per group, so the sample finds what that found.
  // POLICY_SEED=n replays a run's sample.
  const seed = Number(process.env['POLICY_SEED'] ?? Math.floor(Math.random() * 2 ** 31))
  const masks = new Set<number>([0, (1 << selectable.length) - 1])
  for (let i = 0; i < selectable.length; i++) {
    masks.add(1 << i)
    masks.add(((1 << selectable.length) - 1) ^ (1 << i))
  }
  let state = seed
  const random = (): number => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0 // a small LCG: reproducible from the seed
    return state / 2 ** 32
  }
  for (let extra = 0; extra < 4; ) {
    const mask = Math.floor(random() * (1 << selectable.length))
    if (!masks.has(mask)) {
      masks.add(mask)
      extra++
    }
  }
  // --enable-integrate alternates over them, and none and all come both with and without it.
  const full = (1 << selectable.length) - 1
  const chosen = [...masks].map((mask, i) => ({ mask, integrate: i % 2 === 1 }))
  for (const mask of [0, full]) chosen.push({ mask, integrate: !chosen.find((c) => c.mask === mask)?.integrate })
  const lists = chosen.map(({ mask, integrate }) => {
    const plain = selectable.filter((_, i) => mask & (1 << i))
    return { integrate, subset: (plain.length + (integrate ? 1 : 0)) % 2 === 1 ? [...plain, ...LOCAL] : plain }
  })
  t.comment(`allow-lists sampled with POLICY_SEED=${seed}`)
  let refusals = 0
  // A few processes at once, each worker with its own recording upstream (so a request is
  // attributed to the process that made it): the wall time stays within the file's timeout
  // on a loaded machine.
  const WORKERS = 4
  const worker = async () => {
    const up = await recordingUpstream()
    try {
      for (let next = lists.shift(); next; next = lists.shift()) {
        const { subset, integrate } = next
        const args = [
          '--upstream',
          up.url,
          '--token-file',
          file,
          '--allow',
          subset.length ? subset.join(',') : 'read',
          '--rate-limit',
          '1000/s',
        ]
        // No group but the always-on core (an empty --allow is refused at start-up).
        if (subset.length === 0) args.splice(args.indexOf('--allow'), 2, '--allow', 'core')
        if (integrate) args.push('--enable-integrate')
        const p = startMcp(t, { args, cwd: outsideGit })
        everyProcess.push(p)
        const enabled = new Set(['core', ...subset, ...(integrate ? ['integrate'] : [])])
        // Names an enabled tool is exposed under instead (its altName: continuity's task_list, diff).
        const taken = new Set(tools.filter((x) => x.tool.altName && enabled.has(x.group)).map((x) => x.tool.altName))
        for (const { tool, group } of tools) {
          // An enabled local tool has no root here (each call would retry its start-up): nothing to learn.
          if (LOCAL.includes(group) && enabled.has(group)) continue
          if (taken.has(tool.name) && !enabled.has(group)) continue
          const before = up.requests.length
          const r = await call(p, tool.name, sample(tool.input))
          if (enabled.has(group)) continue
          refusals++
          if (!r.isError || up.requests.length !== before || !r.text.includes(`"${group}" group`)) {
            t.fail(
              `${tool.name} with --allow ${subset.join(',')}${integrate ? ' --enable-integrate' : ''}: ${r.text}; ${up.requests.length - before} request(s)`,
            )
          }
        }
        p.assertValid(t)
        t.equal((await p.close()).code, 0)
      }
    } finally {
      await up.close()
    }
  }
  const total = lists.length
  await Promise.all(Array.from({ length: WORKERS }, worker))
  t.ok(refusals > 200, `${refusals} refusals checked across ${total} allow-lists (POLICY_SEED=${seed})`)
})

t.test('--repo, --write-path, path safety and --require-lease refuse before any write leaves', async (t) => {
  const up = await recordingUpstream()
  t.teardown(() => up.close())
  const file = tokenFile(t.testdir({}))
  const p = startMcp(t, {
    args: ['--upstream', up.url, '--token-file', file, '--repo', 'team-*', '--write-path', 'src/**', '--require-lease'],
  })
  everyProcess.push(p)
  const writes = () => up.requests.filter((r) => r.method !== 'GET')
  const cases: [string, Record<string, unknown>, RegExp][] = [
    ['log', { repo: 'other' }, /refused by --repo/],
    ['workspace_create', { repo: 'secret-repo' }, /refused by --repo/],
    [
      'file_write',
      { workspace: 'ws-1', path: 'src/a.ts', content: 'x', lease_id: 'l' },
      /refused by --repo: this server may only touch repositories matching team-\*; pass repo/,
    ],
    ['proposal_withdraw', { proposal: 'pr-1' }, /refused by --repo: .*pass repo/],
    [
      'file_write',
      { repo: 'other', workspace: 'ws-1', path: 'src/a.ts', content: 'x', lease_id: 'l' },
      /refused by --repo/,
    ],
    [
      'file_write',
      { repo: 'team-a', workspace: 'ws-1', path: 'etc/passwd', content: 'x', lease_id: 'l' },
      /refused by --write-path/,
    ],
    [
      'file_write',
      { repo: 'team-a', workspace: 'ws-1', path: 'src/.env', content: 'x', lease_id: 'l' },
      /refused by --write-path/,
    ],
    [
      'file_write',
      { repo: 'team-a', workspace: 'ws-1', path: '../../x', content: 'x', lease_id: 'l' },
      /refused by path safety/,
    ],
    [
      'file_delete',
      { repo: 'team-a', workspace: 'ws-1', path: '.git/config', lease_id: 'l' },
      /refused by path safety/,
    ],
    [
      'file_move',
      { repo: 'team-a', workspace: 'ws-1', from: 'src/a', to: '/etc/x', lease_id: 'l' },
      /refused by path safety/,
    ],
    [
      'file_write',
      { repo: 'team-a', workspace: 'ws-1', path: 'src/a.ts', content: 'x' },
      /refused by --require-lease: writes need a lease/,
    ],
  ]
  for (const [name, args, re] of cases) {
    const r = await call(p, name, args)
    t.equal(r.isError, true, name)
    t.match(r.text, re, `${name} ${JSON.stringify(args)}`)
  }
  t.equal(up.requests.length, 0, 'nothing at all was sent for these refusals')
  // A lease the upstream does not confirm: the plugin may look (GET), but nothing is written.
  const r = await call(p, 'file_write', {
    repo: 'team-a',
    workspace: 'ws-1',
    path: 'src/a.ts',
    content: 'x',
    lease_id: 'lease-x',
    run_id: 'run-1',
  })
  t.equal(r.isError, true)
  t.match(r.text, /--require-lease/)
  t.same(writes(), [], 'no write request')
  t.ok(
    up.requests.every((q) => q.headers['agwp-repo'] === 'team-a'),
    'the lease lookup ran in the named repository (AGWP-Repo)',
  )
  p.assertValid(t)
  await p.close()
})

t.test('the token: sent as Bearer to the upstream, never in any byte on stdout or stderr', async (t) => {
  const up = await recordingUpstream((req, res) => {
    // Echo the credential back in an error, as a careless upstream might.
    res.writeHead(403, { 'content-type': 'application/json' })
    res.end(
      JSON.stringify({
        error: {
          code: 'forbidden',
          message: `token ${req.headers.authorization ?? ''} (${encodeURIComponent(TOKEN)}, ${Buffer.from(TOKEN).toString('base64')}) lacks scope`,
          details: { token: TOKEN },
        },
      }),
    )
  })
  t.teardown(() => up.close())
  const file = tokenFile(t.testdir({}))
  const p = startMcp(t, { args: ['--upstream', up.url, '--token-file', file, '--log-level', 'debug'] })
  everyProcess.push(p)
  const r = await call(p, 'log', { repo: 'demo' })
  t.equal(r.isError, true)
  t.match(r.text, /403 forbidden/)
  t.equal(up.requests[0]?.headers.authorization, `Bearer ${TOKEN}`)
  await call(p, 'server_info', {})
  const cfg = startMcp(t, { args: ['--upstream', up.url, '--token-file', file, '--print-config'] })
  everyProcess.push(cfg)
  await cfg.exited
  await p.close()
})

t.test('no process of this file wrote the token, in any form, to stdout or stderr', async (t) => {
  const forms = [
    TOKEN,
    encodeURIComponent(TOKEN),
    Buffer.from(TOKEN).toString('base64').slice(0, 40),
    Buffer.from(TOKEN).toString('base64url').slice(0, 40),
  ]
  t.ok(everyProcess.length > 15)
  for (const p of everyProcess) {
    await p.exited
    const out = p.lines.join('\n') + p.stderr
    for (const f of forms) if (out.includes(f)) t.fail(`token form ${f.slice(0, 12)}… leaked:\n${out.slice(0, 500)}`)
  }
  t.pass(`${everyProcess.length} processes checked`)
})
