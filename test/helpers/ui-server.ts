// A real ag-server process (dist/ag-server.mjs serve --ui) on loopback, over a data directory
// set up in this process before it starts: repositories cloned from source directories, people
// and agents with tokens (written to 0600 files) and roles, a policy, tasks.
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { adminMint, adminSetPolicy, adminSetRole, repoAdd } from '../../server/src/admin.ts'
import { DEFAULT_LIMITS } from '../../server/src/context.ts'
import { createTask } from '../../server/src/coordination.ts'
import { initDataDir } from '../../server/src/datadir.ts'
import { KeyedMutex } from '../../server/src/mutex.ts'
import { RepoRegistry } from '../../server/src/repos.ts'
import { Store } from '../../server/src/store.ts'
import type { Policy, Role, Scope } from '../../server/src/types.ts'

export const AG_SERVER = fileURLToPath(new URL('../../dist/ag-server.mjs', import.meta.url))

export interface Person {
  principal: string
  scopes: Scope[]
  role: Role
}

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
  initDataDir(data)
  for (const [name, src] of Object.entries(o.repos)) repoAdd(data, name, src)
  const store = Store.open(join(data, 'state'))
  const token: Record<string, string> = {}
  const tokenFile: Record<string, string> = {}
  const repos = Object.keys(o.repos)
  for (const [name, p] of Object.entries(o.people)) {
    token[name] = adminMint(store, { principal: p.principal, scopes: p.scopes, repos, ttl_s: 3600 }).token
    tokenFile[name] = join(root, `${name}.token`)
    writeFileSync(tokenFile[name], `${token[name]}\n`, { mode: 0o600 })
    for (const r of repos) adminSetRole(store, r, p.principal, p.role)
  }
  for (const r of repos) if (o.policy) adminSetPolicy(store, r, o.policy)
  const registry = new RepoRegistry(join(data, 'repos'))
  const ctx = { store, repos: registry, mutex: new KeyedMutex(), limits: DEFAULT_LIMITS, tmpDir: join(data, 'tmp') }
  const tasks = (o.tasks ?? []).map((t) => createTask(ctx, 'human:admin', t.repo, t).id)
  registry.closeAll()
  store.close()
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
