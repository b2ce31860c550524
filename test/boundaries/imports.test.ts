// The architecture, checked: core knows no plugin and no tool; plugins know no MCP; the
// server knows neither; package.json declares exactly what the shipped code imports.
import t from 'tap'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { builtinModules } from 'node:module'

const root = new URL('../../', import.meta.url).pathname

function files(dir: string): string[] {
  const abs = join(root, dir)
  const out: string[] = []
  for (const name of readdirSync(abs)) {
    const p = join(abs, name)
    if (statSync(p).isDirectory()) out.push(...files(relative(root, p)))
    else if (p.endsWith('.ts')) out.push(relative(root, p))
  }
  return out
}

function imports(file: string): string[] {
  const src = readFileSync(join(root, file), 'utf8')
  return [
    ...src.matchAll(/(?:^|\n)\s*(?:import|export)[^'"\n]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g),
  ].map((m) => (m[1] ?? m[2]) as string)
}

function resolved(file: string, spec: string): string {
  return spec.startsWith('.') ? relative(root, join(root, file, '..', spec)) : spec
}

const exists = (d: string) => {
  try {
    return statSync(join(root, d)).isDirectory()
  } catch {
    return false
  }
}

t.test('core imports no plugin, no server, no bin', async (t) => {
  for (const f of files('core')) {
    for (const spec of imports(f)) {
      const r = resolved(f, spec)
      t.notOk(/^(plugins|server|bin)\//.test(r), `${f} imports ${spec}`)
    }
  }
})

t.test('core names no tool', async (t) => {
  const names = readdirSync(join(root, 'manifests'))
    .filter((f) => f.endsWith('.json') && f !== 'manifest.schema.json')
    .flatMap((f) =>
      (JSON.parse(readFileSync(join(root, 'manifests', f), 'utf8')) as { tools: { name: string }[] }).tools.map(
        (x) => x.name,
      ),
    )
  for (const f of files('core')) {
    const src = readFileSync(join(root, f), 'utf8')
    for (const n of names) t.notOk(new RegExp(`['"\`]${n}['"\`]`).test(src), `${f} mentions tool ${n}`)
  }
})

t.test('plugins import only the plugin API from core, never MCP', async (t) => {
  if (!exists('plugins')) return
  for (const f of files('plugins')) {
    for (const spec of imports(f)) {
      const r = resolved(f, spec)
      if (r.startsWith('core/')) t.equal(r, 'core/src/plugin-api.ts', `${f} imports ${spec}`)
      t.notOk(r.startsWith('server/'), `${f} imports the server (${spec})`)
    }
  }
})

t.test('lib/ is a leaf that core and the server may share: it imports nothing of the project', async (t) => {
  for (const f of files('lib'))
    for (const spec of imports(f))
      t.ok(spec.startsWith('node:') || resolved(f, spec).startsWith('lib/'), `${f} imports ${spec}`)
})

t.test('the server imports neither core nor plugins', async (t) => {
  if (!exists('server')) return
  for (const f of files('server')) {
    for (const spec of imports(f)) t.notOk(/^(core|plugins)\//.test(resolved(f, spec)), `${f} imports ${spec}`)
  }
})

t.test("the review page's browser code imports only itself and lib/ (no Node, no server)", async (t) => {
  if (!exists('server/web')) return
  for (const f of files('server/web'))
    for (const spec of imports(f)) t.match(resolved(f, spec), /^(server\/web|lib)\//, `${f} imports ${spec}`)
})

t.test('what the shipped code imports is pinned and bundled; the installed package needs nothing', async (t) => {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    dependencies?: Record<string, string>
    devDependencies: Record<string, string>
  }
  const used = new Set<string>()
  for (const dir of ['lib', 'core', 'operator', 'plugins', 'server', 'bin'].filter(exists)) {
    for (const f of files(dir)) {
      for (const spec of imports(f)) {
        if (spec.startsWith('.') || spec.startsWith('node:') || builtinModules.includes(spec)) continue
        used.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : (spec.split('/')[0] as string))
      }
    }
  }
  // build.mjs bundles every import into dist/, so they are build-time (dev) dependencies, pinned
  // exactly; test/packaging checks that the installed tarball runs with no node_modules.
  for (const name of [...used].sort()) t.match(pkg.devDependencies[name], /^\d+\.\d+\.\d+/, `${name} is pinned`)
  t.same(Object.keys(pkg.dependencies ?? {}), [], 'no runtime dependencies: the bundles carry them')
})
