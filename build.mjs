#!/usr/bin/env node
// The build: manifests → checks, types, precompiled validators, docs/tools.md; then esbuild
// bundles bin/ag-mcp.ts and bin/ag-server.ts into one file each under dist/.
//   node build.mjs              build everything
//   node build.mjs --check-docs exit 1 if docs/tools.md differs from what the build writes
import { chmod, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { deflateRawSync } from 'node:zlib'
import * as esbuild from 'esbuild'
import Ajv from 'ajv'
import standaloneCode from 'ajv/dist/standalone/index.js'
import { compile as toTypeScript } from 'json-schema-to-typescript'

const root = dirname(fileURLToPath(import.meta.url))
const gen = join(root, 'generated')
const pkg = JSON.parse(await readFile(join(root, 'package.json'), 'utf8'))
const checkDocsOnly = process.argv.includes('--check-docs')

function fail(lines) {
  console.error(`build failed:\n  ${lines.join('\n  ')}`)
  process.exit(1)
}

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
  await writeFile(file, out.outputFiles[0].text)
  return import(`${pathToFileURL(file).href}?t=${Date.now()}`)
}

// 1. Manifests, validated against their schema.
const manifestDir = join(root, 'manifests')
const schema = JSON.parse(await readFile(join(manifestDir, 'manifest.schema.json'), 'utf8'))
const schemaAjv = new Ajv({ allErrors: true, strict: false })
const validateManifest = schemaAjv.compile(schema)
const manifests = []
for (const file of (await readdir(manifestDir))
  .filter((f) => f.endsWith('.json') && f !== 'manifest.schema.json')
  .sort()) {
  const data = JSON.parse(await readFile(join(manifestDir, file), 'utf8'))
  if (!validateManifest(data))
    fail(validateManifest.errors.map((e) => `manifests/${file}: ${e.instancePath || '/'} ${e.message}`))
  delete data.$schema
  manifests.push(data)
}
// Deterministic order: always-on groups first, then default, opt-in, flag-only; by name within.
const accessOrder = ['always', 'default', 'opt-in', 'flag-only']
manifests.sort(
  (a, b) => accessOrder.indexOf(a.access) - accessOrder.indexOf(b.access) || a.group.localeCompare(b.group),
)

const support = await importTs(
  `export * from './core/src/manifest/check.ts'; export * from './core/src/manifest/docs.ts'`,
  'build-support',
)

// 2. Docs (committed, so checked rather than silently rewritten in --check-docs mode).
const docs = support.renderToolsDoc(manifests)
const docsPath = join(root, 'docs', 'tools.md')
if (checkDocsOnly) {
  const current = existsSync(docsPath) ? await readFile(docsPath, 'utf8') : ''
  if (current !== docs) fail(['docs/tools.md is out of date: run `npm run build` and commit it'])
  console.log('docs/tools.md is up to date')
  process.exit(0)
}
await mkdir(join(root, 'docs'), { recursive: true })
await writeFile(docsPath, docs)

// 3. Plugins: which handlers each one has, to check manifests against.
const catalog = {}
for (const name of (await readdir(join(root, 'plugins'))).sort()) {
  const entry = join(root, 'plugins', name, 'index.ts')
  if (!existsSync(entry)) continue
  const mod = await importTs(`export { default } from './plugins/${name}/index.ts'`, `plugin-${name}`)
  const plugin = mod.default
  if (!plugin || plugin.name !== name) fail([`plugins/${name}/index.ts must default-export a plugin named "${name}"`])
  catalog[name] = { handlers: Object.keys(plugin.handlers ?? {}), hasOperation: typeof plugin.operation === 'function' }
}
const problems = support.checkManifests(manifests, catalog)
if (problems.length > 0) fail(problems)

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
await writeFile(
  join(gen, 'manifests.js'),
  `// Generated by build.mjs. Do not edit.\n// A JSON string parses faster than the same object as code.\nexport const manifests = JSON.parse(${JSON.stringify(JSON.stringify(manifests))})\n`,
)
await writeFile(
  join(gen, 'manifests.d.ts'),
  `// Generated by build.mjs. Do not edit.\nimport type { GroupManifest } from '../core/src/manifest/types.ts'\nexport declare const manifests: GroupManifest[]\n`,
)

