// Characters a person reviewing a change must see and would not: controls, bidi embeddings,
// overrides and isolates, zero-width and other invisible format characters, line and paragraph
// separators, lone surrogates. Rather than removing them (what ag-mcp does for a model), text
// shown to people names each one, `\u{202e}`, so a reviewer sees that a line is not what it looks
// like. Tab and line feed are ordinary text. Shared by ag-server's review page (each one in a
// marked element) and `ag-mcp proposals` on a terminal (where it also defuses escape sequences).

export interface Hidden {
  /** The escape shown in its place: `\u{202e}`. */
  shown: string
  /** The code point's name where a reviewer gains from it, else its U+ number. */
  title: string
  /** A bidi control: it can reorder what the rest of the line seems to say. */
  bidi: boolean
}

// With the u flag each code point is one unit, so \p{Cs} is exactly a lone surrogate.
const HIDDEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Default_Ignorable_Code_Point}]/u
const HIDDEN_ALL = new RegExp(HIDDEN.source, 'gu')

const NAMES: Record<number, string> = {
  27: 'ESCAPE',
  13: 'CARRIAGE RETURN',
  127: 'DELETE',
  173: 'SOFT HYPHEN',
  1564: 'ARABIC LETTER MARK',
  8203: 'ZERO WIDTH SPACE',
  8204: 'ZERO WIDTH NON-JOINER',
  8205: 'ZERO WIDTH JOINER',
  8206: 'LEFT-TO-RIGHT MARK',
  8207: 'RIGHT-TO-LEFT MARK',
  8232: 'LINE SEPARATOR',
  8233: 'PARAGRAPH SEPARATOR',
  8234: 'LEFT-TO-RIGHT EMBEDDING',
  8235: 'RIGHT-TO-LEFT EMBEDDING',
  8236: 'POP DIRECTIONAL FORMATTING',
  8237: 'LEFT-TO-RIGHT OVERRIDE',
  8238: 'RIGHT-TO-LEFT OVERRIDE',
  8288: 'WORD JOINER',
  8294: 'LEFT-TO-RIGHT ISOLATE',
  8295: 'RIGHT-TO-LEFT ISOLATE',
  8296: 'FIRST STRONG ISOLATE',
  8297: 'POP DIRECTIONAL ISOLATE',
  65279: 'ZERO WIDTH NO-BREAK SPACE (BOM)',
}

const isBidi = (cp: number): boolean =>
  cp === 0x061c || cp === 0x200e || cp === 0x200f || (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069)

function hidden(ch: string): Hidden {
  const cp = ch.codePointAt(0) as number
  const hex = cp.toString(16)
  const plus = `U+${hex.toUpperCase().padStart(4, '0')}`
  const name = NAMES[cp]
  return { shown: `\\u{${hex}}`, title: name ? `${plus} ${name}` : plus, bidi: isBidi(cp) }
}

/** The text cut into plain runs and hidden characters, in order; tab and line feed stay plain. */
export function visibleParts(text: string): (string | Hidden)[] {
  if (!HIDDEN.test(text)) return [text]
  const out: (string | Hidden)[] = []
  let from = 0
  for (const m of text.matchAll(HIDDEN_ALL)) {
    const ch = m[0]
    if (ch === '\t' || ch === '\n') continue
    if (m.index > from) out.push(text.slice(from, m.index))
    out.push(hidden(ch))
    from = m.index + ch.length
  }
  if (from < text.length) out.push(text.slice(from))
  return out
}

/** The same as one string: each hidden character written as its escape (for a terminal). */
export function showHidden(text: string): string {
  const parts = visibleParts(text)
  return parts.length === 1 && typeof parts[0] === 'string'
    ? parts[0]
    : parts.map((p) => (typeof p === 'string' ? p : p.shown)).join('')
}
