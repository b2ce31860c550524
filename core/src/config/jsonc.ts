// JSON with comments (JSONC), as editors and VS Code's own settings allow: `//` and `/* */`
// comments and trailing commas, then plain JSON.parse. Comments and trailing commas become
// spaces (newlines kept), so every offset, and so every line and column an error names, is the
// file's own. Hand-written rather than jsonc-parser (which operator/host-config.ts uses to edit
// files in place): the config loader runs at every start-up with --config, and 10 kB of parser
// in the start-up bundle is paid by every process; this is one pass over the text.

/** A JSONC file that does not parse: `line` and `column` count from 1. */
export class JsoncError extends Error {
  constructor(
    readonly reason: string,
    readonly line: number,
    readonly column: number,
  ) {
    super(`line ${line}, column ${column}: ${reason}`)
  }
}

/** Parses JSONC text; throws JsoncError naming the line and column of the first problem. */
export function parseJsonc(text: string): unknown {
  const plain = toPlainJson(text)
  try {
    return JSON.parse(plain)
  } catch (e) {
    const message = (e as Error).message
    // V8 names the offset of most problems ("… in JSON at position 42"), but not of an unexpected
    // token (it quotes the text instead, which is not repeated here) nor of a premature end.
    const at = /at position (\d+)/.exec(message)
    const offset = at ? Number(at[1]) : firstBadOffset(plain)
    const reason = message
      .replace(/\s*in JSON at position \d+.*$/, '')
      .replace(/, ".*" is not valid JSON$/s, '')
      .replace(/^Unexpected end of JSON input$/, 'the file ends too early')
      .replace(
        /^(Unexpected token ')(\s)'/,
        (_m, head: string, ch: string) => `${head}${JSON.stringify(ch).slice(1, -1)}'`,
      )
    throw located(text, offset, reason)
  }
}

/**
 * Where JSON.parse fails when it does not say: the shortest prefix that is no longer the start
 * of some valid JSON text ends at it. A prefix that is such a start either parses or fails only
 * at its end, so the test is monotone and a binary search finds it (config files are small).
 */
function firstBadOffset(plain: string): number {
  const startsValid = (n: number): boolean => {
    try {
      JSON.parse(plain.slice(0, n))
      return true
    } catch (e) {
      const m = (e as Error).message
      const at = /at position (\d+)/.exec(m)
      return m === 'Unexpected end of JSON input' || (at !== null && Number(at[1]) >= n)
    }
  }
  let lo = 0 // startsValid(lo) holds (the empty prefix)
  let hi = plain.length // when the whole text is a valid start, the problem is its end
  if (startsValid(hi)) return plain.trimEnd().length
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1
    if (startsValid(mid)) lo = mid
    else hi = mid
  }
  return hi - 1
}

function located(text: string, offset: number, reason: string): JsoncError {
  const before = text.slice(0, offset)
  const line = before.split('\n').length
  return new JsoncError(reason, line, offset - before.lastIndexOf('\n'))
}

/** The text with comments and trailing commas replaced by spaces; strings are left alone. */
function toPlainJson(text: string): string {
  const out = text.split('')
  const blank = (from: number, to: number): void => {
    for (let i = from; i < to; i++) if (out[i] !== '\n' && out[i] !== '\r') out[i] = ' '
  }
  // An editor may save a byte order mark; JSON.parse refuses one.
  if (out[0] === '\uFEFF') out[0] = ' '
  /** The last ',' outside strings and comments, while only whitespace or comments followed it. */
  let pendingComma = -1
  /** The last character outside strings and comments that is not whitespace ('"' for a string). */
  let last = ''
  let i = 0
  while (i < text.length) {
    const c = text[i] as string
    if (c === '"') {
      pendingComma = -1
      last = c
      i++
      while (i < text.length && text[i] !== '"' && text[i] !== '\n') i += text[i] === '\\' ? 2 : 1
      i++ // past the closing quote (an unterminated string is left for JSON.parse to name)
    } else if (c === '/' && text[i + 1] === '/') {
      const end = text.indexOf('\n', i)
      const stop = end === -1 ? text.length : end
      blank(i, stop)
      i = stop
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2)
      if (end === -1) throw located(text, i, 'a /* comment is never closed')
      blank(i, end + 2)
      i = end + 2
    } else if (c === ',') {
      // Only a comma after a value may trail: `[,]` and `{"a": 1,,}` stay errors.
      pendingComma = last === '' || '[{,:'.includes(last) ? -1 : i
      last = c
      i++
    } else if (c === '}' || c === ']') {
      if (pendingComma !== -1) out[pendingComma] = ' '
      pendingComma = -1
      last = c
      i++
    } else {
      if (c !== ' ' && c !== '\t' && c !== '\n' && c !== '\r' && c !== '\uFEFF') {
        pendingComma = -1
        last = c
      }
      i++
    }
  }
  return out.join('')
}
