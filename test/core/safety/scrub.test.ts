import t from 'tap'
import { createScrubber, MIN_SECRET_LENGTH, REDACTED } from '../../../core/src/safety/scrub.ts'
import { partialMin } from '../../../lib/secret-forms.ts'

const TOKEN = 'agwp_Zk3v9QxL2mP7rT1wY8bN4cH6jD0sF5gK'

t.test('credential shapes', async (t) => {
  const { scrub } = createScrubber(() => [])
  const shapes = [
    'agwp_' + 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6_-xy',
    'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZ2VudCJ9.c2lnbmF0dXJlLXZhbHVl',
    'eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.',
    'ghp_' + 'a'.repeat(36),
    'gho_' + 'B'.repeat(36),
    'ghu_' + '1'.repeat(36),
    'ghs_' + 'c'.repeat(36),
    'ghr_' + 'd'.repeat(36),
    'github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ',
    'AKIAIOSFODNN7EXAMPLE',
    'ASIAIOSFODNN7EXAMPLE',
    'xoxb-1234567890-abcdefghij',
    'xoxp-1234567890-abcdefghij',
    'sk_live_' + '4eC39HqLyjWDarjtT1zdp7dc',
    'rk_test_' + '4eC39HqLyjWDarjtT1zdp7dc',
    'sk-proj-' + 'Ab1'.repeat(10),
    'sk-ant-api03-' + 'Xy9_'.repeat(10),
    'sk-' + 'q'.repeat(48),
    'AIzaSyA-' + '1234567890abcdefghijklmnopqrstu',
  ]
  for (const s of shapes) {
    t.equal(scrub(`before ${s} after`), `before ${REDACTED} after`, s.slice(0, 16))
    t.equal(scrub(`"${s}"`), `"${REDACTED}"`, 'quoted')
    t.equal(scrub(`k=${s}\n`), `k=${REDACTED}\n`, 'assigned')
  }
  t.equal(scrub('Authorization: Bearer abc.DEF-123_xyz~+/=='), `Authorization: Bearer ${REDACTED}`)
  t.equal(scrub('authorization: bearer 0123456789abcdef'), `authorization: bearer ${REDACTED}`)
  t.equal(scrub('BEARER\t0123456789abcdef'), `BEARER\t${REDACTED}`)
  t.equal(scrub(`Bearer ${TOKEN}`), `Bearer ${REDACTED}`)
})

t.test('private key blocks', async (t) => {
  const { scrub } = createScrubber(() => [])
  const pem =
    '-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\nQyNTUxOQAAACD==\n-----END OPENSSH PRIVATE KEY-----'
  t.equal(scrub(`key:\n${pem}\ndone`), `key:\n${REDACTED}\ndone`)
  t.equal(scrub(`${pem}\n${pem.replace(/OPENSSH /g, 'RSA ')}`), `${REDACTED}\n${REDACTED}`)
  const cut = '-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nMIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM\nabc+/=\n'
  t.equal(
    scrub(`${cut}This line is prose.`),
    `${REDACTED}This line is prose.`,
    'unterminated: body lines go, prose stays',
  )
  t.equal(
    scrub('-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----'),
    '-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----',
    'public keys stay',
  )
})

t.test('what is not a credential', async (t) => {
  const { scrub } = createScrubber(() => [])
  const prose = [
    'the agwp_ prefix marks tokens',
    'use a Bearer token',
    'risk-assessment-of-the-overall-system-design',
    'task-sk-123',
    'mask_live_values',
    'eyJ alone',
    'AKIA short',
    'myghp_' + 'a'.repeat(36), // embedded in a longer identifier
  ]
  for (const p of prose) t.equal(scrub(p), p, p)
})

