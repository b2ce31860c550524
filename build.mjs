#!/usr/bin/env node
// The build: manifests and plugins → checks, types, precompiled validators, the plugin list,
// docs/tools.md, flags.md and errors.md; then esbuild bundles bin/ag-mcp.ts and bin/ag-server.ts into
// one file each under dist/.
//   node build.mjs              build everything
//   node build.mjs --check-docs exit 1 if docs/tools.md, flags.md or errors.md differs from what the build writes
//   node build.mjs --extra DIR  a test bundle: DIR/plugins/*/ and DIR/manifests/*.json join the
//                               product's, built into generated/extra/ (ag-mcp.mjs included).
//                               Nothing of it reaches dist/: the product never bundles a fixture.
import { chmod, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { deflateRawSync } from 'node:zlib'
import { createHash } from 'node:crypto'
import * as esbuild from 'esbuild'
import { Ajv } from 'ajv'
import standaloneModule from 'ajv/dist/standalone/index.js'
import { compile as toTypeScript } from 'json-schema-to-typescript'

// ajv's standalone module is CommonJS whose module.exports is the function: Node hands it over as
// the default import, while its typings describe an ES module with a default export.
const standaloneCode = /** @type {typeof standaloneModule.default} */ (/** @type {unknown} */ (standaloneModule))

/** The message of a thrown value. @param {unknown} e */
const messageOf = (e) => (e instanceof Error ? e.message : String(e))

/** The one output of an in-memory esbuild build. @param {{ outputFiles?: { text: string }[] | undefined }} out */
const outputText = (out) => {
  const file = out.outputFiles?.[0]
  if (!file) throw new Error('esbuild wrote no output')
  return file.text
}

/** The one output's metadata of a build with `metafile: true`. @param {import('esbuild').BuildResult} result */
const onlyOutput = (result) => {
  const o = Object.values(result.metafile?.outputs ?? {})[0]
  if (!o) throw new Error('esbuild reported no output')
  return o
}

const root = dirname(fileURLToPath(import.meta.url))
const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8'))
const checkDocsOnly = process.argv.includes('--check-docs')
const extraAt = process.argv.indexOf('--extra')
const extraDir = extraAt === -1 ? undefined : resolve(root, process.argv[extraAt + 1] ?? '')
const productGen = join(root, 'generated')
const gen = extraDir ? join(productGen, 'extra') : productGen

/** @param {string[]} lines @returns {never} */
function fail(lines) {
  console.error(`build failed:\n  ${lines.join('\n  ')}`)
  process.exit(1)
}

if (extraDir && !existsSync(join(extraDir, 'plugins'))) fail([`--extra ${extraDir}: it has no plugins/ folder`])

/** Bundles a TS module for use by this script itself, and imports it. */
async function importTs(contents, name) {
  const out = await esbuild.build({
    stdin: { contents, resolveDir: root, loader: 'ts', sourcefile: `${name}.ts` },
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    write: false,
    packages: 'external',
    logLevel: 'silent',
  })
  const file = join(gen, 'tmp', `${name}.mjs`)
  await mkdir(dirname(file), { recursive: true })
  await writeFile(file, outputText(out))
  return import(`${pathToFileURL(file).href}?t=${Date.now()}`)
}

/** A module specifier for `file`, relative to the folder `from`. */
const specifier = (from, file) => {
  const r = relative(from, file).split('\\').join('/')
  return r.startsWith('.') ? r : `./${r}`
}

// 1. Manifests, validated against their schema: manifests/ and, for a test bundle, DIR/manifests/.
const schema = JSON.parse(await readFile(join(root, 'manifests', 'manifest.schema.json'), 'utf8'))
const schemaAjv = new Ajv({ allErrors: true, strict: false })
const validateManifest = schemaAjv.compile(schema)
/** @typedef {import('./core/src/manifest/types.ts').GroupManifest} GroupManifest */
/** @type {GroupManifest[]} */
const manifests = []
const extraGroups = new Set()
for (const dir of [join(root, 'manifests'), ...(extraDir ? [join(extraDir, 'manifests')] : [])]) {
  if (!existsSync(dir)) continue
  for (const file of (await readdir(dir)).filter((f) => f.endsWith('.json') && f !== 'manifest.schema.json').sort()) {
    /** @type {GroupManifest & { $schema?: string }} */
    const data = JSON.parse(await readFile(join(dir, file), 'utf8'))
    const where = relative(root, join(dir, file))
    if (!validateManifest(data))
      fail((validateManifest.errors ?? []).map((e) => `${where}: ${e.instancePath || '/'} ${e.message}`))
    delete data.$schema
    manifests.push(data)
    if (dir !== join(root, 'manifests')) extraGroups.add(data.group)
  }
}
// Deterministic order: always-on groups first, then default, opt-in, flag-only; by name within.
const accessOrder = ['always', 'default', 'opt-in', 'flag-only']
manifests.sort(
  (a, b) => accessOrder.indexOf(a.access) - accessOrder.indexOf(b.access) || a.group.localeCompare(b.group),
)

const support = await importTs(
  `export * from './core/src/manifest/check.ts'; export * from './core/src/manifest/docs.ts'
   export * from './core/src/config/flags.ts'; export * from './core/src/config/flags-doc.ts'
   export * from './core/src/errors-doc.ts'`,
  'build-support',
)

// 2. Plugins: one folder each under plugins/ (and DIR/plugins/), its index.ts default-exporting
// definePlugin({...}). What the core needs before loading one (its options) is read here, once.
const OPTION_TYPES = { string: 'string', number: 'number', boolean: 'boolean', list: 'object' }
const ROLES = ['upstream-url', 'credential-file', 'credential-env', 'root']
const optionAjv = new Ajv({ allErrors: true, strict: true, code: { source: true, esm: true, optimize: true } })
const optionExports = {}
const plugins = [] // { name, dir, plugin, validators: { option: exportName } }
const catalog = {}
const problems = []
for (const base of [join(root, 'plugins'), ...(extraDir ? [join(extraDir, 'plugins')] : [])]) {
  for (const name of (await readdir(base)).sort()) {
    const dir = join(base, name)
    if (!existsSync(join(dir, 'index.ts'))) continue
    const at = `${relative(root, dir)}/index.ts`
    if (catalog[name]) fail([`${at}: a plugin named "${name}" exists twice`])
    const mod = await importTs(
      `export { default } from './${specifier(root, join(dir, 'index.ts'))}'`,
      `plugin-${name}`,
    )
    const plugin = mod.default
    if (!plugin || plugin.name !== name || plugin.api !== 1)
      fail([`${at} must default-export definePlugin({ name: "${name}", api: 1, … })`])
    const validators = {}
    for (const [option, spec] of Object.entries(plugin.options ?? {})) {
      const where = `${at}: option "${option}"`
      if (!/^[a-z][a-z0-9-]{0,40}$/.test(option)) problems.push(`${where}: name must match ^[a-z][a-z0-9-]{0,40}$`)
      if (!(spec.type in OPTION_TYPES)) problems.push(`${where}: type must be string, number, boolean or list`)
      if (typeof spec.description !== 'string' || spec.description.length < 10)
        problems.push(`${where}: needs a description (it is shown in --help and docs/flags.md)`)
      if (spec.role !== undefined && (!ROLES.includes(spec.role) || spec.type !== 'string'))
        problems.push(`${where}: role must be one of ${ROLES.join(', ')}, on a string option`)
      if (spec.marker !== undefined && (spec.role !== 'root' || !/^[A-Za-z0-9._-]{1,64}$/.test(spec.marker)))
        problems.push(`${where}: marker is a plain directory name, on a root option only`)
      if (spec.default !== undefined && typeof spec.default !== OPTION_TYPES[spec.type])
        problems.push(`${where}: default is not a ${spec.type}`)
      if (spec.schema !== undefined) {
        const id = `option/${name}/${option}`
        let check
        try {
          check = optionAjv.compile({ ...spec.schema, $id: id })
        } catch (e) {
          problems.push(`${where}: schema does not compile (${messageOf(e)})`)
          continue
        }
        if (spec.default !== undefined && !check(spec.default))
          problems.push(`${where}: default ${JSON.stringify(spec.default)} fails its own schema`)
        const exportName = `option_${name}_${Object.keys(validators).length}`
        optionExports[exportName] = id
        validators[option] = exportName
      }
    }
    for (const role of ROLES) {
      const n = Object.values(plugin.options ?? {}).filter((s) => s.role === role).length
      if (n > 1) problems.push(`${at}: ${n} options have role ${role}; a plugin has at most one`)
    }
    let checkOperation
    if (plugin.operation) {
      let validate
      try {
        validate = schemaAjv.compile(plugin.operation.schema)
      } catch (e) {
        fail([`${at}: operation.schema does not compile (${messageOf(e)})`])
      }
      checkOperation = (op, props) => [
        ...(validate(op)
          ? (plugin.operation.check?.(op, props) ?? [])
          : (validate.errors ?? []).map(
              (e) => `operation${e.instancePath} ${e.message} (the ${name} plugin's operation schema)`,
            )),
      ]
    }
    catalog[name] = {
      handlers: Object.keys(plugin.handlers ?? {}),
      attachments: Object.keys(plugin.attachments ?? {}),
      ...(checkOperation ? { checkOperation } : {}),
    }
    plugins.push({ name, dir, plugin, validators })
  }
}
problems.push(...support.checkManifests(manifests, catalog))
let table
try {
  table = support.flagTable(
    Object.fromEntries(
      plugins.map(({ name, plugin }) => [
        name,
        { optionPrefix: plugin.optionPrefix ?? `${name}-`, options: plugin.options ?? {} },
      ]),
    ),
  )
} catch (e) {
  problems.push(messageOf(e))
}
if (problems.length > 0) fail(problems)

// 3. Docs (committed, so checked rather than silently rewritten in --check-docs mode). Only the
// product's: a test bundle documents nothing.
if (!extraDir) {
  const byName = Object.fromEntries(plugins.map((p) => [p.name, p.plugin]))
  const docs = {
    'tools.md': support.renderToolsDoc(manifests, (plugin, op) => byName[plugin]?.operation?.describe?.(op)),
    'flags.md': support.renderFlagsDoc(table),
    'errors.md': support.renderErrorsDoc(),
  }
  if (checkDocsOnly) {
    const stale = []
    for (const [file, text] of Object.entries(docs)) {
      const path = join(root, 'docs', file)
      if ((existsSync(path) ? await readFile(path, 'utf8') : '') !== text) stale.push(file)
    }
    await rm(join(gen, 'tmp'), { recursive: true, force: true })
    if (stale.length > 0) fail([`docs/${stale.join(', docs/')} out of date: run \`npm run build\` and commit`])
    console.log(`docs/${Object.keys(docs).join(', docs/')} are up to date`)
    process.exit(0)
  }
  await mkdir(join(root, 'docs'), { recursive: true })
  for (const [file, text] of Object.entries(docs)) await writeFile(join(root, 'docs', file), text)
}

// 4. Every output may also say it was truncated or sanitized (the core adds these fields).
// An output schema that admits additional properties already allows them (and the summary
// line explains them), so only closed schemas are extended: tools/list stays small.
for (const m of manifests) {
  for (const t of m.tools) {
    if (t.output.additionalProperties !== false) continue
    t.output = {
      ...t.output,
      properties: {
        ...t.output.properties,
        truncated: { type: 'boolean', description: 'Set when the result was cut to --max-output-bytes.' },
        sanitized: {
          type: 'object',
          description: 'Set when control or hidden characters were removed.',
          properties: { removed: { type: 'integer', minimum: 0 } },
          required: ['removed'],
        },
      },
    }
  }
}

await rm(join(gen, 'types'), { recursive: true, force: true })
await mkdir(join(gen, 'types'), { recursive: true })
const coreFrom = (file) => specifier(gen, join(root, 'core', 'src', file))
// Each group's head (name, plugin, access, description, tool names, attachments) is data; its
// tools, resources and prompts are one JSON string, parsed the first time one of them is read. A
// process parses only the groups it serves: parsing every bundled group cost start-up about a
// millisecond and enough young-generation space to force a scavenge before the first answer.
const BODY = ['tools', 'resources', 'resourceTemplates', 'prompts']
const groupCode = (m) => {
  const head = Object.fromEntries(Object.entries(m).filter(([k]) => !BODY.includes(k)))
  const body = Object.fromEntries(Object.entries(m).filter(([k]) => BODY.includes(k)))
  const names = m.tools.map((t) => t.name)
  const alts = Object.fromEntries(m.tools.filter((t) => t.altName).map((t) => [t.name, t.altName]))
  return `group(${JSON.stringify(head)}, ${JSON.stringify(names)}, ${JSON.stringify(Object.keys(body))}, ${JSON.stringify(JSON.stringify(body))}${Object.keys(alts).length ? `, ${JSON.stringify(alts)}` : ''})`
}
await writeFile(
  join(gen, 'manifests.js'),
  `// Generated by build.mjs. Do not edit.
// A JSON string parses faster than the same object as code, and not at all until it is read.
function group(head, toolNames, parts, body, altNames) {
  let parsed
  const part = (key) => () => (parsed ??= JSON.parse(body))[key]
  const lazy = Object.fromEntries(parts.map((key) => [key, { get: part(key), enumerable: true }]))
  const alts = altNames ? { altNames: { value: altNames } } : {}
  return Object.defineProperties({ ...head }, { ...lazy, toolNames: { value: toolNames }, ...alts })
}
export const manifests = [
${manifests.map((m) => `  ${groupCode(m)},`).join('\n')}
]
`,
)
await writeFile(
  join(gen, 'manifests.d.ts'),
  `// Generated by build.mjs. Do not edit.\nimport type { BundledGroupManifest } from '${coreFrom('manifest/types.ts')}'\nexport declare const manifests: BundledGroupManifest[]\n`,
)

/** ajv standalone code as plain ESM: its runtime helpers come as require(); make them imports. */
function standaloneEsm(instance, exportsMap) {
  const helpers = new Map()
  const code = standaloneCode(instance, exportsMap).replace(
    /require\("(ajv\/dist\/runtime\/[a-z0-9_]+)"\)/g,
    (_, spec) => {
      if (!helpers.has(spec)) helpers.set(spec, `__ajv_rt${helpers.size}`)
      return helpers.get(spec)
    },
  )
  // The helper's function, whichever CommonJS interop the importer gets (Node's default import is
  // module.exports; esbuild's, for a module marked __esModule, is exports.default).
  const imports = [...helpers].map(
    ([spec, id]) =>
      `import * as ${id}_ns from '${spec}.js'\nconst ${id} = { default: typeof ${id}_ns.default === 'function' ? ${id}_ns.default : ${id}_ns.default.default }`,
  )
  return `${imports.join('\n')}\n${code}`
}

/** A plugin's commands without their code: what JSON keeps of each declaration (its `load` goes). */
function commandsInfo(plugin, commands) {
  return Object.fromEntries(
    Object.entries(commands).map(([name, { load, ...info }]) => {
      if (typeof load !== 'function') fail([`plugins/${plugin}: command ${name} has no load()`])
      return [name, info]
    }),
  )
}

// 5. The plugin list (the one place that says which plugins exist): each plugin's options, the
// precompiled checks of those that declare a schema, and a loader. bin/ag-mcp.ts imports it; the
// loader's import() becomes a lazy chunk, so a plugin costs nothing until its first call.
const optionChecks = Object.keys(optionExports).length > 0 ? standaloneEsm(optionAjv, optionExports) : ''
const pluginEntries = plugins.map(({ name, dir, plugin, validators }) => {
  const checks = Object.entries(validators).map(([o, fn]) => `${JSON.stringify(o)}: ${fn}`)
  return [
    `  ${JSON.stringify(name)}: {`,
    `    optionPrefix: ${JSON.stringify(plugin.optionPrefix ?? `${name}-`)},`,
    `    options: ${JSON.stringify(plugin.options ?? {})},`,
    `    validators: { ${checks.join(', ')} },`,
    // Known without loading the code: the core starts such a plugin in the background at start-up.
    ...(typeof plugin.start === 'function' ? ['    starts: true,'] : []),
    // Its commands as data (help, flags) for `ag-mcp <command>`; their code stays in the plugin.
    ...(plugin.commands ? [`    commands: ${JSON.stringify(commandsInfo(name, plugin.commands))},`] : []),
    `    load: () => import(${JSON.stringify(specifier(gen, join(dir, 'index.ts')))}).then((m) => m.default),`,
    '  },',
  ].join('\n')
})
await writeFile(
  join(gen, 'plugins.js'),
  `// Generated by build.mjs from plugins/*/. Do not edit.\n${optionChecks}\nexport const plugins = {\n${pluginEntries.join('\n')}\n}\n`,
)
await writeFile(
  join(gen, 'plugins.d.ts'),
  `// Generated by build.mjs. Do not edit.\nimport type { BundledPlugins } from '${coreFrom('pipeline/plugins.ts')}'\nexport declare const plugins: BundledPlugins\n`,
)

// 6. Types for every tool's input and output (a test bundle: for its own tools only), the tools
// of each plugin (what a plugin's Handlers<…> are typed with), and the AGWP contract.
const pascal = (s) => s.replace(/(^|_)([a-z0-9])/g, (_, __, c) => c.toUpperCase())
const typed = manifests.filter((m) => !extraDir || extraGroups.has(m.group))
let types = '// Generated by build.mjs from the manifests. Do not edit.\n'
for (const m of typed) {
  for (const t of m.tools) {
    for (const [suffix, s] of /** @type {const} */ ([
      ['Input', t.input],
      ['Output', t.output],
    ])) {
      types += `\n${await toTypeScript({ ...s, title: undefined }, `${pascal(t.name)}${suffix}`, { bannerComment: '', additionalProperties: false, strictIndexSignatures: true })}`
    }
  }
}
const typedTools = typed.flatMap((m) => m.tools)
types += `\n/** Every tool's argument and result types, by tool name. */\nexport interface Tools {\n${typedTools.map((t) => `  ${t.name}: { input: ${pascal(t.name)}Input; output: ${pascal(t.name)}Output }`).join('\n')}\n}\n`
const toolsByPlugin = new Map()
for (const m of typed)
  toolsByPlugin.set(m.plugin, [...(toolsByPlugin.get(m.plugin) ?? []), ...m.tools.map((t) => t.name)])
types += `\n/** The tools each plugin serves: \`Handlers<PluginTools['name'], State>\` types a plugin's handlers. */\nexport interface PluginTools {\n${[...toolsByPlugin].map(([p, names]) => `  ${p}: Pick<Tools, ${names.map((n) => `'${n}'`).join(' | ')}>`).join('\n')}\n}\n`
await writeFile(join(gen, 'types', 'tools.ts'), types)
const contractPath = join(root, 'contract', 'agwp-v1.schema.json')
if (!extraDir && existsSync(contractPath)) {
  const contract = JSON.parse(await readFile(contractPath, 'utf8'))
  const defs = contract.$defs ?? contract.definitions ?? {}
  const key = contract.$defs ? '$defs' : 'definitions'
  // One named type per definition: compile a schema that references each of them.
  const wrapper = {
    ...contract,
    title: 'AgwpContract',
    type: 'object',
    additionalProperties: false,
    properties: Object.fromEntries(Object.keys(defs).map((k) => [k, { $ref: `#/${key}/${k}` }])),
  }
  delete wrapper.$id
  const ts = await toTypeScript(wrapper, 'AgwpContract', {
    bannerComment: '// Generated by build.mjs from contract/agwp-v1.schema.json. Do not edit.',
    additionalProperties: false,
    declareExternallyReferenced: true,
    unreachableDefinitions: true,
  })
  await writeFile(join(gen, 'types', 'agwp.ts'), ts)
}

// 7. Precompiled validators, one module per group, each a lazy chunk of its own: no schema is
// compiled when ag-mcp starts, and a process loads the validators of the groups it calls, not
// all of them (every group's together were 263 KB of code, parsed and kept by every process at
// its first tools/call).
await rm(join(gen, 'validators'), { recursive: true, force: true })
await mkdir(join(gen, 'validators'), { recursive: true })
const validatorLoaders = []
for (const m of manifests) {
  const ajv = new Ajv({
    allErrors: true,
    strict: true,
    strictRequired: false,
    code: { source: true, esm: true, optimize: true },
  })
  const exportsMap = {}
  for (const t of m.tools) {
    ajv.addSchema({ ...t.input, $id: `tool/${t.name}/input` })
    ajv.addSchema({ ...t.output, $id: `tool/${t.name}/output` })
    exportsMap[`${t.name}__input`] = `tool/${t.name}/input`
    exportsMap[`${t.name}__output`] = `tool/${t.name}/output`
    for (const a of t.asks ?? []) {
      for (const part of ['input', 'value']) {
        ajv.addSchema({ ...a[part], $id: `ask/${t.name}/${a.name}/${part}` })
        exportsMap[`${t.name}__ask__${a.name}__${part}`] = `ask/${t.name}/${a.name}/${part}`
      }
    }
  }
  const table = m.tools.map((t) => `  ${t.name}: { input: ${t.name}__input, output: ${t.name}__output },`).join('\n')
  const askTable = m.tools
    .flatMap((t) =>
      (t.asks ?? []).map(
        (a) =>
          `  ${JSON.stringify(`${t.name}/${a.name}`)}: { input: ${t.name}__ask__${a.name}__input, value: ${t.name}__ask__${a.name}__value },`,
      ),
    )
    .join('\n')
  await writeFile(
    join(gen, 'validators', `${m.group}.js`),
    `// Generated by build.mjs. Do not edit.\n${standaloneEsm(ajv, exportsMap)}\nexport const validators = {\n${table}\n}\nexport const asks = {\n${askTable}\n}\n`,
  )
  validatorLoaders.push(`    case ${JSON.stringify(m.group)}:\n      return import('./validators/${m.group}.js')`)
}
await writeFile(
  join(gen, 'validators.js'),
  `// Generated by build.mjs. Do not edit.
// Each group's validators are a module of their own, imported (a lazy chunk) on first use.
export function loadGroupValidators(group) {
  switch (group) {
${validatorLoaders.join('\n')}
    default:
      return Promise.resolve({ validators: {}, asks: {} })
  }
}
`,
)
await writeFile(
  join(gen, 'validators.d.ts'),
  `// Generated by build.mjs. Do not edit.\nimport type { GroupValidators } from '${coreFrom('pipeline/validation.ts')}'\nexport declare function loadGroupValidators(group: string): Promise<GroupValidators>\n`,
)

// 7b. The review page's files (server/web/): its script bundled for the browser (no framework, no
// CDN), its stylesheet and page as they are. ag-server imports generated/web-assets.js and serves
// them from its own bundle, so nothing is read from disk or fetched at run time.
if (!extraDir) {
  const web = join(root, 'server', 'web')
  const script = await esbuild.build({
    entryPoints: [join(web, 'app.ts')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: process.env.AG_MCP_BUILD_DEBUG !== '1',
    legalComments: 'none',
    write: false,
    logLevel: 'warning',
  })
  const js = outputText(script)
  /** @type {Record<string, { type: string, body: string, etag?: string }>} */
  const files = {
    'index.html': { type: 'text/html; charset=utf-8', body: await readFile(join(web, 'index.html'), 'utf8') },
    'app.js': { type: 'text/javascript; charset=utf-8', body: js },
    'app.css': { type: 'text/css; charset=utf-8', body: await readFile(join(web, 'app.css'), 'utf8') },
  }
  for (const f of Object.values(files)) f.etag = `"${createHash('sha256').update(f.body).digest('hex').slice(0, 32)}"`
  await writeFile(
    join(gen, 'web-assets.js'),
    `// Generated by build.mjs from server/web/. Do not edit.\nexport const assets = ${JSON.stringify(files)}\n`,
  )
  await writeFile(
    join(gen, 'web-assets.d.ts'),
    `// Generated by build.mjs. Do not edit.\nexport declare const assets: Record<'index.html' | 'app.js' | 'app.css', { type: string; body: string; etag: string }>\n`,
  )
  console.log(`review page (server/web/): app.js ${(js.length / 1024).toFixed(1)} KiB`)
}

// 8. Bundles. Every dynamic import() becomes a lazy chunk: bundled on its own, embedded as a
// string and evaluated on first use, so start-up does not even parse it.
const define = { AG_MCP_VERSION: JSON.stringify(pkg.version) }
// AG_MCP_BUILD_DEBUG=1 keeps the bundles readable (no minification) for debugging.
const minify = process.env.AG_MCP_BUILD_DEBUG !== '1'
const evalChunkPath = join(root, 'bin', 'eval-chunk.ts')
// A test bundle is the product's code with its own generated modules (manifests, plugin list,
// validators): the core's imports of generated/X.js are pointed at generated/extra/X.js.
const GENERATED = /(^|\/)generated\/(manifests|plugins|validators|validators\/[a-z0-9_-]+)\.js$/
const remap = (path) =>
  extraDir && path.startsWith(productGen) && GENERATED.test(path) ? join(gen, path.slice(productGen.length + 1)) : path
const useExtraGenerated = {
  name: 'use-extra-generated',
  setup(build) {
    build.onResolve({ filter: GENERATED }, (args) =>
      args.kind === 'dynamic-import' ? undefined : { path: remap(join(args.resolveDir, args.path)) },
    )
  },
}
const lazyChunks = {
  name: 'lazy-chunks',
  setup(build) {
    build.onResolve({ filter: /.*/ }, async (args) => {
      if (args.kind !== 'dynamic-import') return undefined
      const r = await build.resolve(args.path, {
        kind: 'import-statement',
        resolveDir: args.resolveDir,
        importer: args.importer,
      })
      if (r.errors.length > 0) return { errors: r.errors }
      return { path: remap(r.path), namespace: 'lazy-chunk' }
    })
    build.onLoad({ filter: /.*/, namespace: 'lazy-chunk' }, async (args) => {
      // A chunk is CommonJS, where import.meta is empty: its import.meta.url is the bundle's,
      // passed in by evalChunk (yargs, for one, resolves files from it).
      /** @type {import('esbuild').BuildOptions} */
      const common = {
        entryPoints: [args.path],
        bundle: true,
        platform: 'node',
        target: 'node20',
        write: false,
        define: { ...define, 'import.meta.url': '__agImportMetaUrl' },
        logLevel: 'silent',
      }
      // The export names come from an ESM build's metafile; the code itself is CommonJS.
      const chunkPlugins = extraDir ? [useExtraGenerated, lazyChunks] : [lazyChunks]
      const probe = await esbuild.build({ ...common, format: 'esm', metafile: true, plugins: chunkPlugins })
      const names = onlyOutput(probe).exports
      const out = await esbuild.build({
        ...common,
        format: 'cjs',
        minify,
        legalComments: 'none',
        plugins: chunkPlugins,
      })
      const name = relative(root, args.path)
      // An ESM facade, so `import()` of a chunk yields the same namespace (default included)
      // as importing the module itself.
      const lines = [
        `import { evalChunk } from ${JSON.stringify(evalChunkPath)}`,
        // Deflated and base64-encoded: a third of the bytes for start-up to decode and scan.
        `const chunk = evalChunk(${JSON.stringify(deflateRawSync(outputText(out), { level: 9 }).toString('base64'))}, ${JSON.stringify(name)})`,
        ...names.map((n, i) =>
          n === 'default'
            ? 'export default chunk.default'
            : `const e${i} = chunk[${JSON.stringify(n)}]\nexport { e${i} as ${n} }`,
        ),
      ]
      return { contents: `${lines.join('\n')}\n`, loader: 'js', resolveDir: root }
    })
  },
}
await mkdir(join(root, 'dist'), { recursive: true })
const banner = '#!/usr/bin/env node'
// ag-mcp's eager code needs no require() (its chunks get Node's from evalChunk), and even an
// unused createRequire costs start-up time; the others bundle CommonJS that may call it.
const bundles = extraDir
  ? [
      {
        entry: 'bin/ag-mcp.ts',
        out: relative(root, join(gen, 'ag-mcp.mjs')),
        plugins: [useExtraGenerated, lazyChunks],
        require: false,
      },
    ]
  : [{ entry: 'bin/ag-mcp.ts', out: 'dist/ag-mcp.mjs', plugins: [lazyChunks], require: false }]
if (!extraDir && existsSync(join(root, 'bin', 'ag-server.ts')))
  bundles.push({ entry: 'bin/ag-server.ts', out: 'dist/ag-server.mjs', plugins: [], require: true })
// The scripted agent and the demo (examples/): they sit beside the binaries they drive.
if (!extraDir) {
  bundles.push({
    entry: 'examples/agents/scripted-agent.ts',
    out: 'dist/scripted-agent.mjs',
    plugins: [],
    require: true,
  })
  bundles.push({ entry: 'examples/demo.ts', out: 'dist/demo.mjs', plugins: [], require: true })
}
for (const b of bundles) {
  const result = await esbuild.build({
    entryPoints: [join(root, b.entry)],
    outfile: join(root, b.out),
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    minify,
    legalComments: 'none',
    define,
    // pg's optional native binding: never bundled nor installed; pg loads it only if asked to
    external: ['pg-native'],
    plugins: b.plugins,
    metafile: true,
    logLevel: 'warning',
    // Bundled CommonJS dependencies may call require(); give them Node's.
    banner: {
      js: `${(await readFile(join(root, b.entry), 'utf8')).startsWith('#!') ? '' : banner}\n${b.require ? "import { createRequire as __agCreateRequire } from 'node:module';const require = __agCreateRequire(import.meta.url);" : ''}`,
    },
  })
  if (!b.require && (await readFile(join(root, b.out), 'utf8')).includes('Dynamic require of')) {
    fail([`${b.out}: bundled code calls require() at top level; move it behind a dynamic import() (a lazy chunk)`])
  }
  await chmod(join(root, b.out), 0o755)
  const bytes = onlyOutput(result).bytes
  console.log(`${b.out}: ${(bytes / 1024).toFixed(1)} KiB`)
}
// The config file schema the package ships (ag-mcp.schema.json), from the bundle's own flag table:
// written by every build, like docs/tools.md, so a new plugin option is in it at once.
if (!extraDir) {
  const { execFileSync } = await import('node:child_process')
  const schema = execFileSync(process.execPath, [join(root, 'dist', 'ag-mcp.mjs'), 'config', 'schema'], {
    encoding: 'utf8',
  })
  await writeFile(join(root, 'ag-mcp.schema.json'), schema)
}
await rm(join(gen, 'tmp'), { recursive: true, force: true })
