// A real ag-server process (dist/ag-server.mjs serve --ui) on loopback, over a data directory
// set up in this process before it starts: repositories cloned from source directories, people
// and agents with tokens (written to 0600 files) and roles, a policy, tasks.
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { DEFAULT_LIMITS } from '../../server/src/context.ts'
import { createTask } from '../../server/src/coordination.ts'
import { RepoRegistry } from '../../server/src/repos.ts'
import { openState } from '../../server/src/open-state.ts'
import type { Policy } from '../../server/src/types.ts'
import { seedWorld } from './agwp-world.ts'
import type { Person } from './agwp-world.ts'

export const AG_SERVER = fileURLToPath(new URL('../../dist/ag-server.mjs', import.meta.url))

export type { Person }

export interface UiServer {
  /** http://127.0.0.1:PORT (the page is under /ui/, AGWP under /agwp/v1). */
  origin: string
  root: string
  data: string
  token: Record<string, string>
  tokenFile: Record<string, string>
  tasks: string[]
  /** What the server wrote to stderr (its log). */
  log: string[]
  close(): Promise<void>
}

export async function startUiServer(o: {
  repos: Record<string, string>
  people: Record<string, Person>
  policy?: Partial<Policy>
  tasks?: { repo: string; title: string; body?: string }[]
  args?: string[]
}): Promise<UiServer> {
  const root = mkdtempSync(join(tmpdir(), 'ag-ui-'))
  const data = join(root, 'data')
  const policy = o.policy
  const { tokens: token } = await seedWorld(data, {
    repos: o.repos,
    people: o.people,
    ...(policy ? { policy: Object.fromEntries(Object.keys(o.repos).map((r) => [r, policy])) } : {}),
  })
  const tokenFile: Record<string, string> = {}
  for (const [name, t] of Object.entries(token)) {
    tokenFile[name] = join(root, `${name}.token`)
    writeFileSync(tokenFile[name], `${t}\n`, { mode: 0o600 })
  }
  const state = await openState({ dataDir: data })
  const registry = new RepoRegistry(join(data, 'repos'))
  const ctx = { state, repos: registry, limits: DEFAULT_LIMITS, tmpDir: join(data, 'tmp') }
  const tasks: string[] = []
  for (const t of o.tasks ?? []) tasks.push((await createTask(ctx, 'human:admin', t.repo, t)).id)
  registry.closeAll()
  await state.close()
  const child = spawn(
    process.execPath,
    // --exit-with-stdin: if this process dies before it closes the server, the server goes too.
    [
      AG_SERVER,
      'serve',
      '--data',
      data,
      '--listen',
      '127.0.0.1:0',
      '--rate',
      '0',
      '--ui',
      '--exit-with-stdin',
      ...(o.args ?? []),
    ],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  )
  const log: string[] = []
  createInterface({ input: child.stderr }).on('line', (l) => log.push(l))
  const exited = new Promise<void>((r) => child.once('exit', () => r()))
  const origin = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (l) => {
      const m = /listening on (http:\/\/\S+?)\/agwp\/v1/.exec(l)
      if (m?.[1]) resolve(m[1])
    })
    child.once('exit', (code) => reject(new Error(`ag-server exited (${code}) before it listened: ${log.join('\n')}`)))
  })
  return {
    origin,
    root,
    data,
    token,
    tokenFile,
    tasks,
    log,
    close: async () => {
      child.kill('SIGTERM')
      await exited
      rmSync(root, { recursive: true, force: true })
    },
  }
}
