// Strips everything that could act on a terminal or hide text from a human reviewer, in one
// linear pass over UTF-16 code units (no backtracking regex: 100 MB inputs and hostile nesting
// must stay O(n)).
//
// What goes, each counted once in `removed`:
// - ESC sequences: CSI (`ESC [` params intermediates final), string sequences OSC/DCS/SOS/PM/APC
//   (`ESC ] P X ^ _` … terminator), nF escapes (`ESC` intermediates final, e.g. `ESC ( B`) and
//   two-char escapes (`ESC` + one printable ASCII char). A lone ESC counts alone.
// - the C1 forms of the same introducers (U+009B CSI, U+009D OSC, U+0090 DCS, U+0098 SOS,
//   U+009E PM, U+009F APC) with the same bodies; any other C1 control U+0080–U+009F.
// - C0 controls except `\n` and `\t`, and DEL. A CR directly followed by LF is line-ending
//   normalization (CRLF → LF) and is NOT counted; a lone CR (which can overwrite a terminal line)
//   is removed and counted.
// - every code point that is Default_Ignorable_Code_Point or of general category Cf (format),
//   as the Unicode data of the running Node defines them (`\p{…}` property escapes, each code
//   unit looked up once, when a text first holds it; no hand list): bidi marks, embeddings, overrides and isolates; zero-width
//   space, joiners (ZWJ too: an emoji ZWJ sequence is shown as its parts) and the word joiner;
//   the BOM; soft hyphen; combining grapheme joiner; Mongolian vowel separator; Hangul fillers;
//   variation selectors (U+FE00–FE0F, U+E0100–E01EF: like tag characters they can carry bytes
//   after any character); interlinear annotation marks; tag characters; and the rest.
// - lone surrogates.
// - U+2028 LINE SEPARATOR and U+2029 PARAGRAPH SEPARATOR are replaced by `\n` (and counted):
//   they break lines for some readers and not others.
//
// String sequences end at BEL, ST (`ESC \` or U+009C), or CAN/SUB (terminator removed with it).
// An unterminated or interrupted string sequence ends just before the next `\n` (kept), the next
// ESC or C1 introducer (which starts a new sequence), or the end of input: at most the rest of one
// line is lost, never the rest of the document. A CSI ends at its final byte, or just before the
// first character that cannot belong to it (that character is then processed normally).

import { mapStringsDeep } from './deep.ts'

export interface SanitizeResult {
  text: string
  removed: number
}

const ESC = 0x1b
const BEL = 0x07
const CAN = 0x18
const SUB = 0x1a
const LF = 0x0a
const CR = 0x0d
const C1_ST = 0x9c
const C1_CSI = 0x9b

/** Introducer character after ESC (7-bit) or the C1 code point (8-bit) of a string sequence. */
function isStringIntroducer7(c: number): boolean {
  return (
    c === 0x5d /* ] OSC */ || c === 0x50 /* P DCS */ || c === 0x58 /* X SOS */ || c === 0x5e /* ^ PM */ || c === 0x5f
  ) /* _ APC */
}
function isStringIntroducer8(c: number): boolean {
  return c === 0x9d || c === 0x90 || c === 0x98 || c === 0x9e || c === 0x9f
}

const JUMP_AFTER = 64

/** Default-ignorable and format code points, from Node's Unicode data. */
const IGNORABLE = '\\p{Default_Ignorable_Code_Point}\\p{Cf}'

/**
 * Per BMP code unit: 0 not yet classified, 1 may start something to remove (C0 except TAB and
 * LF, DEL, C1, the ignorable and format characters, U+2028/U+2029, surrogates: a pair is looked
 * at whole, in sanitizeFrom), 2 plain. Below U+0100 it is filled at load; above, each code unit is
 * classified the first time a text holds it (see classify). Classifying all of the BMP up front
 * cost every process about 3 ms of CPU before its first answer (a 64 K-unit string, a regex pass
 * over it, and the garbage), for text that is almost always ASCII.
 */
const bmpTable = new Uint8Array(0x10000)
bmpTable.fill(2, 0x20, 0x7f)
bmpTable.fill(1, 0, 0x20)
bmpTable[LF] = 2
bmpTable[0x09] = 2
bmpTable.fill(1, 0x7f, 0xa0)
bmpTable.fill(1, 0xd800, 0xe000)
bmpTable[0x2028] = 1
bmpTable[0x2029] = 1

/** Sticky, on one BMP code unit: is it ignorable or a format character? */
const IGNORABLE_UNIT = new RegExp(`[${IGNORABLE}]`, 'uy')

/**
 * Classifies a not-yet-seen code unit (U+00A0 and up, never a surrogate) and remembers it. The
 * regex is compiled on the first call: a process whose texts are ASCII never pays for it.
 */
function classify(c: number): number {
  IGNORABLE_UNIT.lastIndex = 0
  const v = IGNORABLE_UNIT.test(String.fromCharCode(c)) ? 1 : 2
  bmpTable[c] = v
  return v
}

