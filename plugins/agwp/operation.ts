// The `operation` block of an AGWP tool's manifest: how the tool maps onto one AGWP request.
// The agwp plugin owns it: build.mjs checks every tool's block against OPERATION_SCHEMA and
// checkOperation, and the generic executor (executor.ts) runs it.
import type { JsonSchema } from '../../core/src/plugin-api.ts'

export interface Operation {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE'
  /** Path template under the API root, e.g. `/repos/{repo}/file`; every `{arg}` is URL-encoded. */
  path: string
  /** Arguments sent as query parameters (absent ones are omitted). */
  query?: string[]
  /** Arguments sent as JSON body fields; `{"bodyField": "argName"}` or a list of same-named fields. */
  body?: string[] | Record<string, string>
  /** Argument whose value is sent as the `AGWP-Run` header. */
  runHeader?: string
}

const argName = { type: 'string', pattern: '^[a-z][a-z0-9_]{0,63}$' }

export const OPERATION_SCHEMA: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['method', 'path'],
  properties: {
    method: { enum: ['GET', 'POST', 'PUT', 'DELETE'] },
    path: { type: 'string', pattern: '^/' },
    query: { type: 'array', items: argName },
    body: {
      oneOf: [
        { type: 'array', items: argName },
        { type: 'object', additionalProperties: argName },
      ],
    },
    runHeader: argName,
  },
}

/** Every argument the operation names must be an input property of its tool. */
export function checkOperation(operation: unknown, inputProperties: readonly string[]): string[] {
  const op = operation as Operation
  const used = [...op.path.matchAll(/\{([a-z0-9_]+)\}/g)].map((x) => x[1] as string)
  const body = Array.isArray(op.body) ? op.body : Object.values(op.body ?? {})
  const out: string[] = []
  for (const arg of [...used, ...(op.query ?? []), ...body, ...(op.runHeader ? [op.runHeader] : [])]) {
    if (!inputProperties.includes(arg)) out.push(`operation uses "${arg}", which is not an input property`)
  }
  return out
}

export function describeOperation(operation: unknown): string {
  const op = operation as Operation
  return `AGWP: \`${op.method} ${op.path}\``
}
