// The published configuration schema and `ag-mcp config init`: the committed ag-mcp.schema.json is
// what the flag table says (plugins' options included), and the starting file validates against
// it and is accepted by ag-mcp itself.
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Ajv } from 'ajv'
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

t.test('config init: a starting file that validates and that ag-mcp accepts; never overwritten', async (t) => {
  const dir = t.testdir({})
  const r = run(dir, 'config', 'init')
  t.equal(r.status, 0, r.stderr)
  const file = join(dir, 'ag-mcp.config.json')
  const data = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>
  t.match(data['$schema'], /^file:\/\/.*\/ag-mcp\.schema\.json$/)
  const validate = new Ajv({ strict: false }).compile(
    JSON.parse(readFileSync(join(REPO_ROOT, 'ag-mcp.schema.json'), 'utf8')),
  )
  t.ok(validate(data), JSON.stringify(validate.errors))
  const accepted = run(dir, '--config', file, '--print-config')
  t.equal(accepted.status, 0, accepted.stderr)
  t.match(JSON.parse(accepted.stdout), { writePath: ['docs/**', 'README.md'] })
  const again = run(dir, 'config', 'init')
  t.equal(again.status, 1)
  t.match(again.stderr, /exists; pass --force to replace it/)
})
