import fs from 'node:fs'
import { execFileSync } from 'node:child_process'
import pg from 'pg'
import t from 'tap'
import { POSTGRES_HOWTO } from '../helpers/postgres.ts'
import { findPostgresBinaries, startPostgres } from './postgres.mjs'

// The private cluster the PostgreSQL tests (and .ci/run) use: a real server that answers,
// owned by an unprivileged user when we are root, and gone after stop().
if (!findPostgresBinaries()) {
  if (process.env['CI']) throw new Error(POSTGRES_HOWTO)
  t.test('a private PostgreSQL', { skip: POSTGRES_HOWTO }, async () => undefined)
} else {
  t.test('a private PostgreSQL starts, answers and is removed', async (t) => {
    const server = await startPostgres()
    const c = new pg.Client({ connectionString: server.url })
    await c.connect()
    const { rows } = await c.query<{ db: string; port: number }>(
      'SELECT current_database() AS db, inet_server_port() AS port',
    )
    await c.end()
    t.same(rows[0], { db: 'ag_test', port: server.port }, 'its own database, on the port it named')
    if (process.getuid?.() === 0) {
      const nobody = Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).trim())
      t.equal(fs.statSync(`${server.dir}/data`).uid, nobody, 'as root, the cluster belongs to nobody')
    }
    await server.stop()
    t.notOk(fs.existsSync(server.dir), 'stop() removes its directory')
  })
}
