// The regular expression that finds one configured secret (the token) in every form a file, a
// patch, a URL or a log line can carry it, also split, wrapped or only half there.
//
// Forms, per character of the secret (any mix within one occurrence, so "percent-encoded in
// part" is covered): the character itself; its UTF-8 bytes percent-encoded (`%61`, either hex
// case, also for letters and digits, which encodeURIComponent leaves alone); a JSON escape
// (`\u0061`, and `\/` `\"` `\\`); an HTML character reference (`&#97;`, `&#x61;`, zero-padded,
// `;` optional, and the named references of ASCII punctuation such as `&lowbar;`).
// Whole-secret forms: base64 in the standard and the URL-safe alphabet, for each of the three
// byte alignments the secret can have inside a longer base64 stream. Only the characters fully
// determined by the secret are matched (see base64Cores), so padding, and what the neighbouring
// bytes contribute, do not matter.
//
// Between any two characters of any form, a run of separators (SEP) is allowed: whitespace of
// any kind and length (line breaks, CRLF, indentation) and the characters that start or glue
// lines in patches, quotes, comments and string concatenations (`+ - > | " ' \` \ # * / . , ; ( ) [ ]`).
// So `+agwp_abc\r\n+    def` in a patch, `"agwp_abc" +\n "def"` in code, and a MIME-wrapped
// base64 body are all one occurrence. SEP is a single character class, so a megabyte of spaces
// cannot overflow V8's backtrack stack, and lazy (`*?`): a secret may itself hold separator
// characters (spaces, `-`), and a greedy SEP could eat one the secret needs next, ending a half
// early and leaving the rest of the secret in view.
//
// Halves: a line (or a string, e.g. one search match) that ENDS with at least `partialMin`
// leading characters of the secret, or that STARTS with at least `partialMin` consecutive
// characters of it, is also redacted: one line of a token split over two lines must not show.
// The start-of-line form uses the plain characters only (it enumerates every window of the
// secret, so its size is quadratic in the secret's length).
//
// Cost on clean text: every alternative begins with a literal character (or `\n`), so V8's
// quick check rejects most positions at once; an attempt that starts costs O(secret length)
// plus the separators it crosses.

/** Characters allowed between two characters of a secret form (a regex class body). */
const SEP_CHARS = '\\s+\\-<>|"\'`\\\\#*/.,;()\\[\\]'
const SEP = `[${SEP_CHARS}]*?`

/** Lines that end a half token may still carry closing quotes, brackets or a `+` before the break. */
const LINE_END = '(?=[^A-Za-z0-9\\n]*(?:\\n|$))'
/** What may stand before a half token at the start of a line (a patch sign, indentation, a quote). */
const LEAD_CHARS = '[^A-Za-z0-9\\n]*'

/** The named HTML character references of ASCII punctuation (HTML5; the common aliases). */
const HTML_NAMED: Record<string, readonly string[]> = {
  '!': ['excl'],
  '"': ['quot', 'QUOT'],
  '#': ['num'],
  $: ['dollar'],
  '%': ['percnt'],
  '&': ['amp', 'AMP'],
  "'": ['apos'],
  '(': ['lpar'],
  ')': ['rpar'],
  '*': ['ast', 'midast'],
  '+': ['plus'],
  ',': ['comma'],
  '.': ['period'],
  '/': ['sol'],
  ':': ['colon'],
  ';': ['semi'],
  '<': ['lt', 'LT'],
  '=': ['equals'],
  '>': ['gt', 'GT'],
  '?': ['quest'],
  '@': ['commat'],
  '[': ['lsqb', 'lbrack'],
  '\\': ['bsol'],
  ']': ['rsqb', 'rbrack'],
  '^': ['Hat'],
  _: ['lowbar', 'UnderBar'],
  '`': ['grave', 'DiacriticalGrave'],
  '{': ['lcub', 'lbrace'],
  '|': ['verbar', 'vert', 'VerticalLine'],
  '}': ['rcub', 'rbrace'],
}

