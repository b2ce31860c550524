// The AGWP world a bench or the demo runs against: an ag-server data directory with one
// repository, principals with a token (in a 0600 file) and a role, and the wait for `serve` to
// listen. Plain ES module so the benches run it as is; the demo (examples/demo.ts) is bundled
// and imports it too (its types: agwp-world.d.mts). Tests seed the same world in-process
// (test/helpers/agwp-world.ts), under their fixtures.
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { createInterface } from 'node:readline'
import { run as benchRun } from './proc.mjs'

/**
 * Runs `ag-server init`, then `repo add` for each repository; returns the admin commands and
 * `member`, which mints a token for a principal and gives it a role.
 * @param {import('./agwp-world.d.mts').WorldOptions} o
 * @returns {import('./agwp-world.d.mts').World}
 */
export function agwpWorld(o) {
  const run = o.run ?? benchRun
  const admin = (/** @type {string[]} */ ...args) => run(process.execPath, [o.agServer, ...args, '--data', o.data])
  run(process.execPath, [o.agServer, 'init', o.data, ...(o.initFlags ?? [])])
  for (const [name, from] of Object.entries(o.repos)) admin('repo', 'add', name, '--from', from, ...(o.repoFlags ?? []))
  const first = Object.keys(o.repos)[0]
  return {
    data: o.data,
    admin,
    member(m) {
      const repo = m.repo ?? first
      if (repo === undefined) throw new Error('agwpWorld: member() needs a repository')
      const tokenFile = join(o.tokenDir ?? dirname(o.data), `${m.principal.replace(/\W/g, '-')}.token`)
      const ttl = m.ttl === undefined ? [] : ['--ttl', m.ttl]
      admin(
        'token',
        'mint',
        '--principal',
        m.principal,
        '--scopes',
        m.scopes,
        '--repos',
        repo,
        ...ttl,
        '--out',
        tokenFile,
      )
      if (m.role !== undefined) admin('role', 'set', '--repo', repo, '--principal', m.principal, '--role', m.role)
      return { tokenFile, token: readFileSync(tokenFile, 'utf8').trim() }
    },
  }
}

/**
 * Resolves with the origin (http://host:port) `ag-server serve` prints once it listens; rejects
 * if it exits first.
 * @param {import('node:child_process').ChildProcess} child its stdout must be a pipe
 * @returns {Promise<string>}
 */
export function listening(child) {
  return new Promise((resolve, reject) => {
    if (!child.stdout) throw new Error('listening(): the child has no stdout pipe')
    createInterface({ input: child.stdout }).on('line', (line) => {
      const m = /listening on (http:\/\/\S+?)\/agwp\/v1/.exec(line)
      if (m?.[1]) resolve(m[1])
    })
    child.on('exit', (code) => reject(new Error(`ag-server exited with ${String(code)} before it listened`)))
  })
}
