// `ag-mcp config schema` prints the JSON Schema of a config file (--config PATH), built from the one
// flag table, plugins' options included; the package ships it as ag-mcp.schema.json, and a test
// keeps the two equal. `ag-mcp config init [--out PATH] [--force]` writes a starting file whose
// $schema points at it, so an editor completes and explains every key.
import { existsSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { flagTable } from '../core/src/config/flags.ts'
import type { FlagSpec } from '../core/src/config/flags.ts'
import type { BundledPlugins } from '../core/src/pipeline/plugins.ts'

export interface Io {
  out(s: string): void
  err(s: string): void
  cwd: string
}

function property(spec: FlagSpec): Record<string, unknown> {
  const description = spec.describe
  const base =
    spec.type === 'list'
      ? { anyOf: [{ type: 'array', items: { type: 'string' } }, { type: 'string' }] }
      : { type: spec.type }
  return { ...base, description, ...(spec.default !== undefined ? { default: spec.default } : {}) }
}

export function configSchema(plugins: BundledPlugins): Record<string, unknown> {
  const properties: Record<string, unknown> = { $schema: { type: 'string', description: 'This schema.' } }
  for (const [flag, spec] of Object.entries(flagTable(plugins))) if (!spec.cliOnly) properties[flag] = property(spec)
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'ag-mcp configuration (--config PATH)',
    description:
      'Keys are ag-mcp flag names without dashes; flags win over AG_MCP_* variables, which win over this file. No key takes a token value: name a token file or a variable.',
    type: 'object',
    properties,
    additionalProperties: false,
  }
}

/** The schema file shipped beside dist/ (the package root), as a URL an editor can open. */
function schemaUrl(): string {
  const script = process.argv[1] ?? ''
  return pathToFileURL(join(dirname(dirname(resolve(script))), 'ag-mcp.schema.json')).href
}

export function config(argv: readonly string[], io: Io, plugins: BundledPlugins): number {
  const [verb, ...rest] = argv
  if (verb === 'schema') {
    io.out(JSON.stringify(configSchema(plugins), null, 2))
    return 0
  }
  if (verb !== 'init') {
    io.err('usage: ag-mcp config schema | ag-mcp config init [--out PATH] [--force]')
    return 2
  }
  const outAt = rest.indexOf('--out')
  const out = resolve(io.cwd, outAt === -1 ? 'ag-mcp.config.json' : (rest[outAt + 1] ?? ''))
  if (existsSync(out) && !rest.includes('--force')) {
    io.err(`ag-mcp config init: ${out} exists; pass --force to replace it`)
    return 1
  }
  const start = {
    $schema: schemaUrl(),
    upstream: 'https://agentgit.example.com',
    'token-file': '/home/you/.config/ag-mcp/agent.token',
    allow: ['read', 'workspace', 'propose', 'coordinate'],
    repo: ['demo'],
    'write-path': ['docs/**', 'README.md'],
    'require-lease': false,
    'log-level': 'info',
  }
  writeFileSync(out, `${JSON.stringify(start, null, 2)}\n`, { mode: 0o644 })
  io.out(
    `wrote ${out}: edit upstream, token-file, repo and write-path, then run ag-mcp doctor --config ${out}\n($schema points at ${start.$schema}: editors complete and explain every key)`,
  )
  return 0
}
