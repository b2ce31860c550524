// The configured token, generated at random, embedded in random text in every form the scrubber
// promises (plain; percent-encoded in part or in full; JSON \u escapes; HTML references; base64
// in the standard and URL-safe alphabets at every byte alignment, padded or not), split at
// random points by random separators and line prefixes: no part of it that identifies it may be
// recoverable from the output. Random text without the token comes out unchanged.
import t from 'tap'
import fc from 'fast-check'
import { createScrubber, MIN_SECRET_LENGTH, REDACTED } from '../../../core/src/safety/scrub.ts'
import { partialMin } from '../../../lib/secret-forms.ts'

const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
const PRINTABLE = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i)).join('')

/** An ag-server token, or any printable secret (URL-special characters included). */
const token = fc.oneof(
  fc.string({ unit: fc.constantFrom(...B64URL), minLength: 32, maxLength: 48 }).map((s) => `agwp_${s}`),
  fc
    .string({ unit: fc.constantFrom(...PRINTABLE), minLength: 12, maxLength: 40 })
    .filter((s) => s.trim() === s && new Set(s).size >= 8),
)

type Encoding = (secret: string, pick: (i: number) => boolean, pad: Buffer[]) => string

const hex2 = (b: number): string => b.toString(16).padStart(2, '0')
const perChar =
  (enc: (ch: string) => string): Encoding =>
  (secret, pick) =>
    Array.from(secret, (ch, i) => (pick(i) ? enc(ch) : ch)).join('')

const ENCODINGS: Record<string, Encoding> = {
  plain: (s) => s,
  percent: perChar((ch) => Array.from(Buffer.from(ch), (b) => `%${hex2(b)}`).join('')),
  percentUpper: perChar((ch) => Array.from(Buffer.from(ch), (b) => `%${hex2(b).toUpperCase()}`).join('')),
  jsonEscape: perChar((ch) => `\\u${(ch.codePointAt(0) as number).toString(16).padStart(4, '0')}`),
  htmlDecimal: perChar((ch) => `&#${ch.codePointAt(0)};`),
  htmlHex: perChar((ch) => `&#x${(ch.codePointAt(0) as number).toString(16).toUpperCase()};`),
  base64: (s, _p, [before, after]) => Buffer.concat([before!, Buffer.from(s), after!]).toString('base64'),
  base64Unpadded: (s, _p, [before, after]) =>
    Buffer.concat([before!, Buffer.from(s), after!])
      .toString('base64')
      .replace(/=+$/, ''),
  base64url: (s, _p, [before, after]) => Buffer.concat([before!, Buffer.from(s), after!]).toString('base64url'),
}

/** What can stand between two characters of a form: whitespace runs, patch and quote prefixes. */
const separator = fc.constantFrom(
  ' ',
  '\t',
  '  \t ',
  '\n',
  '\r\n',
  '\n    ',
  '\r\n+    ',
  '\n+',
  '\n-',
  '\n> ',
  '\n> > ',
  '\n| ',
  '\n#  ',
  '\n * ',
  '"\n+ "',
  "' +\n  '",
  '\\\n',
  `\n${' '.repeat(200)}`,
)

const filler = fc.string({ unit: fc.constantFrom(...'abc XYZ 012 .,;:!?(){}\n\t=-+#'), maxLength: 60 })

interface Case {
  secret: string
  encoding: string
  encoded: string
  text: string
}

const leak = fc
  .record({
    secret: token,
    encoding: fc.constantFrom(...Object.keys(ENCODINGS)),
    mask: fc.array(fc.boolean(), { minLength: 64, maxLength: 64 }),
    full: fc.boolean(),
    pad: fc.tuple(fc.uint8Array({ maxLength: 5 }), fc.uint8Array({ maxLength: 5 })),
    cuts: fc.array(fc.tuple(fc.nat(), separator), { maxLength: 5 }),
    before: filler,
    after: filler,
  })
  .map((r): Case => {
    const pick = (i: number): boolean => r.full || (r.mask[i % 64] as boolean)
    const pad = [Buffer.from(r.pad[0]), Buffer.from(r.pad[1])]
    let encoded = (ENCODINGS[r.encoding] as Encoding)(r.secret, pick, pad)
    const at = [...new Set(r.cuts.map(([c]) => c % (encoded.length + 1)))].sort((a, b) => b - a)
    at.forEach((c, i) => {
      encoded = encoded.slice(0, c) + (r.cuts[i]?.[1] ?? ' ') + encoded.slice(c)
    })
    return { secret: r.secret, encoding: r.encoding, encoded, text: `${r.before} ${encoded} ${r.after}` }
  })

// ---- what an attacker could do with the output ----

