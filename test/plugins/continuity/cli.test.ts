// The human CLI in-process: commands, exit codes (0 done, 1 refused, 2 usage) and the
// human-only transitions that no MCP tool offers.
import t from 'tap'
import { runCli } from '../../../plugins/continuity/cli.ts'
import { readPassport, readCurrentTaskId } from '../../../plugins/continuity/passports.ts'
import { pack, repo } from './_pack.ts'

async function cli(cwd: string, ...argv: string[]) {
  const out: string[] = []
  const err: string[] = []
  const code = await runCli(argv, {
    out: (s) => void out.push(s),
    err: (s) => void err.push(s),
    cwd,
    env: {},
    version: 'test',
  })
  return { code, out: out.join('\n'), err: err.join('\n') }
}

t.test('init, start, block, close, abandon from the CLI', async (t) => {
  const root = await repo(t, { init: false })
  t.equal((await cli(root, 'task', 'status')).code, 1, 'no pack yet: refused')
  t.match((await cli(root, 'init')).out, 'Initialized')
  const started = await cli(
    root,
    'task',
    'start',
    'CLI',
    'work',
    '--write-scope',
    'src',
    '--next',
    'one',
    '--risk',
    'low',
  )
  t.equal(started.code, 0)
  const id = (await readCurrentTaskId(pack(root))) as string
  t.match(started.out, id)
  t.equal((await cli(root, 'task', 'block', '--reason', 'waiting')).code, 0)
  t.equal((await readPassport(pack(root), id)).status, 'blocked')
  t.equal((await cli(root, 'task', 'close')).code, 0)
  t.equal((await readPassport(pack(root), id)).status, 'completed')
  await cli(root, 'task', 'start', 'second')
  t.equal((await cli(root, 'task', 'abandon')).code, 0)
  const refused = await cli(root, 'task', 'park')
  t.equal(refused.code, 1)
  t.match(refused.err, /Cannot update closed task task_/)
})

t.test('usage errors exit 2 and say what is wrong', async (t) => {
  const root = await repo(t)
  t.match((await cli(root, 'frobnicate')).err, 'unknown command')
  t.equal((await cli(root, 'task', 'start', 'x', '--risk', 'extreme')).code, 2)
  t.equal((await cli(root, 'task', 'list', '--limit', '0')).code, 2)
  t.equal((await cli(root, 'resume', '--preset', 'huge')).code, 2)
  t.equal((await cli(root, 'task', 'start', 'x', '--objective')).code, 2, 'a missing option value')
  t.equal((await cli(root)).code, 2)
  t.equal((await cli(root, '--help')).code, 0)
})

t.test('ledger, checkpoint, resume and list from the CLI', async (t) => {
  const root = await repo(t)
  await cli(root, 'task', 'start', 'ledger')
  t.match((await cli(root, 'decision', 'Keep', 'it', 'simple', '--file', 'src/a.ts')).out, /^Recorded decision evt_/)
  t.match((await cli(root, 'checkpoint', '--summary', 'one', '--next', 'two')).out, /^Created checkpoint \d{4}-/)
  const r = await cli(root, 'resume', '--preset', 'quick', '--query', 'simple')
  t.match(r.out, 'Keep it simple')
  t.match(r.out, 'Budget: ~1200 tokens')
  t.match((await cli(root, 'task', 'list', '--json')).out, '"status": "active"')
  t.match((await cli(root, 'replay', '--limit', '1')).out, '[checkpoint] one')
})
