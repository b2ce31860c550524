// Evaluates a lazy chunk: code that build.mjs bundled separately and embedded as a string, so
// the start-up parse skips it entirely (a dynamic import inside one bundle would still be
// parsed). Chunks are CommonJS; they only `require` Node built-ins.
import { createRequire } from 'node:module'
import { runInThisContext } from 'node:vm'

const requireBuiltin = createRequire(import.meta.url ?? `${process.cwd()}/`)

export function evalChunk(code: string, name: string): unknown {
  const fn = runInThisContext(`(function (module, exports, require) {${code}\n})`, { filename: `ag-mcp:${name}` }) as (
    m: { exports: unknown },
    e: unknown,
    r: NodeJS.Require,
  ) => void
  const mod: { exports: unknown } = { exports: {} }
  fn(mod, mod.exports, requireBuiltin)
  // build.mjs wraps this in an ESM facade that re-exports each name (default included).
  return mod.exports
}