// 5. Types for every tool's input and output, and for the AGWP contract.
const pascal = (s) => s.replace(/(^|_)([a-z0-9])/g, (_, __, c) => c.toUpperCase())
let types = '// Generated by build.mjs from manifests/*.json. Do not edit.\n'
for (const m of manifests) {
  for (const t of m.tools) {
    for (const [suffix, s] of [
      ['Input', t.input],
      ['Output', t.output],
    ]) {
      types += `\n${await toTypeScript({ ...s, title: undefined }, `${pascal(t.name)}${suffix}`, { bannerComment: '', additionalProperties: false, strictIndexSignatures: true })}`
    }
  }
}
await writeFile(join(gen, 'types', 'tools.ts'), types)
const contractPath = join(root, 'contract', 'agwp-v1.schema.json')
if (existsSync(contractPath)) {
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

// 6. Precompiled validators: no schema is compiled when ag-mcp starts.
const ajv = new Ajv({
  allErrors: true,
  strict: true,
  strictRequired: false,
  code: { source: true, esm: true, optimize: true },
})
const exportsMap = {}
for (const m of manifests) {
  for (const t of m.tools) {
    ajv.addSchema({ ...t.input, $id: `tool/${t.name}/input` })
    ajv.addSchema({ ...t.output, $id: `tool/${t.name}/output` })
    exportsMap[`${t.name}__input`] = `tool/${t.name}/input`
    exportsMap[`${t.name}__output`] = `tool/${t.name}/output`
  }
}
let validators = standaloneCode(ajv, exportsMap)
// Runtime helpers come as require(); turn them into imports so the module is plain ESM.
const helpers = new Map()
validators = validators.replace(/require\("(ajv\/dist\/runtime\/[a-z0-9_]+)"\)/g, (_, spec) => {
  if (!helpers.has(spec)) helpers.set(spec, `__ajv_rt${helpers.size}`)
  return helpers.get(spec)
})
const imports = [...helpers].map(([spec, id]) => `import ${id} from '${spec}.js'`).join('\n')
const table = manifests
  .flatMap((m) => m.tools)
  .map((t) => `  ${t.name}: { input: ${t.name}__input, output: ${t.name}__output },`)
  .join('\n')
await writeFile(
  join(gen, 'validators.js'),
  `// Generated by build.mjs. Do not edit.\n${imports}\n${validators}\nexport const validators = {\n${table}\n}\n`,
)
await writeFile(
  join(gen, 'validators.d.ts'),
  `// Generated by build.mjs. Do not edit.\nimport type { ToolValidators } from '../core/src/pipeline/validation.ts'\nexport declare const validators: ToolValidators\n`,
)

// 7. Bundles. Every dynamic import() becomes a lazy chunk: bundled on its own, embedded as a
// string and evaluated on first use, so start-up does not even parse it.
const define = { AG_MCP_VERSION: JSON.stringify(pkg.version) }
// AG_MCP_BUILD_DEBUG=1 keeps the bundles readable (no minification) for debugging.
const minify = process.env.AG_MCP_BUILD_DEBUG !== '1'
const evalChunkPath = join(root, 'bin', 'eval-chunk.ts')
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
      return { path: r.path, namespace: 'lazy-chunk' }
    })
    build.onLoad({ filter: /.*/, namespace: 'lazy-chunk' }, async (args) => {
      // A chunk is CommonJS, where import.meta is empty: its import.meta.url is the bundle's,
      // passed in by evalChunk (yargs, for one, resolves files from it).
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
      const probe = await esbuild.build({ ...common, format: 'esm', metafile: true, plugins: [lazyChunks] })
      const names = Object.values(probe.metafile.outputs)[0].exports
      const out = await esbuild.build({
        ...common,
        format: 'cjs',
        minify,
        legalComments: 'none',
        plugins: [lazyChunks],
      })
      const name = relative(root, args.path)
      // An ESM facade, so `import()` of a chunk yields the same namespace (default included)
      // as importing the module itself.
      const lines = [
        `import { evalChunk } from ${JSON.stringify(evalChunkPath)}`,
        // Deflated and base64-encoded: a third of the bytes for start-up to decode and scan.
        `const chunk = evalChunk(${JSON.stringify(deflateRawSync(out.outputFiles[0].text, { level: 9 }).toString('base64'))}, ${JSON.stringify(name)})`,
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
const bundles = [{ entry: 'bin/ag-mcp.ts', out: 'dist/ag-mcp.mjs', plugins: [lazyChunks], require: false }]
if (existsSync(join(root, 'bin', 'ag-server.ts')))
  bundles.push({ entry: 'bin/ag-server.ts', out: 'dist/ag-server.mjs', plugins: [], require: true })
// The scripted agent and the demo (examples/): they sit beside the binaries they drive.
bundles.push({ entry: 'examples/agents/scripted-agent.ts', out: 'dist/scripted-agent.mjs', plugins: [], require: true })
bundles.push({ entry: 'examples/demo.ts', out: 'dist/demo.mjs', plugins: [], require: true })
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
  const bytes = Object.values(result.metafile.outputs)[0].bytes
  console.log(`${b.out}: ${(bytes / 1024).toFixed(1)} KiB`)
}
await rm(join(gen, 'tmp'), { recursive: true, force: true })
