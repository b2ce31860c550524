// The same conversation in each of the four revisions, against the bundled binary: every
// message it writes is validated against that revision's schema (by the harness), and the
// per-revision shapes are asserted.
import t from 'tap'
import { META_SERVER_INFO, openSession } from '../helpers/mcp-process.ts'
import type { Response, Session } from '../helpers/mcp-process.ts'
import { REVISIONS } from '../helpers/mcp-schema.ts'

const ALL = ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26']
const UNSUPPORTED = [
  'logging/setLevel',
  'resources/subscribe',
  'resources/unsubscribe',
  'subscriptions/listen',
  'completion/complete',
  'tasks/list',
  'tasks/get',
  'tasks/cancel',
  'no/such/method',
]
const IDS: (string | number)[] = [
  0,
  -1,
  1,
  -9007199254740991,
  9007199254740991,
  123456789,
  '',
  '0',
  '1',
  'é',
  '🙂 \u2028 "quoted" \\ back',
  'a'.repeat(200),
]

/** A test name must stay on one TAP line: escape everything outside printable ASCII. */
function ascii(v: unknown): string {
  return JSON.stringify(v)
    .slice(0, 40)
    .replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

function text(r: Response): string {
  const c = r.result?.['content'] as { type: string; text: string }[] | undefined
  return c?.map((x) => x.text).join('\n') ?? ''
}

/** What every result of this era must (or must not) carry; returns the violations. */
function envelopeProblems(s: Session, r: Response, what: string): string[] {
  if (!r.result) return [`${what}: no result (got ${JSON.stringify(r.error ?? null)})`]
  const out: string[] = []
  const info = (r.result['_meta'] as Record<string, unknown> | undefined)?.[META_SERVER_INFO] as
    | Record<string, unknown>
    | undefined
  if (s.modern) {
    if (r.result['resultType'] !== 'complete')
      out.push(`${what}: resultType is ${JSON.stringify(r.result['resultType'])}`)
    if (info?.['name'] !== 'ag-mcp' || typeof info['version'] !== 'string')
      out.push(`${what}: serverInfo missing from _meta`)
  } else {
    if ('resultType' in r.result) out.push(`${what}: resultType before 2026-07-28`)
    if (info !== undefined) out.push(`${what}: serverInfo _meta before 2026-07-28`)
  }
  return out
}

for (const revision of REVISIONS) {
  t.test(`revision ${revision}`, async (t) => {
    const s = await openSession(t, revision)
    const { p } = s

    if (!s.modern) {
      t.equal(s.init?.result?.['protocolVersion'], revision, 'initialize echoes the requested revision')
      t.same(
        s.init?.result?.['capabilities'],
        { tools: {}, resources: {}, prompts: {} },
        'no listChanged, no subscribe, no logging',
      )
      const info = s.init?.result?.['serverInfo'] as Record<string, unknown>
      t.equal(info['name'], 'ag-mcp')
      if (revision === '2025-03-26') t.notOk('title' in info, 'no Implementation.title in 2025-03-26')
      else t.type(info['title'], 'string')
      t.type(s.init?.result?.['instructions'], 'string')
    }

    const ping = await s.req('ping')
    t.same(envelopeProblems(s, ping, 'ping'), [], 'envelope of ping')
    t.same(
      Object.keys(ping.result ?? {}).filter((k) => k !== 'resultType' && k !== '_meta'),
      [],
      'ping: an empty result',
    )

    const tools = await s.req('tools/list')
    t.same(envelopeProblems(s, tools, 'tools/list'), [], 'envelope of tools/list')
    const list = tools.result?.['tools'] as Record<string, unknown>[]
    t.ok(
      list.some((x) => x['name'] === 'server_info'),
      'server_info is listed',
    )
    for (const tool of list) {
      if (revision === '2025-03-26') {
        t.notOk('title' in tool, `${String(tool['name'])}: no title in 2025-03-26`)
        t.notOk('outputSchema' in tool, `${String(tool['name'])}: no outputSchema in 2025-03-26`)
        t.type(
          (tool['annotations'] as Record<string, unknown>)['title'],
          'string',
          'the display name moves to annotations.title',
        )
      } else {
        t.type(tool['title'], 'string', `${String(tool['name'])}: title`)
        t.match(tool['outputSchema'], { type: 'object' }, `${String(tool['name'])}: outputSchema`)
      }
    }

    for (const method of ['prompts/list', 'resources/list', 'resources/templates/list']) {
      const r = await s.req(method)
      t.same(envelopeProblems(s, r, method), [], `envelope of ${method}`)
    }
    for (const r of [
      tools,
      await s.req('prompts/list'),
      await s.req('resources/list'),
      await s.req('resources/templates/list'),
    ]) {
      if (s.modern) {
        t.type(r.result?.['ttlMs'], 'number', 'ttlMs on a list')
        t.ok(
          Number.isInteger(r.result?.['ttlMs']) && (r.result?.['ttlMs'] as number) >= 0,
          'ttlMs a non-negative integer',
        )
        t.ok(['private', 'public'].includes(r.result?.['cacheScope'] as string), 'cacheScope on a list')
      } else {
        t.notOk(r.result && 'ttlMs' in r.result, 'no ttlMs before 2026-07-28')
        t.notOk(r.result && 'cacheScope' in r.result, 'no cacheScope before 2026-07-28')
      }
    }

    // Every listed prompt can be fetched with its required arguments, and refused without them.
    const prompts = ((await s.req('prompts/list')).result?.['prompts'] ?? []) as {
      name: string
      arguments?: { name: string; required?: boolean }[]
    }[]
    for (const pr of prompts) {
      const required = (pr.arguments ?? []).filter((a) => a.required)
      const args = Object.fromEntries(required.map((a) => [a.name, 'x']))
      const got = await s.req('prompts/get', { name: pr.name, arguments: args })
      t.same(envelopeProblems(s, got, 'prompts/get'), [], `envelope of prompts/get ${pr.name}`)
      t.ok(
        Array.isArray(got.result?.['messages']) && (got.result!['messages'] as unknown[]).length > 0,
        `prompts/get ${pr.name}: messages`,
      )
      if (required.length > 0)
        t.equal(
          (await s.req('prompts/get', { name: pr.name, arguments: {} })).error?.code,
          -32602,
          `prompts/get ${pr.name} without required arguments: -32602`,
        )
    }

    const call = await s.req('tools/call', { name: 'server_info', arguments: {} })
    t.same(envelopeProblems(s, call, 'tools/call'), [], 'envelope of tools/call')
    t.notOk(call.result?.['isError'], 'server_info succeeds')
    t.match(text(call), /ag-mcp/, 'a readable summary')
    if (revision === '2025-03-26') {
      t.notOk(call.result && 'structuredContent' in call.result, 'no structuredContent in 2025-03-26')
    } else {
      const sc = call.result?.['structuredContent'] as Record<string, unknown>
      t.same([...(sc['revisions'] as string[])].sort(), [...ALL].sort(), 'structuredContent: the revisions served')
      t.ok((sc['groups'] as string[]).includes('core'), 'structuredContent: the core group')
    }
    const noArgs = await s.req('tools/call', { name: 'server_info' })
    t.notOk(noArgs.result?.['isError'], 'arguments may be omitted when nothing is required')

    const bad = await s.req('tools/call', { name: 'server_info', arguments: { x: 1 } })
    t.same(
      envelopeProblems(s, bad, 'tools/call with invalid arguments'),
      [],
      'envelope of tools/call with invalid arguments',
    )
    t.equal(bad.result?.['isError'], true, 'schema-invalid arguments: an isError result, not a protocol error')
    t.match(text(bad), /"x"/, 'the message names the offending field')
    const notObject = await s.req('tools/call', { name: 'server_info', arguments: 'nope' })
    t.equal(notObject.result?.['isError'], true, 'non-object arguments: isError')

    const unknown = await s.req('tools/call', { name: 'no_such_tool', arguments: {} })
    t.equal(unknown.error?.code, -32602, 'unknown tool: -32602')
    t.match(unknown.error?.message, /no_such_tool/)
    t.equal((await s.req('tools/call', { arguments: {} })).error?.code, -32602, 'tools/call without name: -32602')
    t.equal((await s.req('tools/call', { name: 7 })).error?.code, -32602, 'tools/call with a non-string name: -32602')
    t.equal(
      (await s.req('resources/read', { uri: 'agentgit://nothing/here' })).error?.code,
      -32602,
      'unknown resource: -32602',
    )
    t.equal((await s.req('resources/read', {})).error?.code, -32602, 'resources/read without uri: -32602')
    t.equal((await s.req('prompts/get', { name: 'no_such_prompt' })).error?.code, -32602, 'unknown prompt: -32602')
    t.equal(
      (await s.req('prompts/get', { name: 'x', arguments: { a: 1 } })).error?.code,
      -32602,
      'non-string prompt arguments: -32602',
    )

    for (const method of UNSUPPORTED) {
      const r = await s.req(method, method === 'logging/setLevel' ? { level: 'debug' } : {})
      t.equal(r.error?.code, -32601, `${method}: -32601`)
    }
    if (!s.modern)
      t.equal((await s.req('server/discover')).error?.code, -32601, 'server/discover is not a legacy method')

    // Ids are echoed exactly: type and value, including 0, negatives, large safe integers,
    // the empty string, a string that looks like a number, and non-ASCII strings.
    const echoes = await Promise.all(IDS.map((id) => s.req('ping', {}, id)))
    for (const [i, r] of echoes.entries()) t.equal(r.id, IDS[i], `id ${ascii(IDS[i])} echoed exactly`)
    const rawIdLines = p.lines.filter(
      (l) => l.includes('"id":9007199254740991,') || l.includes('"id":-9007199254740991,'),
    )
    t.equal(rawIdLines.length, 2, 'large integer ids are written as integers, not strings or floats')

    // Notifications are never answered, whatever they name.
    const before = p.lines.length
    p.notify('notifications/initialized', {}, s.modern ? 'modern' : 'legacy')
    p.notify('notifications/cancelled', { requestId: 424242 }, s.modern ? 'modern' : 'legacy')
    p.notify('ping', {}, s.modern ? 'modern' : 'legacy')
    p.notify('tools/call', { name: 'server_info', arguments: {} }, s.modern ? 'modern' : 'legacy')
    p.notify('no/such/notification', {}, s.modern ? 'modern' : 'legacy')
    p.send({ jsonrpc: '2.0', method: 'tools/list' })
    await s.req('ping', {}, 'after-notifications')
    t.equal(p.lines.length, before + 1, 'only the ping after the notifications was answered')

    t.equal((await p.close()).code, 0, 'exit 0 at EOF')
    t.notOk(
      p.lines.some((l) => l.includes('notifications/message')),
      'never a notifications/message',
    )
    t.equal(p.responses.length, p.lines.length, 'one response per line')
    p.assertValid(t)
  })
}
