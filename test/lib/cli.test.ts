// lib/cli, the one parser of every command: a flag table's rows parsed, every unknown flag named
// with the nearest, and the runner's exit codes (help 0, a usage error 2 and nothing run).
import t from 'tap'
import { closest, editDistance } from '../../lib/closest.ts'
import { runCommand, type Program } from '../../lib/cli/commands.ts'
import { UsageError, completeValues, parseFlags, type FlagTable } from '../../lib/cli/flags.ts'

const TABLE: FlagTable = {
  port: { type: 'number', describe: 'the port' },
  name: { type: 'string', short: 'n', describe: 'a name', choices: ['alpha', 'beta'] },
  tag: { type: 'string', repeat: true, describe: 'a tag' },
  scopes: { type: 'list', describe: 'scopes' },
  quiet: { type: 'boolean', describe: 'say nothing' },
  local: { type: 'string', bare: '.', describe: 'local mode' },
  out: { type: 'string', env: 'TEST_OUT', required: true, describe: 'where' },
}

t.test('an adjacent swap is one edit', async (t) => {
  t.equal(editDistance('prot', 'port'), 1)
  t.equal(editDistance('locl', 'local'), 1)
  t.equal(closest('prot', ['port', 'listen']), 'port')
})

t.test('the table parses each type', async (t) => {
  const p = parseFlags(
    [
      '--port=7420',
      '-n',
      'beta',
      '--tag',
      'a,b',
      '--tag',
      'c',
      '--scopes',
      'read, write',
      '--no-quiet',
      '--local',
      'x',
    ],
    TABLE,
  )
  t.same(p.values, {
    port: 7420,
    name: 'beta',
    tag: ['a,b', 'c'],
    scopes: ['read', 'write'],
    quiet: false,
    local: 'x',
  })
  t.same(
    parseFlags(['--local', '--quiet'], TABLE).values,
    { local: '.', quiet: true },
    'a bare --local is its bare value',
  )
  t.same(parseFlags(['--local=false'], TABLE).values, {}, '--local=false is off')
  t.same(p.positionals, [], '--local takes the word after it as its value')
})

t.test('bad input is named, with the fix', async (t) => {
  t.throws(() => parseFlags(['--prot', '1', '--qiuet'], TABLE), {
    message: 'unknown flag --prot (did you mean --port?); unknown flag --qiuet (did you mean --quiet?)',
  })
  t.throws(() => parseFlags(['--name', 'alpah'], TABLE), {
    message: /one of alpha, beta, got "alpah" \(did you mean alpha\?\)/,
  })
  t.throws(() => parseFlags(['--port', 'x'], TABLE), { message: '--port must be a non-negative number, got "x"' })
  t.throws(() => parseFlags(['--port'], TABLE), { message: '--port needs a value (number)' })
  t.ok(
    (() => {
      try {
        parseFlags(['--port'], TABLE)
      } catch (e) {
        return e instanceof UsageError
      }
    })(),
    'a UsageError (the runner exits 2 on it)',
  )
  t.throws(() => completeValues({}, TABLE, {}), { message: /--out is required.*\(or set TEST_OUT\)/ })
  t.same(completeValues({}, TABLE, { TEST_OUT: 'o' })['out'], 'o', 'a required flag may come from its variable')
})

t.test('the runner: help exits 0, a slip exits 2 and runs nothing', async (t) => {
  const ran: string[] = []
  const program: Program<null> = {
    name: 'prog',
    summary: 'a program',
    commands: [
      {
        name: 'serve',
        summary: 'serve',
        flags: { port: TABLE['port'] as FlagTable[string] },
        load: async () => () => void ran.push('serve'),
      },
    ],
  }
  const exec = async (...argv: string[]) => {
    const out: string[] = []
    const err: string[] = []
    const code = await runCommand(program, argv, null, { out: (s) => out.push(s), err: (s) => err.push(s), env: {} })
    return { code, out: out.join('\n'), err: err.join('\n') }
  }
  t.match(await exec('help', 'serve'), { code: 0, out: /usage: prog serve \[flags\][\s\S]*--port NUMBER/ })
  t.match(await exec('serve', '--help'), { code: 0, out: /usage: prog serve/ })
  t.match(await exec('srve'), { code: 2, err: /unknown command "srve" \(did you mean serve\?\)/ })
  t.match(await exec('serve', 'extra'), { code: 2, err: /unexpected argument "extra": serve takes only flags/ })
  t.match(await exec(), { code: 2, err: /name a command/ })
  t.same(ran, [], 'no command ran')
  t.match(await exec('serve', '--port', '1'), { code: 0 })
  t.same(ran, ['serve'])
})