/** Is the BMP code unit `c` one that may start something to remove? */
function mayRemove(c: number): boolean {
  const v = bmpTable[c] as number
  return (v === 0 ? classify(c) : v) === 1
}

/** Sticky: is the (astral) code point at lastIndex ignorable or a format character? */
const IGNORABLE_AT = new RegExp(`[${IGNORABLE}]`, 'uy')

/** Index just past a CSI whose parameter bytes start at `i`. */
function skipCsi(s: string, i: number): number {
  const n = s.length
  while (i < n) {
    const c = s.charCodeAt(i)
    if (c >= 0x20 && c <= 0x3f)
      i++ // parameter (0x30–0x3F) and intermediate (0x20–0x2F) bytes
    else if (c >= 0x40 && c <= 0x7e)
      return i + 1 // final byte
    else return i // malformed: stop before a character that cannot belong to a CSI
  }
  return i
}

/** Index just past a string sequence whose body starts at `i` (see the rule at the top). */
function skipString(s: string, i: number): number {
  const n = s.length
  while (i < n) {
    const c = s.charCodeAt(i)
    if (c === BEL || c === C1_ST || c === CAN || c === SUB) return i + 1
    if (c === ESC) return s.charCodeAt(i + 1) === 0x5c /* \ */ ? i + 2 : i
    if (c === LF || (c >= 0x80 && c <= 0x9f)) return i
    i++
  }
  return i
}

/** Index just past the escape sequence starting with the ESC at `i`. */
function skipEscape(s: string, i: number): number {
  const next = s.charCodeAt(i + 1) // NaN past the end: no branch below matches
  if (next === 0x5b /* [ */) return skipCsi(s, i + 2)
  if (isStringIntroducer7(next)) return skipString(s, i + 2)
  if (next >= 0x20 && next <= 0x2f) {
    // nF escape: intermediates then one final byte 0x30–0x7E
    let j = i + 1
    while (j < s.length && s.charCodeAt(j) >= 0x20 && s.charCodeAt(j) <= 0x2f) j++
    const f = s.charCodeAt(j)
    return f >= 0x30 && f <= 0x7e ? j + 1 : j
  }
  if (next >= 0x30 && next <= 0x7e) return i + 2
  return i + 1 // lone ESC (end of input, or followed by a control or non-ASCII character)
}

/**
 * Where the native scan stops: anything the table may mark below U+0100, and every code unit
 * from U+0100 on. ASCII and Latin-1 text is jumped over natively; past U+0100 the JS loop and
 * the table decide. (A class of the table's own ~30 ranges made V8 scan a 100 MB ASCII text
 * 10× slower than the old hand-written class of 10: it has a cliff at 16 ranges.)
 */
const WIDE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u00ad\u0100-\uffff]/g

/** Per high surrogate: 0 not yet known, 1 no ignorable code point behind it, 2 some. */
const astralBlocks = new Uint8Array(0x400)

/** Can a pair starting with the high surrogate `hi` be ignorable? Learned per block of 1024. */
function astralBlockMayHide(hi: number): boolean {
  const k = hi - 0xd800
  if (astralBlocks[k] === 0) {
    let some = false
    for (let lo = 0xdc00; lo <= 0xdfff && !some; lo++) {
      IGNORABLE_AT.lastIndex = 0
      some = IGNORABLE_AT.test(String.fromCharCode(hi, lo))
    }
    astralBlocks[k] = some ? 2 : 1
  }
  return astralBlocks[k] === 2
}

/** Index of the first code unit that may need removing, or -1 for a clean string (the common case). */
function firstCandidate(s: string, from: number): number {
  const n = s.length
  const t = bmpTable
  let i = from
  for (;;) {
    // Step in JS (dense dirt, short strings, text beyond Latin-1); after JUMP_AFTER Latin-1
    // units in a row, let the regex engine jump to the next code unit worth a look.
    let latin = 0
    while (i < n) {
      const c = s.charCodeAt(i)
      const v = t[c]
      if (v === 1 || (v === 0 && classify(c) === 1)) {
        const d = s.charCodeAt(i + 1)
        // an ordinary astral character (an emoji) is passed over here, without a call
        if (c >= 0xd800 && c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff && !astralBlockMayHide(c)) {
          i += 2
          latin = 0
          continue
        }
        return i
      }
      if (c >= 0x100) latin = 0
      else if (++latin >= JUMP_AFTER) break
      i++
    }
    if (i >= n) return -1
    WIDE.lastIndex = i
    if (!WIDE.test(s)) return -1
    i = WIDE.lastIndex - 1
  }
}

export function sanitizeText(s: string): SanitizeResult {
  const first = firstCandidate(s, 0)
  return first < 0 ? { text: s, removed: 0 } : sanitizeFrom(s, first)
}

