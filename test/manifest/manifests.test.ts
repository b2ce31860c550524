// One walk over every manifest and tool: the rules a host relies on, checked for all tools at
// once so a new manifest cannot forget one.
import t from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { spawnSync } from 'node:child_process'
import { Ajv } from 'ajv'
import { checkManifests, NAME_PATTERN } from '../../core/src/manifest/check.ts'
import { Registry } from '../../core/src/manifest/registry.ts'
import type { GroupManifest } from '../../core/src/manifest/types.ts'
import { manifests } from '../../generated/manifests.js'

const dir = new URL('../../manifests/', import.meta.url)
const schema = JSON.parse(readFileSync(new URL('manifest.schema.json', dir), 'utf8')) as object
const files = readdirSync(dir).filter((f) => f.endsWith('.json') && f !== 'manifest.schema.json')
const raw = files.map((f) => JSON.parse(readFileSync(new URL(f, dir), 'utf8')) as GroupManifest)

t.test('every manifest validates against manifest.schema.json', async (t) => {
  const validate = new Ajv({ allErrors: true, strict: false }).compile(schema)
  for (const [i, m] of raw.entries()) t.ok(validate(m), `${files[i]}: ${JSON.stringify(validate.errors)}`)
})

t.test('the schema itself refuses what it must', async (t) => {
  const validate = new Ajv({ allErrors: true, strict: false }).compile(schema)
  const base = raw.find((m) => m.group === 'core') as GroupManifest
  const tool = base.tools[0]
  t.ok(tool)
  const bad = (patch: object) => ({ ...base, tools: [{ ...tool, ...patch }] })
  t.notOk(validate(bad({ name: 'Bad-Name' })), 'bad tool name')
  t.notOk(validate(bad({ annotations: { readOnlyHint: true } })), 'annotations not all explicit')
  t.notOk(validate(bad({ input: { type: 'array', properties: {} } })), 'root not an object schema')
  t.notOk(validate(bad({ dataKind: 'Has Spaces' })), 'bad data kind')
  t.notOk(validate({ ...base, access: 'sometimes' }), 'unknown access')
})

t.test('every tool: unique name, a group, explicit annotations, host-friendly schemas', async (t) => {
  const names = new Set<string>()
  for (const m of manifests) {
    t.match(m.group, NAME_PATTERN)
    for (const tool of m.tools) {
      t.notOk(names.has(tool.name), `${tool.name} is unique`)
      names.add(tool.name)
      t.match(tool.name, NAME_PATTERN)
      for (const hint of ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'] as const) {
        t.type(tool.annotations[hint], 'boolean', `${tool.name}.${hint} is explicit`)
      }
      for (const s of [tool.input, tool.output]) {
        t.equal(s.type, 'object')
        t.notOk(JSON.stringify(s).includes('"$ref"'), `${tool.name} has no $ref`)
        for (const k of ['oneOf', 'anyOf', 'allOf']) t.notOk(k in s, `${tool.name} has no root ${k}`)
      }
      t.ok(tool.description.length >= 20, `${tool.name} has a real description`)
    }
  }
})

t.test('checkManifests refuses each class of mistake', async (t) => {
  const core = raw.find((m) => m.group === 'core') as GroupManifest
  const tool = core.tools[0]
  if (!tool) throw new Error('core has no tool')
  const plugins = { info: { handlers: ['server_info'] } }
  t.same(checkManifests([core], plugins), [], 'the real manifest passes')
  const cases: [string, GroupManifest[], typeof plugins | Record<string, { handlers: string[] }>, RegExp][] = [
    ['duplicate tool', [core, { ...core, group: 'other' }], plugins, /already used/],
    ['bad name', [{ ...core, tools: [{ ...tool, name: 'Bad' }] }], { info: { handlers: ['Bad'] } }, /must match/],
    [
      'root not object',
      [{ ...core, tools: [{ ...tool, input: { ...tool.input, type: 'array' as 'object' } }] }],
      plugins,
      /root must be type "object"/,
    ],
    [
      '$ref',
      [{ ...core, tools: [{ ...tool, input: { type: 'object', properties: { a: { $ref: '#/x' } } } }] }],
      plugins,
      /\$ref/,
    ],
    [
      'root anyOf',
      [{ ...core, tools: [{ ...tool, input: { type: 'object', properties: {}, anyOf: [] } }] }],
      plugins,
      /anyOf/,
    ],
    [
      'missing annotation',
      [{ ...core, tools: [{ ...tool, annotations: { readOnlyHint: true } as never }] }],
      plugins,
      /destructiveHint must be set/,
    ],
    ['unknown plugin', [{ ...core, plugin: 'nope' }], plugins, /plugin "nope" does not exist/],
    [
      'handler without tool',
      [core],
      { info: { handlers: ['server_info', 'orphan'] } },
      /handler "orphan" serves no tool/,
    ],
    ['tool without handler', [core], { info: { handlers: [] } }, /no handler/],
    [
      'policy arg not an input',
      [{ ...core, tools: [{ ...tool, repoArg: 'repo' }] }],
      plugins,
      /"repo" is named for policy/,
    ],
    [
      'peer tool without a required textField',
      [{ ...core, peer: { name: 'peer', failures: 'result' } }],
      plugins,
      /a tool of a peer group needs a textField that its output requires/,
    ],
    [
      'resultMeta of no output field',
      [{ ...core, tools: [{ ...tool, resultMeta: { 'io.x/warnings': 'nope' } }] }],
      plugins,
      /resultMeta "io\.x\/warnings" names "nope", which is not an output property/,
    ],
    [
      'one peer, two list ttls',
      [
        { ...core, tools: [], peer: { name: 'p', listTtlMs: 0, failures: 'result' } },
        { ...core, group: 'other', tools: [], peer: { name: 'p', listTtlMs: 5, failures: 'result' } },
      ],
      { info: { handlers: [] } },
      /peer "p" has another listTtlMs/,
    ],
  ]
  for (const [label, ms, p, re] of cases) t.match(checkManifests(ms, p).join('\n'), re, label)
})

