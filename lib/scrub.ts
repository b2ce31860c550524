// Replaces credentials with `[REDACTED]`: generic credential shapes, and each configured secret
// in every form a file, patch, URL or log can carry it, split or half there (secret-forms.ts).
//
// Linear-time discipline (JS regexes backtrack): every generic pattern starts with a lookbehind
// that forbids a preceding character of its own alphabet, so a run of token characters is tried
// from its first character only and the greedy tail is backtracked over at most once per run.
// Secret patterns are literal character chains with optional line breaks that cannot be
// confused with the secret's own characters, so each start position costs O(secret length).
// Unterminated PEM blocks are found with indexOf, not a lazy `[\s\S]*?`.
//
// A leaf of lib/: ag-mcp's core scrubs every result with it (core/src/safety/scrub.ts adds the walk
// over a value's strings), and ag-server's review page scrubs what it shows people with the same
// patterns.

import { compileSecrets } from './secret-forms.ts'
import type { SecretMatcher } from './secret-forms.ts'

export const REDACTED = '[REDACTED]'

/** Configured secrets shorter than this are ignored: redacting "a" everywhere would wreck output. */
export const MIN_SECRET_LENGTH = 8

const B64URL = 'A-Za-z0-9_\\-'
const ALNUM = 'A-Za-z0-9'
// Unbounded repeats are written `[c]{n}[c]*`, never `[c]{n,}`: V8 pushes one backtrack entry
// per character for the latter and overflows its regexp stack on multi-megabyte runs.

interface Shape {
  /** Literal start of the shape, as a regex fragment (one alternative of the hint scan). */
  hint: string
  /** A character that may not precede the shape (its own alphabet): see the top comment. */
  notAfter: RegExp
  /** The whole credential, sticky, tried only where the hint matched. */
  re: RegExp
  /** Text kept in front of `[REDACTED]` (the `Bearer ` scheme word), as a group-1 capture. */
  keepPrefix?: boolean
}

const notB64url = /[A-Za-z0-9_-]/
const notAlnum = /[A-Za-z0-9]/

const SHAPES: readonly Shape[] = [
  // AGWP tokens (minted by ag-server): agwp_ + at least 32 base64url characters.
  { hint: 'agwp_', notAfter: notB64url, re: new RegExp(`agwp_[${B64URL}]{32}[${B64URL}]*`, 'y') },
  // JWT / JWS compact form: header.payload.signature; the header always starts `eyJ` ('{"').
  {
    hint: 'eyJ',
    notAfter: /[A-Za-z0-9_.-]/,
    re: new RegExp(`eyJ[${B64URL}]{4}[${B64URL}]*\\.[${B64URL}]{4}[${B64URL}]*\\.[${B64URL}]*`, 'y'),
  },
  // GitHub classic and fine-grained tokens.
  {
    hint: 'gh[pousr]_|github_pat_',
    notAfter: notB64url,
    re: new RegExp(`(?:gh[pousr]_[${ALNUM}]{30}[${ALNUM}]*|github_pat_[${ALNUM}_]{30}[${ALNUM}_]*)`, 'y'),
  },
  // AWS access key ids (long-term AKIA, temporary ASIA).
  { hint: 'A[KS]IA', notAfter: notAlnum, re: new RegExp(`A[KS]IA[A-Z0-9]{16}(?![${ALNUM}])`, 'y') },
  // Slack tokens.
  { hint: 'xox[abprs]-', notAfter: notB64url, re: new RegExp(`xox[abprs]-[${ALNUM}-]{10}[${ALNUM}-]*`, 'y') },
  // Stripe secret and restricted keys.
  {
    hint: '[sr]k_(?:live|test)_',
    notAfter: notB64url,
    re: new RegExp(`[sr]k_(?:live|test)_[${ALNUM}]{16}[${ALNUM}]*`, 'y'),
  },
  // OpenAI (sk-, sk-proj-) and Anthropic (sk-ant-…) keys.
  { hint: 'sk-', notAfter: notB64url, re: new RegExp(`sk-[${B64URL}]{20}[${B64URL}]*`, 'y') },
  // Google API keys.
  { hint: 'AIza', notAfter: notB64url, re: new RegExp(`AIza[${B64URL}]{30}[${B64URL}]*`, 'y') },
  // `Bearer <token68>`: the scheme word is kept so the text still reads; the credential goes.
  {
    hint: '[Bb][Ee][Aa][Rr][Ee][Rr]',
    notAfter: notAlnum,
    re: /(bearer[ \t]+)[A-Za-z0-9\-._~+/]{8}[A-Za-z0-9\-._~+/]*=*/iy,
    keepPrefix: true,
  },
]

// One pass finds candidate starts for every shape; group k+1 tells which shape hinted.
const HINTS = new RegExp(SHAPES.map((sh) => `(${sh.hint})`).join('|'), 'g')

