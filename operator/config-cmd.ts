// `ag-mcp config schema` prints the JSON Schema of a config file (--config PATH), built from the one
// flag table, plugins' options included; the package ships it as ag-mcp.schema.json, and a test
// keeps the two equal. `ag-mcp config init [--out PATH] [--force]` writes a commented starting
// file (JSONC, ag-mcp.config.jsonc) whose $schema points at it, so an editor completes and
// explains every key.
import { existsSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { flagTable } from '../core/src/config/flags.ts'
import type { FlagSpec, FlagTable } from '../core/src/config/flags.ts'
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
  const out = resolve(io.cwd, outAt === -1 ? 'ag-mcp.config.jsonc' : (rest[outAt + 1] ?? ''))
  if (existsSync(out) && !rest.includes('--force')) {
    io.err(`ag-mcp config init: ${out} exists; pass --force to replace it`)
    return 1
  }
  const schema = schemaUrl()
  writeFileSync(out, startingFile(schema, flagTable(plugins)), { mode: 0o644 })
  io.out(
    `wrote ${out}: edit upstream, token-file, repo and write-path, then run ag-mcp doctor --config ${out}\n($schema points at ${schema}: editors complete and explain every key)`,
  )
  return 0
}

/** The keys a starting file sets, with example values; every other key is listed commented out. */
const STARTING_VALUES: Readonly<Record<string, unknown>> = {
  upstream: 'https://agentgit.example.com',
  'token-file': '/home/you/.config/ag-mcp/agent.token',
  allow: ['read', 'workspace', 'propose', 'coordinate'],
  repo: ['demo'],
  'write-path': ['docs/**', 'README.md'],
  'require-lease': false,
  'log-level': 'info',
}

/**
 * A commented starting file (JSONC, which the config loader reads): each key is explained by
 * its flag's own description from the one flag table, so the comments cannot drift from --help.
 */
export function startingFile(schema: string, table: FlagTable): string {
  const lines = [
    '// ag-mcp configuration: ag-mcp --config THIS-FILE (ag-mcp doctor --config THIS-FILE checks it).',
    '// Keys are the flag names without dashes (ag-mcp --help lists them all); a flag on the command',
    '// line wins over an AG_MCP_* variable, which wins over this file. Comments and trailing commas',
    '// are allowed. No key takes a token value: name a 0600 token file or a variable instead.',
    '{',
    '  // The schema of this file: editors complete and explain every key from it.',
    `  "$schema": ${JSON.stringify(schema)},`,
  ]
  const entry = (key: string, value: unknown, commented: boolean): void => {
    const spec = table[key] as FlagSpec
    lines.push('', ...wrap(spec.describe, 94).map((l) => `  // ${l}`))
    const shown = Array.isArray(value) ? `[${value.map((v) => JSON.stringify(v)).join(', ')}]` : JSON.stringify(value)
    lines.push(`  ${commented ? '// ' : ''}${JSON.stringify(key)}: ${shown},`)
  }
  for (const [key, value] of Object.entries(STARTING_VALUES)) entry(key, value, false)
  lines.push('', '  // Further settings, at their defaults (or an example): remove the // to set one.')
  for (const [key, spec] of Object.entries(table)) {
    if (spec.cliOnly || key in STARTING_VALUES) continue
    entry(key, spec.default ?? example(spec), true)
  }
  lines.push('}', '')
  return lines.join('\n')
}

/** A placeholder value for a key without a default, of the right type. */
function example(spec: FlagSpec): unknown {
  if (spec.type === 'list') return []
  if (spec.type === 'boolean') return false
  if (spec.type === 'number') return 0
  return spec.value ?? ''
}

function wrap(text: string, width: number): string[] {
  const out: string[] = []
  let line = ''
  for (const word of text.split(' ')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      out.push(line)
      line = word
    } else line = line === '' ? word : `${line} ${word}`
  }
  return [...out, line]
}
