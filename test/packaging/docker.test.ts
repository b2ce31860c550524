// The container image, built and run only where a container engine answers; otherwise skipped
// with the reason printed (tap shows it as "# SKIP").
import t from 'tap'
import { execFileSync, spawnSync } from 'node:child_process'
import { REPO_ROOT } from '../helpers/mcp-process.ts'

const engine = ['docker', 'podman'].find((c) => spawnSync(c, ['info'], { stdio: 'ignore' }).status === 0)
const DISCOVER = `${JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'server/discover',
  params: {
    _meta: {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {},
    },
  },
})}\n`

t.test(
  'the Dockerfile builds an image that runs as non-root and serves MCP on stdio',
  { skip: engine ? false : 'no container engine (docker or podman) answers `info` on this machine' },
  async (t) => {
    const cmd = engine as string
    const tag = `ag-mcp-test:${process.pid}`
    execFileSync(cmd, ['build', '-q', '-t', tag, REPO_ROOT], { stdio: 'pipe' })
    t.teardown(() => void spawnSync(cmd, ['rmi', '-f', tag], { stdio: 'ignore' }))
    const uid = execFileSync(cmd, ['run', '--rm', '--entrypoint', 'id', tag, '-u'], { encoding: 'utf8' }).trim()
    t.not(uid, '0', 'the image runs as an unprivileged user')
    const out = execFileSync(cmd, ['run', '-i', '--rm', tag], { input: DISCOVER, encoding: 'utf8' })
    const res = JSON.parse(out.split('\n')[0] ?? '') as { result?: { supportedVersions?: string[] } }
    t.ok(res.result?.supportedVersions?.includes('2026-07-28'), 'server/discover is answered')
  },
)
