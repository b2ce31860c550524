import t from 'tap'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { checkUpstream, loadConfig } from '../../../core/src/config/config.ts'
import { flagTable } from '../../../core/src/config/flags.ts'
import { parseArgv } from '../../../core/src/config/parse.ts'
import { plugins } from '../../../generated/plugins.js'

// The flag table of the bundled plugins: their options (agwp's --token-file, …) are flags too.
const table = flagTable(plugins)

const noSecret = (v: string) => v.startsWith('agwp_')

t.test('defaults', async (t) => {
  const { config, info } = loadConfig([], {}, noSecret, plugins)
  t.equal(info, undefined)
  t.equal(config.maxOutputBytes, 65536)
  t.equal(config.maxMessageBytes, 4194304)
  t.same(config.rate, { perSec: 20, burst: 40 })
  t.equal(config.allow, undefined, 'undefined allow means the default groups')
  t.same(config.repo, [])
  t.ok(Object.isFrozen(config))
})

t.test('flags: lists accumulate, = and space forms, booleans, --enable-<group>', async (t) => {
  const p = parseArgv(
    [
      '--allow',
      'read,workspace',
      '--allow=review',
      '--repo',
      'a/*',
      '--repo=b',
      '--require-lease',
      '--enable-integrate',
      '--no-allow-insecure-http',
    ],
    table,
  )
  t.same(p.flags.allow, ['read', 'workspace', 'review'])
  t.same(p.flags.repo, ['a/*', 'b'])
  t.equal(p.flags['require-lease'], true)
  t.equal(p.flags['allow-insecure-http'], false)
  t.same(p.enable, ['integrate'])
})

t.test('usage errors say what is wrong', async (t) => {
  t.throws(() => parseArgv(['--tokn-file', 'x'], table), {
    message: /unknown flag --tokn-file \(did you mean --token-file/,
  })
  t.throws(() => parseArgv(['--max-output-bytes'], table), { message: /needs a value/ })
  t.throws(() => parseArgv(['--max-output-bytes', 'lots'], table), { message: /non-negative number/ })
  t.throws(() => parseArgv(['positional'], table), { message: /unexpected argument/ })
  t.throws(
    () => parseArgv(['--token', 'agwp_secret'], table),
    { message: /there is no --token flag.*--token-file/ },
    'there is no flag taking the token value',
  )
  t.throws(() => loadConfig(['--token-file', 'a', '--token-env', 'B'], {}, noSecret, plugins), { message: /exclusive/ })
  t.throws(() => loadConfig(['--rate-limit', 'fast'], {}, noSecret, plugins), { message: /20\/s/ })
  t.throws(() => loadConfig(['--log-level', 'loud'], {}, noSecret, plugins), { message: /log-level/ })
})

t.test('precedence: flags over environment over config file', async (t) => {
  const dir = t.testdir({})
  const file = join(dir, 'c.json')
  writeFileSync(file, JSON.stringify({ 'max-output-bytes': 2000, 'page-size': 7, repo: ['x'] }))
  const { config } = loadConfig(
    ['--config', file, '--page-size', '9'],
    { AG_MCP_MAX_OUTPUT_BYTES: '3000' },
    noSecret,
    plugins,
  )
  t.equal(config.maxOutputBytes, 3000, 'env beats file')
  t.equal(config.pageSize, 9, 'flag beats file')
  t.same(config.repo, ['x'])
})

t.test('a config file never holds a token', async (t) => {
  const dir = t.testdir({})
  const a = join(dir, 'a.json')
  writeFileSync(a, JSON.stringify({ token: 'whatever' }))
  t.throws(() => loadConfig(['--config', a], {}, noSecret, plugins), { message: /key "token" is refused/ })
  const b = join(dir, 'b.json')
  writeFileSync(b, JSON.stringify({ 'log-file': 'agwp_abcdefghijklmnopqrstuvwxyz0123456789' }))
  t.throws(() => loadConfig(['--config', b], {}, noSecret, plugins), { message: /looks like a credential/ })
  const c = join(dir, 'c.json')
  writeFileSync(c, JSON.stringify({ 'token-sauce': 1 }))
  t.throws(() => loadConfig(['--config', c], {}, noSecret, plugins), { message: /unknown key/ })
  const d = join(dir, 'd.json')
  writeFileSync(d, '{not json')
  t.throws(() => loadConfig(['--config', d], {}, noSecret, plugins), {
    message:
      /--config .*d\.json:1:2: not valid JSON \(comments and trailing commas are allowed\): Expected property name/,
  })
})

t.test('upstream: http only on loopback unless opted in; no credentials in the URL', async (t) => {
  t.equal(checkUpstream('http://127.0.0.1:7420/', false), 'http://127.0.0.1:7420')
  t.equal(checkUpstream('http://localhost:1', false), 'http://localhost:1')
  t.equal(checkUpstream('http://[::1]:1', false), 'http://[::1]:1')
  t.equal(checkUpstream('https://git.example.com', false), 'https://git.example.com')
  t.throws(() => checkUpstream('http://10.1.2.3:7420', false), {
    message: /refused: plain http:\/\/ .*--allow-insecure-http/,
  })
  t.throws(
    () => checkUpstream('http://127.0.0.1.evil.com', false),
    { message: /refused/ },
    'a loopback-looking hostname is not loopback',
  )
  t.equal(checkUpstream('http://10.1.2.3:7420', true), 'http://10.1.2.3:7420')
  t.throws(() => checkUpstream('https://u:p@h', false), { message: /credentials/ })
  t.throws(() => checkUpstream('ftp://h', false), { message: /http:\/\/ or https:\/\// })
  t.throws(() => checkUpstream('nope', false), { message: /not a URL/ })
})