/** Does the work of sanitizeText from the first candidate on. */
function sanitizeFrom(s: string, first: number): SanitizeResult {
  let removed = 0
  let out = '' // V8 builds `+=` as a rope: cheaper than an array of millions of slices
  let touched = false
  let keepFrom = 0 // start of the pending run of kept characters
  let i = first
  for (; i >= 0; i = firstCandidate(s, i)) {
    const c = s.charCodeAt(i)
    let end: number
    let count = 1
    let put = ''
    if (c >= 0xd800 && c <= 0xdfff) {
      const d = s.charCodeAt(i + 1)
      if (c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff) {
        IGNORABLE_AT.lastIndex = i
        if (!IGNORABLE_AT.test(s)) {
          i += 2 // an ordinary astral character (an emoji, a CJK extension): kept
          continue
        }
        end = i + 2
      } else end = i + 1 // lone surrogate
    } else if (c === 0x2028 || c === 0x2029) {
      end = i + 1
      put = '\n'
    } else if (c === ESC) end = skipEscape(s, i)
    else if (c === C1_CSI) end = skipCsi(s, i + 1)
    else if (isStringIntroducer8(c)) end = skipString(s, i + 1)
    else if (c === CR && s.charCodeAt(i + 1) === LF) {
      end = i + 1
      count = 0
    } else end = i + 1
    out += s.slice(keepFrom, i) + put
    touched = true
    keepFrom = end
    removed += count
    i = end
    if (i >= s.length) break
  }
  if (!touched) return { text: s, removed: 0 }
  out += s.slice(keepFrom)
  return { text: out, removed }
}

/**
 * Object keys whose string values name files: a hidden or control character there is not
 * removed but escaped as `\u{…}` (and counted), so the name shown is one the tools accept back
 * (unescapeName) instead of a cleaned name that does not exist. Only path-like values: any other
 * value (a commit's author, a title) is cleaned, as text is, leaving no `\u{1b}[32m` residue.
 */
const NAME_KEYS: ReadonlySet<string> = new Set(['path', 'old_path', 'paths', 'from', 'to'])

/**
 * Is the string under `key`, in the object `holder`, a file name? A NAME_KEYS value, or the
 * `name` of a directory entry: an object that also holds a `path` (the name is its last
 * segment, so it is escaped the same way and still joins to it).
 */
export function isNameValue(key: string | undefined, holder: object | undefined): boolean {
  if (key === undefined) return false
  if (NAME_KEYS.has(key)) return true
  return key === 'name' && holder !== undefined && typeof (holder as Record<string, unknown>)['path'] === 'string'
}

/**
 * An escape as escapeName writes it, behind one backslash or more: the fenced JSON line shows
 * `\u{202e}` as `\\u{202e}` (JSON doubles a backslash), and a model copying the text copies
 * that. escapeName writes a real backslash as `\u{5c}`, so a shown name never holds two
 * backslashes in a row and the doubled form means the same escape.
 */
const ESCAPED = /\\+u\{([0-9a-fA-F]{1,6})\}/g

/**
 * A name with every code point sanitize would remove, TAB, LF and the backslash itself written
 * as `\u{hex}`: visible, one line, and reversible by unescapeName.
 */
export function escapeName(s: string): SanitizeResult {
  if (firstCandidate(s, 0) < 0 && !/[\\\t\n]/.test(s)) return { text: s, removed: 0 }
  let out = ''
  let escaped = 0
  for (let i = 0; i < s.length; ) {
    const c = s.charCodeAt(i)
    const d = s.charCodeAt(i + 1)
    const pair = c >= 0xd800 && c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff
    const units = pair ? 2 : 1
    const cp = pair ? (s.codePointAt(i) as number) : c
    let hide = c === 0x5c || c === 0x09 || c === LF
    if (!hide && pair) {
      IGNORABLE_AT.lastIndex = i
      hide = IGNORABLE_AT.test(s)
    } else if (!hide) hide = mayRemove(c)
    if (hide) {
      out += `\\u{${cp.toString(16)}}`
      if (c !== 0x5c) escaped++
    } else out += s.slice(i, i + units)
    i += units
  }
  return { text: out, removed: escaped }
}

/**
 * The name escapeName showed, back as it is, also when copied from the JSON text with its
 * backslash doubled (a string without escapes is returned as is).
 */
export function unescapeName(s: string): string {
  if (!s.includes('\\u{')) return s
  return s.replace(ESCAPED, (m, hex: string) => {
    const cp = Number.parseInt(hex, 16)
    return cp <= 0x10ffff ? String.fromCodePoint(cp) : m
  })
}

/**
 * Sanitizes every string and object key of a JSON-like value into a new value (the input is not
 * mutated); file names (isNameValue) are escaped instead (escapeName). `removed` also
 * counts object entries dropped because their sanitized key collided with another key (the key
 * that needed no sanitizing wins).
 */
export function sanitizeDeep(value: unknown): { value: unknown; removed: number } {
  let removed = 0
  const mapped = mapStringsDeep(value, (s, key, holder) => {
    if (isNameValue(key, holder)) {
      const r = escapeName(s)
      removed += r.removed
      return r.text
    }
    const first = firstCandidate(s, 0)
    if (first < 0) return s // clean: no result object
    const r = sanitizeFrom(s, first)
    removed += r.removed
    return r.text
  })
  return { value: mapped.value, removed: removed + mapped.droppedKeys }
}
