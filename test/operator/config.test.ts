// The published configuration schema and `ag-mcp config init`: the committed ag-mcp.schema.json is
// what the flag table says (plugins' options included), and the commented starting file validates
// against it and is accepted by ag-mcp itself; a malformed one is named by line and column.
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Ajv } from 'ajv'
import { parse as parseJsonc } from 'jsonc-parser'
import type { ParseError } from 'jsonc-parser'
import { BINARY, REPO_ROOT } from '../helpers/mcp-process.ts'

const run = (cwd: string, ...args: string[]) =>
  spawnSync(process.execPath, [BINARY, ...args], { cwd, encoding: 'utf8', env: { PATH: process.env['PATH'] ?? '' } })

t.test('ag-mcp.schema.json is up to date with the flag table', async (t) => {
  const printed = run(REPO_ROOT, 'config', 'schema')
  t.equal(printed.status, 0, printed.stderr)
  t.equal(
    `${printed.stdout}`,
    readFileSync(join(REPO_ROOT, 'ag-mcp.schema.json'), 'utf8'),
    'npm run build writes it: commit ag-mcp.schema.json',
  )
  const schema = JSON.parse(printed.stdout) as { properties: Record<string, unknown> }
  for (const key of ['upstream', 'token-file', 'allow', 'write-path', 'max-output-bytes'])
    t.ok(schema.properties[key], key)
  t.notOk(schema.properties['token'], 'no key for a token value')
})

t.test(
  'config init: a commented starting file that validates and that ag-mcp accepts; never overwritten',
  async (t) => {
    const dir = t.testdir({})
    const r = run(dir, 'config', 'init')
    t.equal(r.status, 0, r.stderr)
    const file = join(dir, 'ag-mcp.config.jsonc')
    const text = readFileSync(file, 'utf8')
    // Read by an independent JSONC parser (the one VS Code uses), not by ag-mcp's own.
    const errors: ParseError[] = []
    const data = parseJsonc(text, errors, { allowTrailingComma: true }) as Record<string, unknown>
    t.same(errors, [], 'well-formed JSONC')
    t.equal(data['$schema'], './ag-mcp.schema.json', 'the schema is written beside it')
    const validate = new Ajv({ strict: false }).compile(
      JSON.parse(readFileSync(join(dir, 'ag-mcp.schema.json'), 'utf8')),
    )
    t.ok(validate(data), JSON.stringify(validate.errors))
    // Each setting is explained by its flag's description, just above it; the others are listed.
    t.match(text, /\/\/ File holding the AGWP token[^\n]*\n\s*"token-file": /)
    t.match(
      text,
      /\/\/ Paths writes, deletes and moves must match[\s\S]*?\n\s*\/\/ "write-path": \["src\/\*\*", "docs\/\*\*"\],/,
    )
    t.match(text, /\n\s*\/\/ "max-output-bytes": 65536,/)
    const accepted = run(dir, '--config', file, '--print-config')
    t.equal(accepted.status, 0, accepted.stderr)
    t.match(JSON.parse(accepted.stdout), { allow: ['default'], writePath: [], maxOutputBytes: 65536 })
    // A commented-out setting is switched on by removing its //.
    writeFileSync(file, text.replace('// "max-output-bytes": 65536,', '"max-output-bytes": 2048,'))
    const edited = run(dir, '--config', file, '--print-config')
    t.equal(edited.status, 0, edited.stderr)
    t.match(JSON.parse(edited.stdout), { maxOutputBytes: 2048 })
    const again = run(dir, 'config', 'init')
    t.equal(again.status, 1)
    t.match(again.stderr, /exists; pass --force to replace it/)
  },
)

t.test('a malformed commented file: exit 2, the file, line and column, and what is wrong', async (t) => {
  const dir = t.testdir({})
  t.equal(run(dir, 'config', 'init').status, 0)
  const file = join(dir, 'ag-mcp.config.jsonc')
  const lines = readFileSync(file, 'utf8').split('\n')
  // Drop the comma after "allow": the next setting (after its comment) is then unexpected.
  const at = lines.findIndex((l) => l.startsWith('  "allow": '))
  lines[at] = (lines[at] as string).replace(/,$/, '')
  writeFileSync(file, lines.join('\n'))
  const next = lines.findIndex((l, i) => i > at && l.startsWith('  "'))
  for (const args of [['--print-config'], ['doctor']]) {
    const r = run(dir, ...(args[0] === 'doctor' ? ['doctor', '--config', file] : ['--config', file, ...args]))
    const where = `${file}:${next + 1}:3: not valid JSON (comments and trailing commas are allowed): Expected ',' or '}' after property value`
    t.ok(r.stderr.includes(where) || r.stdout.includes(where), `${args[0]}: ${r.stdout}${r.stderr}`)
    t.equal(r.status, args[0] === 'doctor' ? 1 : 2)
    t.notMatch(r.stderr, /\n\s+at /, 'no stack trace')
  }
  writeFileSync(file, '{\n  /* not closed\n  "repo": ["demo"]\n}\n')
  const open = run(dir, '--config', file, '--print-config')
  t.equal(open.status, 2)
  t.match(
    open.stderr,
    /:2:3: not valid JSON \(comments and trailing commas are allowed\): a \/\* comment is never closed/,
  )
})
