// The processes a test starts run without the test runner's hooks (see plain-children.ts): as a
// user would start them, and without the loader that cost each one about 0.2 s of CPU.
import t from 'tap'
import { spawn, spawnSync } from 'node:child_process'

const REPORT = `process.stdout.write(JSON.stringify({
  execArgv: process.execArgv,
  nodeOptions: process.env.NODE_OPTIONS ?? null,
  recorded: globalThis[Symbol.for('@tapjs/processinfo.ProcessInfoNodeData')] !== undefined,
}))`

const plain = { execArgv: [], nodeOptions: null, recorded: false }

t.test('a child started with the test process environment carries no hooks', async (t) => {
  // The script comes on stdin, so execArgv holds only options.
  const r = spawnSync(process.execPath, [], { env: process.env, input: REPORT, encoding: 'utf8' })
  t.equal(r.status, 0, r.stderr)
  t.same(JSON.parse(r.stdout), plain)
})

t.test('nor one started asynchronously with a minimal environment', async (t) => {
  const child = spawn(process.execPath, [], { env: { PATH: process.env['PATH'] ?? '' } })
  child.stdin.end(REPORT)
  let out = ''
  child.stdout.on('data', (b: Buffer) => {
    out += b.toString()
  })
  const code = await new Promise((resolve) => child.once('exit', resolve))
  t.equal(code, 0)
  t.same(JSON.parse(out), plain)
})

t.test('the test process itself is still the runner’s', async (t) => {
  t.ok(
    process.execArgv.some((a) => a.includes('@tapjs/processinfo')),
    'tap still loads its hooks here (so the children above prove the setup removed them)',
  )
})