t.test('the configured token in every form', async (t) => {
  const sc = createScrubber(() => [TOKEN])
  const forms: Record<string, string> = {
    plain: TOKEN,
    urlEncoded: encodeURIComponent(TOKEN),
    inQuery: `https://x/y?token=${encodeURIComponent(TOKEN)}&z=1`,
    base64: Buffer.from(TOKEN).toString('base64'),
    base64url: Buffer.from(TOKEN).toString('base64url'),
    wrapped: TOKEN.slice(0, 7) + '\n' + TOKEN.slice(7, 20) + '\r\n' + TOKEN.slice(20),
    wrappedIndented: TOKEN.slice(0, 12) + '\n    ' + TOKEN.slice(12),
    everyChar: TOKEN.split('').join('\n'),
    zeroWidthRemovedFirst: TOKEN, // sanitize runs before scrub in the pipeline
  }
  for (const [name, form] of Object.entries(forms)) {
    const out = sc.scrub(`x ${form} y`)
    t.ok(out.includes(REDACTED), `${name} redacted`)
    t.notOk(out.includes(TOKEN), `${name}: no plain token`)
    t.notOk(out.replace(/\s/g, '').includes(TOKEN.replace(/\s/g, '')), `${name}: no token once whitespace is removed`)
  }
  // base64 of a blob containing the token at every byte offset (all three alignments) and in
  // both alphabets, also MIME-wrapped at 76 columns
  for (let offset = 0; offset < 9; offset++) {
    const blob = Buffer.concat([
      Buffer.from('p'.repeat(offset) + '\u00ff'),
      Buffer.from(TOKEN),
      Buffer.from('\u00fe tail'),
    ])
    for (const enc of ['base64', 'base64url'] as const) {
      const encoded = blob.toString(enc)
      const mime = encoded.replace(/(.{76})/g, '$1\n')
      for (const text of [encoded, mime]) {
        const out = sc.scrub(text)
        t.ok(out.includes(REDACTED), `${enc} at offset ${offset}`)
        const decoded = Buffer.from(out.replace(/\[REDACTED\]|\s/g, ''), enc).toString('latin1')
        t.notOk(decoded.includes(TOKEN.slice(0, 12)), `${enc} at offset ${offset}: token not decodable`)
      }
    }
  }
  t.equal(sc.scrub(Buffer.from(TOKEN).toString('hex')), Buffer.from(TOKEN).toString('hex'), 'hex is not a covered form')
})

