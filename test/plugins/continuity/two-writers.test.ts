// Two processes writing one pack at once — the bundled ag-mcp's CLI in two shells, each
// recording decisions and checkpoints as fast as it can — then: every decision is there once,
// every checkpoint has its folder and its event, every ledger line parses (none torn), and
// state.json is whole. Agentpack uses the same lock directory, so it could be either side.
import { spawn } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import { GIT_ENV, repo } from './_pack.ts'

const BIN = new URL('../../../dist/ag-mcp.mjs', import.meta.url).pathname
const ROUNDS = 4

function writer(root: string, name: string): Promise<number> {
  // Each round: a decision and a checkpoint, as separate processes (the real CLI's cost).
  const script = `for i in $(seq 1 ${ROUNDS}); do
    "$NODE" "$BIN" continuity decision "${name} decision $i" || exit 1
    "$NODE" "$BIN" continuity checkpoint --summary "${name} checkpoint $i" || exit 1
  done`
  return new Promise((resolve) => {
    const child = spawn('sh', ['-c', script], {
      cwd: root,
      env: { ...GIT_ENV, NODE: process.execPath, BIN },
      stdio: ['ignore', 'ignore', 'inherit'],
    })
    child.on('exit', (code) => resolve(code ?? 1))
  })
}

t.test(
  'two writers at once: nothing lost, no torn line',
  { skip: !existsSync(BIN) && 'dist/ag-mcp.mjs not built' },
  async (t) => {
    const root = await repo(t)
    const codes = await Promise.all([writer(root, 'A'), writer(root, 'B')])
    t.same(codes, [0, 0], 'both writers finished cleanly')
    const lines = readFileSync(join(root, '.agentpack', 'events.jsonl'), 'utf8').split('\n')
    t.equal(lines.pop(), '', 'the ledger ends with a newline')
    const events = lines.map((l) => JSON.parse(l) as { type: string; text?: string; checkpointId?: string })
    const decisions = events.filter((e) => e.type === 'decision').map((e) => e.text)
    t.equal(decisions.length, 2 * ROUNDS, 'every decision recorded')
    t.equal(new Set(decisions).size, 2 * ROUNDS, 'each exactly once')
    const checkpoints = events.filter((e) => e.type === 'checkpoint').map((e) => e.checkpointId)
    t.equal(checkpoints.length, 2 * ROUNDS, 'every checkpoint event recorded')
    const folders = readdirSync(join(root, '.agentpack', 'checkpoints'))
    t.same([...folders].sort(), [...checkpoints].sort(), 'one folder per checkpoint event, none overwritten')
    for (const f of folders)
      JSON.parse(readFileSync(join(root, '.agentpack', 'checkpoints', f, 'checkpoint.json'), 'utf8'))
    JSON.parse(readFileSync(join(root, '.agentpack', 'state.json'), 'utf8'))
    t.notOk(existsSync(join(root, '.agentpack', '.lock')), 'the lock is released')
  },
)