t.test('docs/tools.md is what the build would write', async (t) => {
  const r = spawnSync(process.execPath, ['build.mjs', '--check-docs'], {
    cwd: new URL('../../', import.meta.url),
    encoding: 'utf8',
  })
  t.equal(r.status, 0, `node build.mjs --check-docs: ${r.stderr}`)
})

t.test('asks: an answer needs the ask, one group answers each, and it settles nothing', async (t) => {
  const core = raw.find((m) => m.group === 'core') as GroupManifest
  const tool = core.tools[0]
  if (!tool) throw new Error('core has no tool')
  const ask = {
    name: 'notes',
    input: { type: 'object' as const, properties: { run: { type: 'string' } } },
    value: { type: 'object' as const, properties: {} },
    description: 'd',
  }
  const asking: GroupManifest = { ...core, tools: [{ ...tool, asks: [ask] }] }
  const answering = (group: string, extra = {}): GroupManifest => ({
    group,
    plugin: 'x',
    description: 'answers',
    access: 'opt-in',
    tools: [],
    attachments: [{ name: 'notes', tool: tool.name, description: 'd', ...extra }],
  })
  const plugins = { info: { handlers: [tool.name] }, x: { handlers: [], attachments: ['notes'] } }
  t.same(checkManifests([asking, answering('a')], plugins), [], 'an ask and its one answer pass')
  t.match(checkManifests([core, answering('a')], plugins).join('\n'), /has no ask "notes"/)
  t.match(checkManifests([asking, answering('a'), answering('b')], plugins).join('\n'), /already answered by group "a"/)
  t.match(
    checkManifests([asking, answering('a', { result: { id: 'name' } })], plugins).join('\n'),
    /an answer to an ask has no result to settle/,
  )
  t.match(
    checkManifests([{ ...core, tools: [{ ...tool, asks: [ask, ask] }] }], plugins).join('\n'),
    /ask notes: declared twice/,
  )
})

t.test('altName: only another group tool name, and each at most once', async (t) => {
  const core = raw.find((m) => m.group === 'core') as GroupManifest
  const tool = core.tools[0]
  if (!tool) throw new Error('core has no tool')
  const other = (group: string, altName: string, name = `${group}_tool`): GroupManifest => ({
    ...core,
    group,
    tools: [{ ...tool, name, altName }],
  })
  const plugins = { info: { handlers: [tool.name, 'a_tool', 'b_tool'] } }
  t.same(
    checkManifests([core, other('a', tool.name)], { info: { handlers: [tool.name, 'a_tool'] } }),
    [],
    "another group's tool name passes",
  )
  t.match(checkManifests([core, other('a', 'free_name')], plugins).join('\n'), /is no tool's name/)
  t.match(
    checkManifests([{ ...core, tools: [tool, { ...tool, name: 'a_tool', altName: tool.name }] }], plugins).join('\n'),
    /is a tool of the same group/,
  )
  t.match(
    checkManifests([core, other('a', tool.name), other('b', tool.name)], plugins).join('\n'),
    /is another tool's altName too/,
  )
})

t.test('for every set of enabled groups, exposed names are unique and call the tool listed', async (t) => {
  const registry = new Registry(manifests)
  const names = [...registry.groups.keys()]
  let sets = 0
  for (let mask = 0; mask < 1 << names.length; mask++) {
    const enabled = new Set(names.filter((_, i) => mask & (1 << i)))
    const listed = registry.tools(enabled).map((x) => ({ tool: x, as: registry.exposedName(x.name, enabled) }))
    const seen = new Set(listed.map((x) => x.as))
    if (seen.size !== listed.length) t.fail(`duplicate names with ${[...enabled].join(',')}`)
    for (const x of listed)
      if (registry.resolve(x.as, enabled) !== x.tool)
        t.fail(`${x.as} does not call ${x.tool.name} with ${[...enabled]}`)
    sets++
  }
  t.equal(sets, 1 << names.length, 'every subset checked')
  const only = new Set(['core', 'continuity', 'bundles'])
  t.equal(registry.exposedName('passport_list', only), 'task_list', "Agentpack's name without the read group")
  t.equal(registry.exposedName('checkpoint_diff', only), 'diff')
  t.equal(registry.exposedName('passport_list', new Set([...only, 'read'])), 'passport_list')
  t.equal(registry.resolve('task_list', new Set([...only, 'read']))?.group, 'read')
})
