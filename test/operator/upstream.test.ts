// `--upstream` takes the URL ag-server prints (`ag-server listening on http://…/agwp/v1`) as well
// as the bare base URL: both resolve to the same base.
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { BINARY } from '../helpers/mcp-process.ts'

t.test('the URL ag-server prints works as --upstream, with or without /agwp/v1', async (t) => {
  for (const url of ['http://127.0.0.1:7420/agwp/v1', 'http://127.0.0.1:7420/agwp/v1/', 'http://127.0.0.1:7420']) {
    const r = spawnSync(process.execPath, [BINARY, '--upstream', url, '--print-config'], {
      encoding: 'utf8',
      env: { PATH: process.env['PATH'] ?? '' },
    })
    t.equal(r.status, 0, r.stderr)
    t.equal((JSON.parse(r.stdout) as { upstream: string }).upstream, 'http://127.0.0.1:7420', url)
  }
})
