// Strips everything that could act on a terminal or hide text from a human reviewer, in one
// linear pass over UTF-16 code units (no regex: 100 MB inputs and hostile nesting must stay O(n)).
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
// - bidi marks/embeddings/overrides/isolates (U+061C, U+200E, U+200F, U+202A–U+202E,
//   U+2066–U+2069), zero-width and invisible format characters (U+200B–U+200D, U+2060–U+2064,
//   U+206A–U+206F, U+FEFF), tag characters U+E0000–U+E007F, and lone surrogates.
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

/**
 * Every code unit that starts something to remove: C0 except TAB/LF, DEL, C1, the bidi and
 * invisible format characters, and surrogates (pairs are checked for tags, lone ones removed).
 * Without the `u` flag a class matches single UTF-16 code units, which is what is wanted here.
 */
const JUMP_AFTER = 64

/** Same set as CANDIDATE, for the JS stepping loop. */
function needsWork(c: number): boolean {
  if (c >= 0x20 && c < 0x7f) return false
  if (c < 0x20) return c !== LF && c !== 0x09
  if (c <= 0x9f) return true
  if (c < 0x061c) return false
  if (c >= 0xd800 && c <= 0xdfff) return true
  return (
    c === 0x061c ||
    (c >= 0x200b && c <= 0x200f) ||
    (c >= 0x202a && c <= 0x202e) ||
    (c >= 0x2060 && c <= 0x2064) ||
    (c >= 0x2066 && c <= 0x206f) ||
    c === 0xfeff
  )
}

const CANDIDATE =
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ud800-\udfff]/g

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

/** Index of the first code unit that may need removing, or -1 for a clean string (the common case). */
function firstCandidate(s: string, from: number): number {
  const n = s.length
  let i = from
  // Step in JS for a short stretch (dense dirt, short strings); past it, let the regex engine
  // jump to the next candidate (long clean stretches scan natively).
  const stepUntil = Math.min(n, i + JUMP_AFTER)
  while (i < stepUntil && !needsWork(s.charCodeAt(i))) i++
  if (i < stepUntil) return i
  if (i >= n) return -1
  CANDIDATE.lastIndex = i
  return CANDIDATE.test(s) ? CANDIDATE.lastIndex - 1 : -1
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
    if (c >= 0xd800 && c <= 0xdfff) {
      const d = s.charCodeAt(i + 1)
      if (c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff) {
        // U+E0000–U+E007F (tags) are DB40 DC00–DC7F
        if (!(c === 0xdb40 && d <= 0xdc7f)) {
          i += 2
          continue
        }
        end = i + 2
      } else end = i + 1 // lone surrogate
    } else if (c === ESC) end = skipEscape(s, i)
    else if (c === C1_CSI) end = skipCsi(s, i + 1)
    else if (isStringIntroducer8(c)) end = skipString(s, i + 1)
    else if (c === CR && s.charCodeAt(i + 1) === LF) {
      end = i + 1
      count = 0
    } else end = i + 1
    out += s.slice(keepFrom, i)
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
 * Sanitizes every string and object key of a JSON-like value into a new value (the input is not
 * mutated). `removed` also counts object entries dropped because their sanitized key collided
 * with another key (the key that needed no sanitizing wins).
 */
export function sanitizeDeep(value: unknown): { value: unknown; removed: number } {
  let removed = 0
  const mapped = mapStringsDeep(value, (s) => {
    const first = firstCandidate(s, 0)
    if (first < 0) return s // clean: no result object
    const r = sanitizeFrom(s, first)
    removed += r.removed
    return r.text
  })
  return { value: mapped.value, removed: removed + mapped.droppedKeys }
}
