// Evaluates a lazy chunk: code that build.mjs bundled separately and embedded as a (deflated)
// string, so the start-up parse skips it entirely (a dynamic import inside one bundle would still be
// parsed). Chunks are CommonJS; they only `require` Node built-ins.
// Built-ins are fetched when the first chunk is evaluated, not imported: a static import costs
// start-up time, and most processes evaluate their first chunk only at the first tools/call.
let requireBuiltin: NodeJS.Require | undefined

/** `packed` is the chunk's code, deflated and base64-encoded by build.mjs. */
export function evalChunk(packed: string, name: string): unknown {
  const code = process.getBuiltinModule('node:zlib').inflateRawSync(Buffer.from(packed, 'base64')).toString('utf8')
  requireBuiltin ??= process.getBuiltinModule('node:module').createRequire(import.meta.url ?? `${process.cwd()}/`)
  const fn = process
    .getBuiltinModule('node:vm')
    .runInThisContext(`(function (module, exports, require, __agImportMetaUrl) {${code}\n})`, {
      filename: `ag-mcp:${name}`,
    }) as (m: { exports: unknown }, e: unknown, r: NodeJS.Require, url: string) => void
  const mod: { exports: unknown } = { exports: {} }
  fn(mod, mod.exports, requireBuiltin, import.meta.url)
  // build.mjs wraps this in an ESM facade that re-exports each name (default included).
  return mod.exports
}
