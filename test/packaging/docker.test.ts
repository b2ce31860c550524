// The container image, built and run only where a container engine answers and can get the
// Dockerfile's base image; otherwise skipped with what was found, engine by engine (tap shows it
// as "# SKIP"): a missing program, a daemon that does not answer, or a base image it cannot pull.
import t from 'tap'
import { execFileSync, spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { REPO_ROOT } from '../helpers/mcp-process.ts'

/** The base images the Dockerfile names (FROM lines, not its own stage names). */
const froms = [...readFileSync(join(REPO_ROOT, 'Dockerfile'), 'utf8').matchAll(/^FROM\s+(\S+)(?:\s+AS\s+(\S+))?/gim)]
const stages = new Set(froms.map((m) => m[2]).filter((s) => s !== undefined))
const bases = [...new Set(froms.map((m) => m[1] as string))].filter((b) => !stages.has(b))

const firstLine = (s: string): string => s.trim().split('\n')[0]?.slice(0, 200) ?? ''

/** An engine that can build the image, or why not (one clause per engine tried). */
function findEngine(): { engine: string } | { why: string } {
  const why: string[] = []
  for (const engine of ['docker', 'podman']) {
    const info = spawnSync(engine, ['info'], { encoding: 'utf8', timeout: 20_000 })
    if ((info.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') {
      why.push(`${engine}: not installed`)
      continue
    }
    if (info.status !== 0) {
      why.push(
        `${engine}: \`${engine} info\` failed: ${firstLine(info.stderr || info.stdout) || `exit ${info.status}`}`,
      )
      continue
    }
    const missing = bases.filter((b) => spawnSync(engine, ['image', 'inspect', b], { stdio: 'ignore' }).status !== 0)
    const unpulled = missing
      .map((b) => ({ b, r: spawnSync(engine, ['pull', '-q', b], { encoding: 'utf8', timeout: 120_000 }) }))
      .find(({ r }) => r.status !== 0)
    if (unpulled) {
      why.push(`${engine}: cannot pull the base image ${unpulled.b}: ${firstLine(unpulled.r.stderr)}`)
      continue
    }
    return { engine }
  }
  return { why: why.join('; ') }
}

const found = findEngine()
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
  { skip: 'why' in found ? `no container engine can build the image here (${found.why})` : false },
  async (t) => {
    const cmd = (found as { engine: string }).engine
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
