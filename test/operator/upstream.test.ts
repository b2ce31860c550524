// `--upstream` takes the URL ag-server prints (`ag-server listening on http://…/agwp/v1`) as well
// as the bare base URL: a real call through ag-mcp reaches the server either way.
import t from 'tap'
import { chmodSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startMcp } from '../helpers/mcp-process.ts'
import { fixture } from '../server/helpers.ts'

const fx = await fixture()
t.teardown(fx.close)

t.test('the URL ag-server prints works as --upstream, with or without /agwp/v1', async (t) => {
  const dir = t.testdir({})
  const token = join(dir, 'alice.token')
  writeFileSync(token, fx.tokens['alice'] as string)
  chmodSync(token, 0o600)
  const printed = fx.server.url
  t.match(printed, /\/agwp\/v1$/, 'ag-server reports the URL with its API prefix')
  for (const url of [printed, `${printed}/`, printed.replace(/\/agwp\/v1$/, '')]) {
    const p = startMcp(t, { args: ['--upstream', url, '--token-file', token] })
    const r = await p.request('tools/call', { name: 'whoami', arguments: {} })
    t.notOk(r.result?.['isError'], `${url}: ${JSON.stringify(r.result?.['content'])}`)
    t.match(r.result?.['structuredContent'], { principal: 'agent:alice' }, url)
    await p.close()
  }
})