function scrubShapes(s: string): string {
  let out = ''
  let from = 0
  HINTS.lastIndex = 0
  for (let m = HINTS.exec(s); m !== null; m = HINTS.exec(s)) {
    const at = m.index
    const k = m.findIndex((g, idx) => idx > 0 && g !== undefined) - 1
    const shape = SHAPES[k]
    HINTS.lastIndex = at + 1
    if (shape === undefined || (at > 0 && shape.notAfter.test(s.charAt(at - 1)))) continue
    shape.re.lastIndex = at
    const hit = shape.re.exec(s)
    if (hit === null) continue
    const keep = shape.keepPrefix === true ? (hit[1] ?? '') : ''
    out += s.slice(from, at) + keep + REDACTED
    from = at + hit[0].length
    HINTS.lastIndex = from
  }
  return from === 0 ? s : out + s.slice(from)
}

const PEM_BEGIN = /-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY-----/g
const PEM_END = /-----END [A-Z0-9 ]{0,40}PRIVATE KEY-----/g

/**
 * Private key blocks up to their END line. Without an END line (e.g. cut output) the block runs
 * to the first line that cannot be PEM body (base64 or `Name: value` headers): a key cut in half
 * is still a secret, prose after it is not.
 */
function scrubPem(s: string): string {
  if (!s.includes('PRIVATE KEY-----')) return s
  let out = ''
  let from = 0
  // The END search result is reused while it lies ahead, and a failed search is never
  // repeated: many BEGIN lines without END must not make this quadratic.
  let endAt = -1
  let endStop = -1
  let noMoreEnds = false
  PEM_BEGIN.lastIndex = 0
  for (let m = PEM_BEGIN.exec(s); m !== null; m = PEM_BEGIN.exec(s)) {
    const bodyFrom = PEM_BEGIN.lastIndex
    if (!noMoreEnds && endAt < bodyFrom) {
      PEM_END.lastIndex = bodyFrom
      const end = PEM_END.exec(s)
      if (end === null) noMoreEnds = true
      else {
        endAt = end.index
        endStop = PEM_END.lastIndex
      }
    }
    const stop = !noMoreEnds && endAt >= bodyFrom ? endStop : pemBodyEnd(s, bodyFrom)
    out += s.slice(from, m.index) + REDACTED
    from = stop
    PEM_BEGIN.lastIndex = stop
  }
  return from === 0 ? s : out + s.slice(from)
}

const PEM_BODY_LINE = /^(?:[A-Za-z0-9+/=\t ]*|[A-Za-z-]+: .*)\r?$/

function pemBodyEnd(s: string, i: number): number {
  // the rest of the BEGIN line, then whole body lines
  let pos = i
  while (pos < s.length) {
    const nl = s.indexOf('\n', pos)
    const lineEnd = nl === -1 ? s.length : nl
    if (pos > i && !PEM_BODY_LINE.test(s.slice(pos, lineEnd))) return pos
    pos = nl === -1 ? s.length : nl + 1
  }
  return s.length
}

/** The replacement of one secret match: what stood before a half token at a line start stays. */
function redactKeepingLead(...args: unknown[]): string {
  const groups = args[args.length - 1] as { lead?: string } | undefined
  return (groups?.lead ?? '') + REDACTED
}

function redactSecrets(input: string, m: SecretMatcher): string {
  const s = input.replace(m.whole, REDACTED).replace(m.halves, redactKeepingLead)
  m.atStart.lastIndex = 0
  const head = m.atStart.exec(s)
  return head === null ? s : (head.groups?.['lead'] ?? '') + REDACTED + s.slice(head[0].length)
}

function usableSecrets(secrets: readonly string[]): string[] {
  const out = new Set<string>()
  for (const s of secrets) {
    const t = s.trim()
    if (t.length >= MIN_SECRET_LENGTH) out.add(t)
  }
  return [...out].sort()
}

/**
 * `secrets` is called on every scrub (the token file may have been re-read); the compiled
 * pattern is cached by the secrets' values and rebuilt only when they change.
 */
export function createScrub(secrets: () => readonly string[]): (input: string) => string {
  let cacheKey: string | undefined
  let cached: SecretMatcher | undefined
  // The same list (by identity and length) as last time needs no rework: scrub runs on every
  // string of every result, and rebuilding the key each time was most of its allocation.
  let lastList: readonly string[] | undefined
  let lastLength = -1

  const current = (): SecretMatcher | undefined => {
    const raw = secrets()
    if (raw === lastList && raw.length === lastLength) return cached
    lastList = raw
    lastLength = raw.length
    const list = usableSecrets(raw)
    const key = list.join('\0')
    if (key !== cacheKey) {
      cached = compileSecrets(list, MIN_SECRET_LENGTH)
      cacheKey = key
    }
    return cached
  }

  const scrub = (input: string): string => {
    let s = input
    const own = current()
    // configured secrets first: a generic shape inside one must not leave the rest visible
    if (own !== undefined && own.quick.test(s)) s = redactSecrets(s, own)
    s = scrubPem(s)
    return scrubShapes(s)
  }

  return scrub
}
