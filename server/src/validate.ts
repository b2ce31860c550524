import { Ajv2020, type ValidateFunction, type ErrorObject } from 'ajv/dist/2020.js'
import schema from '../../contract/agwp-v1.schema.json' with { type: 'json' }
import { invalid } from './errors.ts'

// Request bodies are validated against the shared contract, the same file the agwp
// client's types are generated from, so server and client cannot drift apart.
const ajv = new Ajv2020({ strict: true, allErrors: false })
ajv.addSchema(schema)
const cache = new Map<string, ValidateFunction>()

export function validator(def: string): ValidateFunction {
  let v = cache.get(def)
  if (!v) {
    const f = ajv.getSchema(`${schema.$id}#/$defs/${def}`)
    if (!f) throw new Error(`no schema definition ${def}`)
    v = f
    cache.set(def, v)
  }
  return v
}

export function validateBody<T>(def: string, body: unknown): T {
  const v = validator(def)
  if (!v(body)) {
    const e = (v.errors ?? [])[0] as ErrorObject | undefined
    const where = e ? e.instancePath || '(body)' : '(body)'
    const extra =
      e && e.keyword === 'additionalProperties'
        ? ` '${String((e.params as { additionalProperty?: string }).additionalProperty)}'`
        : ''
    throw invalid(`request body does not match ${def}: ${where} ${e?.message ?? 'is invalid'}${extra}`, {
      schema: def,
      path: where,
      keyword: e?.keyword ?? '',
    })
  }
  return body as T
}
