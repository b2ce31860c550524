// Redaction of what the pack stores: Agentpack's cases, the ones it misses (multi-line keys,
// provider names, token shapes through the core's scrubber), idempotence, and linear time on
// hostile input (no duration asserted: a quadratic pattern would time the test out).
import t from 'tap'
import fc from 'fast-check'
import { createScrubber } from '../../../core/src/safety/scrub.ts'
import { createRedactor } from '../../../plugins/continuity/redact.ts'

const pem = '-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAx\nq7f9k2L\n-----END RSA PRIVATE KEY-----'

t.test('what Agentpack caught is still caught', async (t) => {
  const r = createRedactor({ env: {} })
  t.equal(r.redact('api_key: abc123'), 'api_key: [REDACTED]')
  t.equal(r.redact('token="xyz"'), 'token="[REDACTED]"')
  t.equal(r.redact('password=hunter2 next'), 'password=[REDACTED] next')
})

t.test('what Agentpack missed', async (t) => {
  const r = createRedactor({ env: {} })
  t.equal(
    r.redact(`key:\n${pem}\nafter`),
    'key:\n-----BEGIN RSA PRIVATE KEY-----[REDACTED]-----END RSA PRIVATE KEY-----\nafter',
    'multi-line PEM key',
  )
  t.equal(
    r.redact('-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk'),
    '-----BEGIN OPENSSH PRIVATE KEY-----[REDACTED]',
    'unterminated PEM',
  )
  t.equal(
    r.redact('"key":"-----BEGIN PRIVATE KEY-----\\nMIIB\\n-----END PRIVATE KEY-----"'),
    '"key":"-----BEGIN PRIVATE KEY-----[REDACTED]-----END PRIVATE KEY-----"',
    'PEM inside JSON',
  )
  t.equal(r.redact('AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfi'), 'AWS_SECRET_ACCESS_KEY=[REDACTED]')
  t.equal(r.redact('export GITHUB_TOKEN=abc'), 'export GITHUB_TOKEN=[REDACTED]')
  t.equal(
    r.redact('{"client_secret": "s3cr3t", "apiKey":"k"}'),
    '{"client_secret": "[REDACTED]", "apiKey":"[REDACTED]"}',
  )
  t.equal(r.redact('DATABASE_PASSWORD: pw'), 'DATABASE_PASSWORD: [REDACTED]')
  t.equal(r.redact('clone https://me:pa55word@git.example.com/x'), 'clone https://me:[REDACTED]@git.example.com/x')
  t.equal(
    r.redact('Budget: ~4000 tokens, monkey business'),
    'Budget: ~4000 tokens, monkey business',
    'prose is left alone',
  )
})

t.test('environment values: configured names, provider names and secret-looking names', async (t) => {
  const env = {
    MY_LISTED: 'listed-value-1',
    AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMIK7MDENGbPxRfiCY',
    DEPLOY_TOKEN: 'dt-0123456789',
    HOME: '/home/someone',
    SHORT_TOKEN: 'abc',
  }
  const r = createRedactor({ env, config: { redactions: ['MY_LISTED'] } })
  t.equal(r.redact('saw listed-value-1 here'), 'saw [REDACTED:MY_LISTED] here')
  t.equal(r.redact('aws said wJalrXUtnFEMIK7MDENGbPxRfiCY'), 'aws said [REDACTED:AWS_SECRET_ACCESS_KEY]')
  t.equal(r.redact('got dt-0123456789'), 'got [REDACTED:DEPLOY_TOKEN]')
  t.equal(r.redact('/home/someone and abc'), '/home/someone and abc', 'ordinary and short values stay')
})

t.test('token shapes come from the core scrubber, one definition for both', async (t) => {
  const r = createRedactor({ env: {}, shapes: createScrubber(() => ['configured-credential-xyz']).scrub })
  const ghp = `ghp_${'a1B2'.repeat(9)}`
  t.equal(r.redact(`pushed with ${ghp}`), 'pushed with [REDACTED]')
  t.equal(r.redact('Authorization: Bearer abcdefghijklmnop'), 'Authorization: Bearer [REDACTED]')
  t.equal(r.redact('uses configured-credential-xyz'), 'uses [REDACTED]')
})

t.test('idempotent: redact(redact(x)) === redact(x)', async (t) => {
  const r = createRedactor({ env: { GITHUB_TOKEN: 'ghtoken-value-1234' }, shapes: createScrubber(() => []).scrub })
  const pieces = fc.constantFrom(
    'token=',
    'AWS_SECRET_ACCESS_KEY: ',
    pem,
    'ghtoken-value-1234',
    ' ',
    '\n',
    '"',
    'x',
    '[REDACTED]',
    'https://u:p@h/',
  )
  fc.assert(
    fc.property(fc.array(pieces, { maxLength: 12 }), (parts) => {
      const once = r.redact(parts.join(''))
      return r.redact(once) === once
    }),
  )
  t.pass('property held')
})

t.test('hostile input stays linear', async (t) => {
  const r = createRedactor({ env: {} })
  for (const s of [
    'a'.repeat(200_000),
    `${'secret_'.repeat(30_000)}x`,
    `${'-----BEGIN PRIVATE KEY-----'.repeat(5_000)}`,
    `${'_token'.repeat(40_000)}:`,
  ]) {
    t.ok(r.redact(s).length > 0)
  }
})
