// `ag-mcp config schema` prints the JSON Schema of a config file (--config PATH), built from the one
// flag table, plugins' options included; the package ships it as ag-mcp.schema.json, and a test
// keeps the two equal. `ag-mcp config init [--local [REPO]] [--out PATH] [--force]` writes a
// commented starting file (JSONC, ag-mcp.config.jsonc): for local mode, or for a shared server.
// Its `$schema` names a copy of the schema written beside it, so an editor completes and explains
// every key wherever ag-mcp is installed (a clone, a package, the standalone executable) and the
// pair can be moved or committed together.
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { homedir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
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
      : spec.bare !== undefined
        ? { anyOf: [{ type: 'boolean' }, { type: 'string' }] }
        : { type: spec.type }
  return { ...base, description, ...(spec.default !== undefined ? { default: spec.default } : {}) }
}

const SCHEMA_TITLE = 'ag-mcp configuration (--config PATH)'
/** The schema's file name, beside the package root and beside every file config init writes. */
const SCHEMA_FILE = 'ag-mcp.schema.json'

export function configSchema(plugins: BundledPlugins): Record<string, unknown> {
  const properties: Record<string, unknown> = { $schema: { type: 'string', description: 'This schema.' } }
  for (const [flag, spec] of Object.entries(flagTable(plugins))) if (!spec.cliOnly) properties[flag] = property(spec)
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: SCHEMA_TITLE,
    description:
      'Keys are ag-mcp flag names without dashes; flags win over AG_MCP_* variables, which win over this file. No key takes a token value: name a token file or a variable.',
    type: 'object',
    properties,
    additionalProperties: false,
  }
}

/** `ag-mcp config schema`: the config file's JSON Schema on stdout. */
export function printSchema(io: Io, plugins: BundledPlugins): number {
  io.out(`${JSON.stringify(configSchema(plugins), null, 2)}`)
  return 0
}

export interface InitOptions {
  /** Where the file goes (relative to the working directory). */
  out: string
  /** --local [REPO]: a file for local mode on REPO ('.': where ag-mcp starts). */
  local: string | undefined
  force: boolean
}

/** `ag-mcp config init`: a commented starting file, and the schema beside it. */
export function initConfig({ out: outPath, local, force }: InitOptions, io: Io, plugins: BundledPlugins): number {
  const schemaText = `${JSON.stringify(configSchema(plugins), null, 2)}\n`
  const out = resolve(io.cwd, outPath)
  const schemaPath = join(dirname(out), SCHEMA_FILE)
  if (existsSync(out) && !force) {
    io.err(`ag-mcp config init: ${out} exists; pass --force to replace it`)
    return 1
  }
  // The schema beside it is replaced only when it is one of ours (ag-mcp writes it): never a stranger's file.
  const existing = existsSync(schemaPath) ? readFileSync(schemaPath, 'utf8') : undefined
  if (existing !== undefined && !existing.includes(`"title": "${SCHEMA_TITLE}"`) && !force) {
    io.err(`ag-mcp config init: ${schemaPath} exists and is not ag-mcp's schema; pass --force to replace it`)
    return 1
  }
  const table = flagTable(plugins)
  const values = local !== undefined ? localValues(local) : sharedValues()
  writeFileSync(out, startingFile(`./${SCHEMA_FILE}`, table, values), { mode: 0o644 })
  if (existing !== schemaText) writeFileSync(schemaPath, schemaText, { mode: 0o644 })
  const next =
    local !== undefined
      ? `ag-mcp --config ${out} is local mode on ${local === '.' ? 'the repository it is started in' : local}; check it with ag-mcp doctor --config ${out}`
      : `edit upstream and token-file (and repo, write-path if you narrow them), then run ag-mcp doctor --config ${out}`
  io.out(`wrote ${out}; its $schema is ${schemaPath}, beside it (editors complete and explain every key)\n${next}`)
  return 0
}

interface Values {
  set: Readonly<Record<string, unknown>>
  examples: Readonly<Record<string, unknown>>
  /** Keys this kind of file leaves out (local mode brings its own upstream and token). */
  omit?: (spec: FlagSpec) => boolean
}

/** Local mode: the repository, the default groups; narrowing is shown, commented out. */
function localValues(repo: string): Values {
  return {
    set: { local: repo === '.' ? true : repo, allow: ['default'], 'log-level': 'info' },
    examples: { 'write-path': ['src/**', 'docs/**'] },
    omit: (spec) => ['upstream-url', 'credential-file', 'credential-env'].includes(spec.plugin?.role ?? ''),
  }
}

/** A shared ag-server: where it is and the token's file; which repositories and paths, commented out. */
function sharedValues(): Values {
  return {
    set: {
      upstream: 'https://agentgit.example.com',
      'token-file': join(homedir(), '.config', 'ag-mcp', 'agent.token'),
      allow: ['default'],
      'log-level': 'info',
    },
    examples: { repo: ['your-repository'], 'write-path': ['src/**', 'docs/**'] },
  }
}

/**
 * A commented starting file (JSONC, which the config loader reads): each key is explained by
 * its flag's own description from the one flag table, so the comments cannot drift from --help.
 */
export function startingFile(schema: string, table: FlagTable, values: Values): string {
  const lines = [
    '// ag-mcp configuration: ag-mcp --config THIS-FILE (ag-mcp doctor --config THIS-FILE checks it).',
    '// Keys are the flag names without dashes (ag-mcp --help lists them all); a flag on the command',
    '// line wins over an AG_MCP_* variable, which wins over this file. Comments and trailing commas',
    '// are allowed. No key takes a token value: name a 0600 token file or a variable instead.',
    '{',
    '  // The schema of this file (written beside it): editors complete and explain every key from it.',
    `  "$schema": ${JSON.stringify(schema)},`,
  ]
  const entry = (key: string, value: unknown, commented: boolean): void => {
    const spec = table[key] as FlagSpec
    lines.push('', ...wrap(spec.describe, 94).map((l) => `  // ${l}`))
    const shown = Array.isArray(value) ? `[${value.map((v) => JSON.stringify(v)).join(', ')}]` : JSON.stringify(value)
    lines.push(`  ${commented ? '// ' : ''}${JSON.stringify(key)}: ${shown},`)
  }
  for (const [key, value] of Object.entries(values.set)) entry(key, value, false)
  lines.push('', '  // Further settings, at their defaults (or an example): remove the // to set one.')
  for (const [key, spec] of Object.entries(table)) {
    if (spec.cliOnly || key in values.set || values.omit?.(spec)) continue
    entry(key, values.examples[key] ?? spec.default ?? example(spec), true)
  }
  lines.push('}', '')
  return lines.join('\n')
}

/** A placeholder value for a key without a default, of the right type. */
function example(spec: FlagSpec): unknown {
  if (spec.bare !== undefined) return true
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
