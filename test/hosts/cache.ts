// The MCP hosts test:hosts runs, pinned, installed once into a cache folder outside the
// repository (they are 100-400 MB each: never dev dependencies). A warm run finds them by their
// package.json versions and asks npm nothing; a cold or stale one runs `npm install --prefix`,
// which prefers npm's own cache, so a machine that installed them once installs offline.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { join } from 'node:path'

/** Each host's package and version, and the Node some of them need (ag-mcp itself runs on this Node). */
export const PINS = {
  '@anthropic-ai/claude-code': '2.1.332',
  '@openai/codex': '0.171.0',
  '@google/gemini-cli': '0.61.0',
  '@modelcontextprotocol/inspector': '2.12.0',
  mcporter: '0.12.3',
  // The inspector wants Node >= 22.19 and mcporter >= 24; the registry ships Node itself as a
  // package per platform (the binary inside it).
  [`node-${process.platform}-${process.arch}`]: '24.22.3',
} as const

export type Pinned = keyof typeof PINS

export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return env['AG_MCP_HOSTS_CACHE'] || join(homedir(), '.cache', 'ag-mcp-hosts')
}

/** The version of a package installed in the cache, or undefined. */
export function installedVersion(dir: string, pkg: string): string | undefined {
  try {
    const manifest = JSON.parse(readFileSync(join(dir, 'node_modules', pkg, 'package.json'), 'utf8')) as {
      version?: unknown
    }
    return typeof manifest.version === 'string' ? manifest.version : undefined
  } catch {
    return undefined
  }
}

/** Packages whose installed version is not the pinned one. */
export function stale(dir: string): string[] {
  return Object.entries(PINS)
    .filter(([pkg, v]) => installedVersion(dir, pkg) !== v)
    .map(([pkg]) => pkg)
}

export interface Ensured {
  dir: string
  /** What npm had to install (empty on a warm run). */
  installed: string[]
  ms: number
}

/** Installs what is missing or stale; throws with npm's own output when npm fails. */
export function ensureCache(dir: string, log: (s: string) => void): Ensured {
  const started = Date.now()
  const missing = stale(dir)
  if (missing.length === 0) return { dir, installed: [], ms: Date.now() - started }
  log(`installing into ${dir}: ${missing.map((p) => `${p}@${PINS[p as Pinned]}`).join(', ')}`)
  mkdirSync(dir, { recursive: true })
  // A package.json of its own, so the cache is one npm project and a later install keeps the rest.
  const manifest = join(dir, 'package.json')
  if (!existsSync(manifest))
    writeFileSync(manifest, `${JSON.stringify({ name: 'ag-mcp-hosts-cache', private: true }, null, 2)}\n`)
  const r = spawnSync(
    'npm',
    [
      'install',
      '--prefix',
      dir,
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      '--save-exact',
      '--loglevel=error',
      ...Object.entries(PINS).map(([pkg, v]) => `${pkg}@${v}`),
    ],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 20 * 60_000 },
  )
  if (r.status !== 0)
    throw new Error(`npm install into ${dir} failed (exit ${r.status ?? r.signal}):\n${r.stderr || r.stdout}`)
  const still = stale(dir)
  if (still.length > 0) throw new Error(`after npm install, still not at the pinned version: ${still.join(', ')}`)
  return { dir, installed: missing, ms: Date.now() - started }
}

/** Paths of the host executables in the cache. */
export function binaries(dir: string) {
  const mod = (p: string) => join(dir, 'node_modules', p)
  return {
    /** The Node that runs the JavaScript hosts (gemini, the inspector, mcporter). */
    node: mod(`node-${process.platform}-${process.arch}/bin/node`),
    claude: mod('.bin/claude'),
    codex: mod('.bin/codex'),
    gemini: mod('.bin/gemini'),
    inspector: mod('.bin/mcp-inspector'),
    mcporter: mod('.bin/mcporter'),
  }
}
export type Binaries = ReturnType<typeof binaries>