/** Every character the scrubber may see between two characters of a form. */
const SEPARATOR_CHARS = /[\s+\-<>|"'`\\#*/.,;()[\]]/g
const squeeze = (s: string): string => s.replace(SEPARATOR_CHARS, '')

/** Undoes every character-level encoding, leniently (separators already squeezed out). */
function decodeChars(s: string): string {
  return s
    .replace(/(?:%[0-9a-fA-F]{2})+/g, (m) => {
      const bytes = Buffer.from(m.replace(/%/g, ''), 'hex')
      return bytes.toString('utf8').includes('\ufffd') ? bytes.toString('latin1') : bytes.toString('utf8')
    })
    .replace(/u([0-9a-fA-F]{4})/g, (_, h: string) => String.fromCharCode(Number.parseInt(h, 16)))
    .replace(/&[xX]([0-9a-fA-F]+)/g, (_, h: string) => String.fromCodePoint(Number.parseInt(h, 16) % 0x110000))
    .replace(/&([0-9]+)/g, (_, d: string) => String.fromCodePoint(Number.parseInt(d, 10) % 0x110000))
}

/** The longest run of the secret (separators squeezed out) that the decoded output still holds. */
function longestRecoverable(out: string, secret: string): number {
  const target = squeeze(secret)
  const views = [squeeze(decodeChars(squeeze(out)))]
  // base64: each piece between redactions, decoded at each of the four character alignments
  for (const piece of out.split(REDACTED)) {
    const b64 = piece
      .replace(/[^A-Za-z0-9+/\-_]/g, '')
      .replace(/-/g, '+')
      .replace(/_/g, '/')
    for (let skip = 0; skip < 4; skip++) views.push(squeeze(Buffer.from(b64.slice(skip), 'base64').toString('latin1')))
  }
  let best = 0
  for (const view of views) {
    for (let i = 0; i < target.length; i++) {
      let len = best + 1
      while (i + len <= target.length && view.includes(target.slice(i, i + len))) len++
      best = Math.max(best, len - 1)
    }
  }
  return best
}

t.test('a token in any form, split anywhere, is never recoverable', async (t) => {
  const seen = new Set<string>()
  fc.assert(
    fc.property(leak, (c) => {
      seen.add(c.encoding)
      const out = createScrubber(() => [c.secret]).scrub(c.text)
      if (!out.includes(REDACTED)) throw new Error(`not redacted: ${JSON.stringify(c)}`)
      const limit = partialMin(squeeze(c.secret).length, MIN_SECRET_LENGTH)
      // a form's edges may keep a character or two (base64 characters shared with neighbours)
      const kept = longestRecoverable(out, c.secret)
      if (kept >= Math.min(limit, 8))
        throw new Error(`${kept} characters recoverable from ${JSON.stringify(out)}\ncase ${JSON.stringify(c)}`)
    }),
    {
      numRuns: 150,
      examples: [
        // Found by CI: the half at the line break won over the whole form a character later.
        [
          {
            secret: 'y        kupGette',
            encoding: 'htmlHex',
            encoded: '\r\ny        &#x6B;upGette',
            text: ' \r\ny        &#x6B;upGette ',
          },
        ],
      ],
    },
  )
  t.same([...seen].sort(), Object.keys(ENCODINGS).sort(), 'every encoding was generated')
})

t.test('half a token in a line of its own (a search match, one side of a patch) is redacted', async (t) => {
  fc.assert(
    fc.property(token, fc.nat(), separator, filler, (secret, cut, sep, around) => {
      const chars = Array.from(secret)
      const k = partialMin(chars.length, MIN_SECRET_LENGTH)
      if (k === chars.length) return
      const at = k + (cut % (chars.length - 2 * k + 1)) // both halves at least k characters
      const first = chars.slice(0, at).join('')
      const second = chars.slice(at).join('')
      const sc = createScrubber(() => [secret])
      const lead = sep.replace(/^[^\n]*\n/, '') // what the second line starts with
      for (const line of [
        `${around.replace(/\n/g, ' ')} = ${first}`,
        `${lead}${second}${around.replace(/\n/g, ' ')}`,
      ]) {
        const out = sc.scrub(line)
        if (longestRecoverable(out, secret) >= k) throw new Error(`half kept: ${JSON.stringify({ line, out })}`)
      }
    }),
    { numRuns: 120 },
  )
  t.pass('no half survived')
})

t.test('text without the token is unchanged', async (t) => {
  // random text, and fragments of the token shorter than a half, among separators
  const noise = fc.tuple(token, fc.array(fc.oneof(filler, separator, fc.nat()), { maxLength: 30 }))
  fc.assert(
    fc.property(noise, ([secret, parts]) => {
      const k = partialMin(Array.from(secret).length, MIN_SECRET_LENGTH)
      const text = parts
        .map((p) => {
          if (typeof p !== 'number') return p
          const from = p % secret.length
          return `§${secret.slice(from, from + Math.floor(k / 2) - 1)}§` // too short, and fenced off
        })
        .join('')
      const withToken = createScrubber(() => [secret]).scrub(text)
      const without = createScrubber(() => []).scrub(text)
      if (withToken !== without) throw new Error(`changed: ${JSON.stringify({ secret, text, withToken })}`)
      if (!/agwp_|eyJ|sk-|gh[pousr]_|AKIA|ASIA|xox|AIza|[Bb]earer|PRIVATE/.test(text) && withToken !== text)
        throw new Error('changed by a shape')
    }),
    { numRuns: 300 },
  )
  t.pass('unchanged')
})