function escapeRegExp(s: string): string {
  return s.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&')
}

/** A literal text with SEP allowed between its characters. */
function spaced(text: string): string {
  return Array.from(text, escapeRegExp).join(SEP)
}

/** A hex digit in either case. */
function hexDigit(h: string): string {
  return /[a-f]/i.test(h) ? `[${h.toLowerCase()}${h.toUpperCase()}]` : h
}

function hexDigits(n: number, width: number): string {
  return Array.from(n.toString(16).padStart(width, '0'), hexDigit).join(SEP)
}

/** Every way one code point of the secret may be written (see the top comment). */
function charAtom(ch: string): string {
  const cp = ch.codePointAt(0) as number
  const alts = [escapeRegExp(ch)]
  // percent-encoded UTF-8 bytes
  alts.push(Array.from(Buffer.from(ch, 'utf8'), (b) => `%${SEP}${hexDigits(b, 2)}`).join(SEP))
  // JSON \u escapes (a surrogate pair beyond the BMP), and the short escapes JSON allows
  const units = cp > 0xffff ? [ch.charCodeAt(0), ch.charCodeAt(1)] : [cp]
  alts.push(units.map((u) => `\\\\${SEP}u${SEP}${hexDigits(u, 4)}`).join(SEP))
  if (ch === '/' || ch === '"' || ch === '\\') alts.push(`\\\\${SEP}${escapeRegExp(ch)}`)
  // HTML character references: decimal, hex, named
  const zeros = `(?:0${SEP}){0,8}`
  alts.push(`&${SEP}#${SEP}${zeros}${spaced(String(cp))}(?:${SEP};)?`)
  alts.push(`&${SEP}#${SEP}[xX]${SEP}${zeros}${hexDigits(cp, 1)}(?:${SEP};)?`)
  for (const name of HTML_NAMED[ch] ?? []) alts.push(`&${SEP}${spaced(name)}${SEP};`)
  return `(?:${alts.join('|')})`
}

/**
 * The base64 characters fully determined by `bytes` when it starts at byte offset k (mod 3) of
 * a longer base64 stream: character j covers stream bits [6j, 6j+6), the secret covers
 * [8k, 8k + 8n); the characters before and after depend on neighbouring bytes and are left out.
 */
export function base64Cores(bytes: Buffer): string[] {
  const cores: string[] = []
  for (let k = 0; k < 3; k++) {
    const encoded = Buffer.concat([Buffer.alloc(k), bytes])
      .toString('base64')
      .replace(/=+$/, '')
    const first = Math.ceil((8 * k) / 6)
    const last = Math.floor((8 * k + 8 * bytes.length) / 6) // exclusive
    cores.push(encoded.slice(first, last))
  }
  return cores
}

/** Atoms joined by SEP; from index `optionalFrom` on, each further atom is optional (a prefix). */
function chain(atoms: readonly string[], optionalFrom = atoms.length): string {
  let tail = ''
  for (let i = atoms.length - 1; i >= optionalFrom; i--) tail = `(?:${SEP}${atoms[i]}${tail})?`
  return atoms.slice(0, optionalFrom).join(SEP) + tail
}

/** Fewest characters of a secret that count as a half token at a line boundary. */
export function partialMin(length: number, min: number): number {
  return Math.min(length, Math.max(min, Math.ceil(length / 4)))
}

/** First characters of a base64 core the quick test looks for (a prefix is a necessary condition). */
const CORE_PREFIX = 16

interface SecretParts {
  /** Whole forms, longest first. */
  whole: string[]
  /** A leading part at the end of a line ('' when the secret is too short to have halves). */
  lineEnd: string
  /** Windows a line may start with, to follow a lead ('' when none). */
  lineStart: string
  /** Necessary conditions of all the above, cheap to test (see compileSecrets). */
  quick: string[]
}