t.test('the configured token in patches, search lines and escapes (issue 10)', async (t) => {
  const sc = createScrubber(() => [TOKEN])
  const half = TOKEN.length >> 1
  const [a, b] = [TOKEN.slice(0, half), TOKEN.slice(half)]
  const hex = (s: string, upper = false): string =>
    Array.from(Buffer.from(s), (x) => `%${x.toString(16).padStart(2, '0')}`)
      .join('')
      [upper ? 'toUpperCase' : 'toString']()
  const forms: Record<string, string> = {
    addedLines: `@@ -0,0 +1,2 @@\n+key = ${a}\n+${b}\n`,
    removedLines: `-key = ${a}\n-${b}\n`,
    crlfIndented: `+key = ${a}\r\n+        ${b}\r\n`,
    quotedReply: `> ${a}\n> ${b}`,
    concatenated: `x = "${a}" +\n    "${b}"`,
    spaced: `${a}   \t  ${b}`,
    fullyPercentEncoded: hex(TOKEN),
    fullyPercentEncodedUpper: hex(TOKEN, true),
    partlyPercentEncoded: `${TOKEN.slice(0, 5)}${hex(TOKEN.slice(5, 20))}${TOKEN.slice(20)}`,
    jsonEscaped: Array.from(TOKEN, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join(''),
    htmlDecimal: Array.from(TOKEN, (c) => `&#${c.charCodeAt(0)};`).join(''),
    htmlHex: Array.from(TOKEN, (c) => `&#x${c.charCodeAt(0).toString(16)};`).join(''),
    htmlNamed: TOKEN.replace('_', '&lowbar;'),
  }
  for (const [name, form] of Object.entries(forms)) {
    const out = sc.scrub(`x ${form} y`)
    t.ok(out.includes(REDACTED), `${name} redacted`)
    t.notOk(out.includes(a.slice(6)) || out.includes(b.slice(0, 12)), `${name}: neither half left: ${out}`)
  }
  // one search match per line: each line on its own holds only half the token
  t.equal(sc.scrub(`key = ${a}`), `key = ${REDACTED}`, 'a line ending with the first half')
  t.equal(sc.scrub(`${b}  # rest`), `${REDACTED}  # rest`, 'a line starting with the second half')
  t.equal(sc.scrub(`+    ${b}`), `+    ${REDACTED}`, 'after a patch sign and indentation')
  t.equal(sc.scrub(`ctx\n+${b}\n`), `ctx\n+${REDACTED}\n`, 'at the start of a later line')
  const short = TOKEN.slice(0, partialMin(TOKEN.length, MIN_SECRET_LENGTH) - 1)
  t.equal(sc.scrub(`prefix ${short}`), `prefix ${short}`, 'less than max(8, a quarter of the token) is not a half')
  t.equal(sc.scrub(`${TOKEN.slice(10, 30)} mid`), `${REDACTED} mid`, 'a middle part at a line start')
  t.equal(sc.scrub('agwp_ and the agwp prefix'), 'agwp_ and the agwp prefix', 'the public prefix alone stays')
})

t.test('secrets with URL-special characters', async (t) => {
  const secret = 'p@ss w/rd+:ünï=ok'
  const sc = createScrubber(() => [secret])
  for (const form of [
    secret,
    encodeURIComponent(secret),
    encodeURIComponent(secret).toLowerCase(),
    encodeURI(secret),
  ]) {
    t.equal(sc.scrub(`[${form}]`), `[${REDACTED}]`, form)
  }
})

t.test('short secrets are ignored, secrets are re-read and cached by value', async (t) => {
  let list: string[] = ['a', 'short', '  ']
  let calls = 0
  const sc = createScrubber(() => {
    calls++
    return list
  })
  t.equal(sc.scrub('a short text'), 'a short text')
  list = ['rotated-secret-value-1']
  t.equal(sc.scrub('x rotated-secret-value-1'), `x ${REDACTED}`)
  list = ['rotated-secret-value-2', 'rotated-secret-value-1']
  t.equal(sc.scrub('rotated-secret-value-1 rotated-secret-value-2'), `${REDACTED} ${REDACTED}`, 'old and new both')
  t.equal(calls, 3)
  list = ['  padded-secret-value\n']
  t.equal(sc.scrub('padded-secret-value'), REDACTED, 'trimmed')
})

t.test('scrubDeep', async (t) => {
  const sc = createScrubber(() => [TOKEN])
  const input = { [TOKEN]: [`Bearer ${TOKEN}`, { n: 1, s: encodeURIComponent(TOKEN) }], ok: 'fine' }
  const copy = structuredClone(input)
  t.same(sc.scrubDeep(input), { [REDACTED]: [`Bearer ${REDACTED}`, { n: 1, s: REDACTED }], ok: 'fine' })
  t.same(input, copy, 'not mutated')
})

// Inputs built to make a regular expression backtrack: each is scrubbed in one linear pass (a
// quadratic pass would not end before tap's test timeout), and each answer is the right one.
t.test('linear on hostile input, and on 100 MB', async (t) => {
  const sc = createScrubber(() => [TOKEN])
  // [input, whether a secret-shaped part of it is redacted (else it comes back unchanged)]
  const hostile: [string, boolean][] = [
    ['eyJ'.repeat(2_000_000), false],
    ['agwp_'.repeat(1_000_000) + '!', true],
    ['eyJabcd.'.repeat(500_000), true],
    [TOKEN.slice(0, 30).repeat(100_000), true],
    ['-----BEGIN RSA PRIVATE KEY-----\n'.repeat(100_000), true],
    ['Bearer '.repeat(500_000), false],
    ['sk-'.repeat(1_000_000), true],
    [`a${' '.repeat(5_000_000)}g`, false],
    [`${TOKEN.slice(0, 20)}${' '.repeat(5_000_000)}`, true],
    [`\n${'+'.repeat(5_000_000)}`, false],
    [`${TOKEN.slice(0, 12)}\n`.repeat(200_000), true],
    [`+${TOKEN.slice(20)}\n`.repeat(100_000), true],
    ['%6'.repeat(2_000_000), false],
    ['&#0000000'.repeat(500_000), false],
  ]
  for (const [h, redacted] of hostile) {
    const out = sc.scrub(h)
    const what = `${JSON.stringify(h.slice(0, 12))}…`
    if (redacted) {
      t.ok(out.includes(REDACTED), `${what} is redacted`)
      t.notOk(
        out.includes(TOKEN.slice(0, 12)) || out.includes(TOKEN.slice(20)),
        `${what}: no part of the token is left`,
      )
    } else t.ok(out === h, `${what} comes back unchanged`)
  }
  const line = 'const x = "an ordinary line of source text"; // with a comment\n'
  const big = line.repeat(Math.ceil(100_000_000 / line.length))
  const out = sc.scrub(`${big}${TOKEN}`)
  t.ok(out === `${big}${REDACTED}`, '100 MB: only the token at its end is replaced')
})
