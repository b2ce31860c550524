// Validators for every message ag-mcp writes, compiled from the unmodified MCP schemas in
// test/fixtures/mcp-schema/<revision>/schema.json (draft-07 for 2025-03-26 and 2025-06-18,
// draft 2020-12 for 2025-11-25 and 2026-07-28). Compiled once per process, lazily.
import { readFileSync } from 'node:fs'
import { Ajv } from 'ajv'
import type { ValidateFunction } from 'ajv'
import { Ajv2020 } from 'ajv/dist/2020.js'

export const REVISIONS = ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26'] as const
export type Revision = (typeof REVISIONS)[number]
export const MODERN: Revision = '2026-07-28'
export const LEGACY: readonly Revision[] = ['2025-11-25', '2025-06-18', '2025-03-26']

/** Copies kept in the repository (see its README), so a clone alone runs the tests. */
export const SCHEMA_ROOT = new URL('../fixtures/mcp-schema/', import.meta.url)

/** Which result definition answers which method (the same names in every revision). */
const RESULT_OF: Record<string, string> = {
  initialize: 'InitializeResult',
  ping: 'EmptyResult',
  'server/discover': 'DiscoverResult',
  'tools/list': 'ListToolsResult',
  'tools/call': 'CallToolResult',
  'resources/list': 'ListResourcesResult',
  'resources/templates/list': 'ListResourceTemplatesResult',
  'resources/read': 'ReadResourceResult',
  'prompts/list': 'ListPromptsResult',
  'prompts/get': 'GetPromptResult',
}

interface Compiled {
  defs: Record<string, unknown>
  get(name: string): ValidateFunction
}

const compiled = new Map<Revision, Compiled>()

function compiledFor(rev: Revision): Compiled {
  let c = compiled.get(rev)
  if (c) return c
  const schema = JSON.parse(readFileSync(new URL(`${rev}/schema.json`, SCHEMA_ROOT), 'utf8')) as Record<string, unknown>
  const draft07 = rev === '2025-03-26' || rev === '2025-06-18'
  const defsKey = draft07 ? 'definitions' : '$defs'
  const defs = schema[defsKey] as Record<string, unknown>
  // validateFormats off: the schemas use `format: uri`, and ajv-formats is not a dependency.
  const opts = { strict: false, allErrors: true, validateFormats: false }
  const ajv = draft07 ? new Ajv(opts) : new Ajv2020(opts)
  const { $schema: _ignored, ...body } = schema
  ajv.addSchema({ ...body, $id: `mcp-${rev}` })
  const cache = new Map<string, ValidateFunction>()
  c = {
    defs,
    get(name: string): ValidateFunction {
      let v = cache.get(name)
      if (!v) {
        if (!(name in defs)) throw new Error(`schema ${rev} has no definition ${name}`)
        v = ajv.compile({ $ref: `mcp-${rev}#/${defsKey}/${name}` })
        cache.set(name, v)
      }
      return v
    },
  }
  compiled.set(rev, c)
  return c
}

/** Validates `value` against one named definition of a revision; returns readable problems. */
export function validateDefinition(rev: Revision, name: string, value: unknown): string[] {
  const v = compiledFor(rev).get(name)
  if (v(value)) return []
  return (v.errors ?? [])
    .slice(0, 8)
    .map((e) => `${rev} ${name}${e.instancePath || '/'} ${e.message ?? e.keyword} ${JSON.stringify(e.params)}`)
}

export function hasDefinition(rev: Revision, name: string): boolean {
  return name in compiledFor(rev).defs
}

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x)
}

/**
 * Validates one message the server wrote (one element of a batch, or one line) against
 * `rev`. A result is checked against the envelope AND the result definition of the method
 * it answers (when `requestMethod` is given); an error against the error envelope (and, in
 * 2026-07-28, against UnsupportedProtocolVersionError when its code is -32022).
 *
 * The one deliberate exception: DESIGN.md ("Protocol decisions") answers parse errors and
 * unidentifiable invalid requests with `id: null`, as JSON-RPC 2.0 requires. The MCP
 * schemas type RequestId as string|integer, so such a message cannot validate as is. For
 * those we require the code to be -32700 or -32600 and validate the message with `id`
 * removed (2025-11-25 and later make `id` optional on error responses; the older revisions
 * require it, so there we validate the `error` object against the envelope's error shape by
 * substituting id 0 — the only thing not checked is the null itself).
 */
export function validateServerMessage(rev: Revision, msg: unknown, requestMethod?: string): string[] {
  if (!isObject(msg)) return [`not a JSON object: ${JSON.stringify(msg)?.slice(0, 200)}`]
  const draft07 = rev === '2025-03-26' || rev === '2025-06-18'
  const errorEnvelope = draft07 ? 'JSONRPCError' : 'JSONRPCErrorResponse'
  const resultEnvelope = draft07 ? 'JSONRPCResponse' : 'JSONRPCResultResponse'
  if ('method' in msg) return [`the server sent a request or notification (${String(msg['method'])}); it never should`]
  if ('error' in msg) {
    if ('result' in msg) return ['a response carries both result and error']
    let checked: Record<string, unknown> = msg
    if (msg['id'] === null) {
      const code = isObject(msg['error']) ? msg['error']['code'] : undefined
      if (code !== -32700 && code !== -32600)
        return [`id null is only allowed for -32700/-32600, got code ${JSON.stringify(code)}`]
      const { id: _null, ...rest } = msg
      checked = draft07 ? { ...rest, id: 0 } : rest
    }
    const problems = validateDefinition(rev, errorEnvelope, checked)
    if (rev === MODERN && isObject(msg['error']) && msg['error']['code'] === -32022) {
      problems.push(...validateDefinition(rev, 'UnsupportedProtocolVersionError', checked))
    }
    return problems
  }
  if (!('result' in msg)) return ['neither result nor error']
  const problems = validateDefinition(rev, resultEnvelope, msg)
  if (requestMethod !== undefined) {
    const def = RESULT_OF[requestMethod]
    if (!def)
      problems.push(`a result answered ${requestMethod}, which has no result definition (it should have been an error)`)
    else if (!hasDefinition(rev, def))
      problems.push(`a result answered ${requestMethod}, which revision ${rev} does not define (${def})`)
    else problems.push(...validateDefinition(rev, def, msg['result']))
  }
  return problems
}