function secretParts(secret: string, minPartial: number): SecretParts {
  const chars = Array.from(secret)
  const atoms = chars.map(charAtom)
  const k = partialMin(chars.length, minPartial)
  const whole: string[] = [chain(atoms)]
  // The head: every whole chain and every line-end half starts with the first k atoms.
  const quick: string[] = [chain(atoms.slice(0, k))]
  for (const core of base64Cores(Buffer.from(secret, 'utf8'))) {
    const urlSafe = core.replace(/\+/g, '-').replace(/\//g, '_')
    for (const alphabet of urlSafe === core ? [core] : [core, urlSafe]) {
      whole.push(spaced(alphabet))
      quick.push(spaced(alphabet.slice(0, CORE_PREFIX)))
    }
  }
  if (k === chars.length) return { whole, lineEnd: '', lineStart: '', quick }
  const lineEnd = chain(atoms, k) + LINE_END
  // A line starting with any window of k or more consecutive characters (a suffix or a middle).
  const literal = chars.map(escapeRegExp)
  const windows: string[] = []
  for (let i = 0; i + k <= chars.length; i++) windows.push(chain(literal.slice(i), k))
  // Every window of k characters contains one of these aligned blocks of m: a window starting
  // at i holds the block at the first multiple of m from i, which ends by i + 2m - 1 <= i + k.
  const m = Math.floor((k + 1) / 2)
  for (let i = 0; i + m <= chars.length; i += m) quick.push(chain(literal.slice(i, i + m)))
  return { whole, lineEnd, lineStart: windows.join('|'), quick }
}

export interface SecretMatcher {
  /** Fails on text that cannot hold any form of any secret (nearly all text): one cheap pass. */
  quick: RegExp
  /** Every whole form: redacted first, everywhere. */
  whole: RegExp
  /**
   * Every half, run on what `whole` left; the named group `lead` (before a half at a line start)
   * is kept. A pass of its own: in one pattern a half that starts earlier (at the line break
   * before a secret that holds spaces) won over the whole form starting a character later, and
   * the rest of the secret stayed in view.
   */
  halves: RegExp
  /** Sticky: a half at the very start of the text, after an optional `lead`. */
  atStart: RegExp
}

/**
 * One matcher for all secrets. Scrubbing runs on every string of every result, so the common
 * case, text without any secret, is decided by `quick` alone; `whole` and `halves` (whose
 * line-start windows make it several times slower) run only where `quick` found something.
 */
export function compileSecrets(secrets: readonly string[], minPartial: number): SecretMatcher | undefined {
  if (secrets.length === 0) return undefined
  const whole = new Set<string>()
  const ends: string[] = []
  const starts: string[] = []
  const quick = new Set<string>()
  for (const s of secrets) {
    const parts = secretParts(s, minPartial)
    for (const a of parts.whole) whole.add(a)
    for (const q of parts.quick) quick.add(q)
    if (parts.lineEnd !== '') ends.push(parts.lineEnd)
    if (parts.lineStart !== '') starts.push(parts.lineStart)
  }
  // Longest first: when two forms start at one position, the longer one is redacted whole.
  const wholes = [...whole].sort((a, b) => b.length - a.length || (a < b ? -1 : 1))
  const halves = [...ends]
  const windows = starts.join('|')
  if (windows !== '') halves.push(`(?<lead>\\n${LEAD_CHARS})(?:${windows})`)
  return {
    quick: new RegExp([...quick].join('|')),
    whole: new RegExp(wholes.join('|'), 'g'),
    // never matches when there are no halves
    halves: new RegExp(halves.length === 0 ? '(?!)' : halves.join('|'), 'g'),
    // never matches when there are no windows
    atStart: new RegExp(windows === '' ? '(?!)' : `(?<lead>${LEAD_CHARS})(?:${windows})`, 'y'),
  }
}
