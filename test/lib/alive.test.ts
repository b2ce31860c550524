// lib/alive.ts: the one pid liveness check the locks of agit, local mode and ag-server rest on.
import t from 'tap'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { alive } from '../../lib/alive.ts'

t.test('this process is alive', async (t) => {
  t.equal(alive(process.pid), true)
})

t.test("a child's pid is not alive once the child exited and was reaped", async (t) => {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' })
  const pid = child.pid
  if (pid === undefined) throw new Error('the child did not start')
  t.equal(alive(pid), true, 'alive while it may still run: the pid exists until it is reaped')
  // 'exit' is emitted after node has reaped the child (waitpid): the pid is free from then on.
  await once(child, 'exit')
  t.equal(alive(pid), false)
})

t.test('EPERM (a process of another user) counts as alive; ESRCH does not', async (t) => {
  const real = process.kill
  t.teardown(() => {
    process.kill = real
  })
  const refusing = (code: string) => () => {
    throw Object.assign(new Error(code), { code })
  }
  process.kill = refusing('EPERM')
  t.equal(alive(4242), true)
  process.kill = refusing('ESRCH')
  t.equal(alive(4242), false)
})
