// The operator's data directory, opened for one command: offline under the lock when no server
// holds it, else online through the running server's /agwp/v1/admin with <data>/admin.token.
import fs from 'node:fs'
import path from 'node:path'
import { UsageError } from '../../../lib/cli/flags.ts'
import { adminMint, adminRevoke, adminSetPolicy, adminSetRole, adminTokens } from '../admin.ts'
import { DEFAULT_LIMITS, type Ctx } from '../context.ts'
import { createTask } from '../coordination.ts'
import { acquireLock, dataDirStore, isDataDir, liveInstance, type LockInfo } from '../datadir.ts'
import { keyAdd, keyList, keyRevoke } from '../keys.ts'
import { attachRecord, canonicalStatement, statementFor } from '../provenance.ts'
import { RepoRegistry } from '../repos.ts'
import { openState } from '../open-state.ts'
import type { Policy, Role, Scope } from '../types.ts'

export interface Admin {
  mint(b: {
    principal: string
    scopes: Scope[]
    repos: string[]
    ttl_s: number
    label?: string
  }): Promise<{ token: string; info: Record<string, unknown> }>
  revoke(id: string): Promise<unknown>
  tokens(): Promise<unknown>
  role(repo: string, principal: string, role: Role | 'none'): Promise<unknown>
  policy(repo: string, p: Partial<Policy>): Promise<unknown>
  task(repo: string, b: { title: string; body?: string; paths?: string[] }): Promise<{ id: string }>
  provenance(id: string, b: { key_id: string; signature: string; statement: string; head?: string }): Promise<unknown>
  /** The canonical statement to sign for a proposal's current head. */
  statement(id: string): Promise<{ proposal: string; head: string; statement: string }>
  keyAdd(b: { principal: string; public_key: string; label?: string }): Promise<{ id: string }>
  keys(principal: string | undefined): Promise<unknown>
  keyRevoke(id: string): Promise<unknown>
  done(): Promise<void>
}

async function offline(dir: string, release: () => void): Promise<Admin> {
  if (dataDirStore(dir) === 'postgres') {
    release()
    throw new Error(
      `${dir} keeps its state in PostgreSQL: start \`ag-server serve --data ${dir} --store postgres://…\` and run this again (it then goes through the server)`,
    )
  }
  const state = await openState({ dataDir: dir })
  const ctx: Ctx = {
    state,
    repos: new RepoRegistry(path.join(dir, 'repos')),
    limits: DEFAULT_LIMITS,
    tmpDir: path.join(dir, 'tmp'),
  }
  const requireRepo = (r: string): void => void ctx.repos.get(r)
  return {
    mint: (b) => adminMint(state, b),
    revoke: (id) => adminRevoke(state, id),
    tokens: async () => ({ tokens: await adminTokens(state) }),
    role: async (repo, principal, role) => (requireRepo(repo), adminSetRole(state, repo, principal, role)),
    policy: async (repo, p) => (requireRepo(repo), adminSetPolicy(state, repo, p)),
    task: async (repo, b) => createTask(ctx, 'human:admin', repo, b),
    provenance: async (id, b) => attachRecord(ctx, id, 'human:admin', b),
    statement: async (id) => {
      const p = await state.get('proposals', id)
      if (!p) throw new Error(`proposal '${id}' not found`)
      return {
        proposal: p.id,
        head: p.head,
        statement: canonicalStatement(await statementFor(ctx.repos.get(p.repo), p)),
      }
    },
    keyAdd: (b) => keyAdd(state, b),
    keys: async (principal) => ({ keys: await keyList(state, principal) }),
    keyRevoke: (id) => keyRevoke(state, id),
    done: async () => {
      ctx.repos.closeAll()
      try {
        await state.close()
      } finally {
        release()
      }
    },
  }
}

function online(dir: string, holder: LockInfo): Admin {
  const token = fs.readFileSync(path.join(dir, 'admin.token'), 'utf8').trim()
  const base = `http://${holder.listen ?? '127.0.0.1:7420'}/agwp/v1`
  const call = async (method: string, p: string, body?: unknown): Promise<unknown> => {
    const res = await fetch(base + p, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      redirect: 'error',
    })
    const json = (await res.json()) as { error?: { code: string; message: string } }
    if (!res.ok) throw new Error(`server refused (${json.error?.code ?? res.status}): ${json.error?.message ?? ''}`)
    return json
  }
  const enc = encodeURIComponent
  return {
    mint: async (b) => (await call('POST', '/admin/tokens', b)) as { token: string; info: Record<string, unknown> },
    revoke: (id) => call('DELETE', `/admin/tokens/${enc(id)}`),
    tokens: () => call('GET', '/admin/tokens'),
    role: (repo, principal, role) => call('PUT', `/admin/repos/${enc(repo)}/roles`, { principal, role }),
    policy: (repo, p) => call('PUT', `/admin/repos/${enc(repo)}/policy`, p),
    task: async (repo, b) => (await call('POST', `/admin/repos/${enc(repo)}/tasks`, b)) as { id: string },
    provenance: (id, b) => call('POST', `/proposals/${enc(id)}/provenance`, b),
    statement: async (id) =>
      (await call('GET', `/admin/proposals/${enc(id)}/statement`)) as {
        proposal: string
        head: string
        statement: string
      },
    keyAdd: async (b) => (await call('POST', '/admin/keys', b)) as { id: string },
    keys: (principal) => call('GET', `/admin/keys${principal !== undefined ? `?principal=${enc(principal)}` : ''}`),
    keyRevoke: (id) => call('DELETE', `/admin/keys/${enc(id)}`),
    done: async () => undefined,
  }
}

export async function withAdmin<T>(dir: string, fn: (a: Admin) => Promise<T>): Promise<T> {
  if (!isDataDir(dir)) throw new Error(`${dir} is not an ag-server data directory (run ag-server init)`)
  // Several instances on a PostgreSQL store each hold their own lock: any live one will do.
  const instance = liveInstance(dir)
  if (instance) return runWith(online(dir, instance), fn)
  const lock = acquireLock(dir, { pid: process.pid, kind: 'cli' })
  const admin = lock.ok
    ? await offline(dir, lock.release)
    : lock.holder.kind === 'server'
      ? online(dir, lock.holder)
      : undefined
  if (!admin) throw new Error('another ag-server command is using the data directory; retry')
  return runWith(admin, fn)
}

/** fn with admin, then admin closed (an offline one releases the lock). */
async function runWith<T>(admin: Admin, fn: (a: Admin) => Promise<T>): Promise<T> {
  try {
    return await fn(admin)
  } finally {
    await admin.done()
  }
}

/** The data directory a command works on: --data, else $AG_SERVER_DATA (the flag's variable). */
export function dataDir(dir: string | undefined): string {
  if (!dir) throw new UsageError('--data DIR is required (or set AG_SERVER_DATA)')
  return dir
}

/** What every command gets besides its arguments: where its output goes. */
export interface CliContext {
  out(s: string): void
}
