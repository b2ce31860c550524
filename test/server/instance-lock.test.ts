import fs from 'node:fs'
import path from 'node:path'
import t from 'tap'
import { acquireServeLock, instanceLockName } from '../../server/src/datadir.ts'
import { instanceFromFlags } from '../../server/src/cli/instance.ts'
import { tmpdir } from './helpers.ts'

// The data directory's locks with several instances: the journal's one exclusive lock, an
// instance's own under a PostgreSQL store, and neither beside the other.

/** A lock file held by a live process other than this one (the test runner that started us). */
const heldBy = (dir: string, name: string): void =>
  fs.writeFileSync(path.join(dir, name), JSON.stringify({ pid: process.ppid, kind: 'server' }))

t.test('instances of a PostgreSQL store each take their own lock', async (t) => {
  const dir = tmpdir('ilock')
  const a = acquireServeLock(dir, { pid: process.pid, kind: 'server' }, 'host:7420')
  t.ok(a.ok)
  t.ok(fs.existsSync(path.join(dir, 'lock-host_7420')), 'lock-<instance>, its : made safe')
  heldBy(dir, instanceLockName('host:7421'))
  const b = acquireServeLock(dir, { pid: process.pid, kind: 'server' }, 'host:7422')
  t.ok(b.ok, 'another instance beside it')
  const twice = acquireServeLock(dir, { pid: process.pid, kind: 'server' }, 'host:7421')
  t.match(twice, { ok: false, why: /in use by pid \d+ \(server\) as instance host:7421/ }, 'one process per id')
  if (a.ok) a.release()
  t.notOk(fs.existsSync(path.join(dir, 'lock-host_7420')), 'released')
})

t.test('the journal lock and instance locks exclude each other', async (t) => {
  const dir = tmpdir('ilock')
  heldBy(dir, 'lock')
  t.match(acquireServeLock(dir, { pid: process.pid, kind: 'server' }, 'web-1'), {
    ok: false,
    why: /on the embedded journal; stop it before serving the repositories from a PostgreSQL store/,
  })
  fs.rmSync(path.join(dir, 'lock'))
  heldBy(dir, instanceLockName('web-1'))
  t.match(acquireServeLock(dir, { pid: process.pid, kind: 'server' }, undefined), {
    ok: false,
    why: /served by an instance on a PostgreSQL store .*start this one with the same --store/,
  })
  fs.writeFileSync(path.join(dir, instanceLockName('web-1')), JSON.stringify({ pid: 2 ** 22 + 12345, kind: 'server' }))
  t.ok(
    acquireServeLock(dir, { pid: process.pid, kind: 'server' }, undefined).ok,
    'a stale instance lock is no obstacle',
  )
})

t.test('serve --instance, --advertise, --owner-lease', async (t) => {
  const listen = { host: '127.0.0.1', port: 7420 }
  t.match(instanceFromFlags({}, listen), { advertise: 'http://127.0.0.1:7420', leaseMs: 15_000 })
  t.match(instanceFromFlags({}, listen).instance, /:7420$/, 'default HOSTNAME:PORT')
  t.same(instanceFromFlags({ instance: 'web-1', advertise: 'http://10.0.0.5:7420/', 'owner-lease': '1s' }, listen), {
    instance: 'web-1',
    advertise: 'http://10.0.0.5:7420',
    leaseMs: 1000,
  })
  t.notMatch(instanceFromFlags({}, { host: '0.0.0.0', port: 1 }).advertise, /0\.0\.0\.0/, 'not the wildcard')
  t.throws(() => instanceFromFlags({ instance: 'a b' }, listen), /--instance: 'a b' must be letters/)
  t.throws(
    () => instanceFromFlags({ advertise: 'http://h:1/agwp/v1' }, listen),
    /must be http:\/\/HOST:PORT, with no path/,
  )
  t.throws(() => instanceFromFlags({ advertise: 'nope' }, listen), /is not a URL/)
  t.throws(() => instanceFromFlags({ 'owner-lease': '0s' }, listen), /must be at least 1s/)
  t.throws(() => instanceFromFlags({ 'owner-lease': 'soon' }, listen), /is not a duration/)
})
