import crypto from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { execFileSync, spawnSync } from 'node:child_process'
import { Ajv2020 } from 'ajv/dist/2020.js'
import schema from '../../contract/agwp-v1.schema.json' with { type: 'json' }
import { startServer, type RunningServer, type ServerOptions } from '../../server/src/http.ts'
import { adminMint } from '../../server/src/admin.ts'
import { JournalState } from '../../server/src/journal-state.ts'
import type { State } from '../../server/src/state.ts'
import type { Store } from '../../server/src/store.ts'
import type { LeaseRec, Policy, ProposalRec, ReviewRec, RunRec, Scope, WorkspaceRec } from '../../server/src/types.ts'
import type { Json } from '../helpers/json.ts'
import { GIT_IDENTITY } from '../helpers/git-identity.ts'
import { createDatabase } from '../helpers/postgres.ts'
import { seedWorld } from '../helpers/agwp-world.ts'
import type { Person } from '../helpers/agwp-world.ts'

// Shared fixtures: real git repositories, a real data directory, a real server on loopback.

export const GIT_ENV = { ...process.env, ...GIT_IDENTITY }

/** An open workspace record with no changes, for tests of the store (fields in `over` win). */
export function workspaceRecord(id: string, repo: string, over: Partial<WorkspaceRec> = {}): WorkspaceRec {
  return {
    id,
    repo,
    base: null,
    base_ref: 'main',
    owner: 'agent:a',
    state: 'open',
    changes: {},
    proposals: [],
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    ...over,
  }
}

/** An open proposal record, for tests of the store (fields in `over` win). */
export function proposalRecord(id: string, repo: string, over: Partial<ProposalRec> = {}): ProposalRec {
  return {
    id,
    repo,
    title: id,
    description: '',
    reasoning: '',
    state: 'open',
    author: 'agent:a',
    author_principal: 'agent:a',
    target: 'main',
    base: null,
    head: '0'.repeat(40),
    workspace: 'ws-1',
    revisions: [],
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    ...over,
  }
}

/** A comment review of a proposal, for tests of the store. */
export function reviewRecord(id: string, proposal: string): ReviewRec {
  return {
    id,
    proposal,
    reviewer: 'human:r',
    reviewer_principal: 'human:r',
    verdict: 'comment',
    body: '',
    comments: [],
    head: '0'.repeat(40),
    created_at: '2026-01-01T00:00:00.000Z',
  }
}

/** A live lease on a/** held by agent:a, for tests of the store (fields in `over` win). */
export function leaseRecord(id: string, repo: string, over: Partial<LeaseRec> = {}): LeaseRec {
  return {
    id,
    repo,
    paths: ['a/**'],
    holder: 'agent:a',
    principal: 'agent:a',
    expires_at: '2099-01-01T00:00:00.000Z',
    created_at: '2026-01-01T00:00:00.000Z',
    released: false,
    ...over,
  }
}

/** An active run of a task by agent:a, for tests of the store (fields in `over` win). */
export function runRecord(id: string, task: string, repo: string, over: Partial<RunRec> = {}): RunRec {
  return {
    run_id: id,
    task,
    repo,
    principal: 'agent:a',
    state: 'active',
    lease_expires_at: '2099-01-01T00:00:00.000Z',
    notes: [],
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    ...over,
  }
}

export function sh(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: GIT_ENV, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 })
}

/** Directories tmpdir() made, removed when the test process exits (a test's own teardown may go first). */
const made: string[] = []
process.once('exit', () => {
  // maxRetries: a server's git child killed with it may still be finishing a rename.
  for (const dir of made) fs.rmSync(dir, { recursive: true, force: true, maxRetries: 10 })
})

export function tmpdir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `agwp-${prefix}-`))
  made.push(dir)
  return dir
}

/** A working repository with a few commits, a binary file and nested directories. */
export function makeSourceRepo(root: string, commits = 3): string {
  const dir = path.join(root, 'src')
  fs.mkdirSync(dir)
  sh(dir, 'init', '-q', '-b', 'main')
  fs.mkdirSync(path.join(dir, 'lib/deep'), { recursive: true })
  fs.writeFileSync(path.join(dir, 'README.md'), '# demo\nhello world\n')
  fs.writeFileSync(path.join(dir, 'lib/util.ts'), 'export const x = 1;\n')
  fs.writeFileSync(path.join(dir, 'lib/deep/leaf.txt'), 'leaf\n')
  fs.writeFileSync(path.join(dir, 'logo.bin'), Buffer.from([0, 1, 2, 255, 254, 0, 7]))
  sh(dir, 'add', '.')
  sh(dir, 'commit', '-q', '-m', 'initial')
  for (let i = 1; i < commits; i++) {
    fs.appendFileSync(path.join(dir, 'lib/util.ts'), `export const v${i} = ${i};\n`)
    sh(dir, 'commit', '-q', '-am', `change ${i}`)
  }
  return dir
}

/** A principal of the fixture: its token's scopes and its role on 'demo' (null: none). */
export type Principal = Person

export const ALL_AGENT: Scope[] = ['read', 'workspace', 'propose', 'coordinate']

export interface Fixture {
  root: string
  data: string
  server: RunningServer
  tokens: Record<string, string>
  // body is `any` on purpose: tests read fields of many response shapes, and the shapes
  // themselves are checked against the contract with contractErrors().
  api: (
    who: string,
    method: string,
    p: string,
    body?: unknown,
    headers?: Record<string, string>,
  ) => Promise<{ status: number; body: Json; headers: Headers }>
  close: () => Promise<void>
}

/**
 * Data dir with repo 'demo' and the given principals (name -> token with scopes, role on demo).
 * Default principals: alice (agent contributor), bob (agent contributor), rita (human reviewer),
 * mona (human maintainer), reed (agent, read scope, reader), admin (admin scope).
 */
export async function fixture(
  opts: {
    principals?: Record<string, Principal>
    policy?: Partial<Policy>
    server?: Partial<ServerOptions>
    commits?: number
    setup?: (src: string) => void
  } = {},
): Promise<Fixture> {
  const root = tmpdir('fx')
  const src = makeSourceRepo(root, opts.commits ?? 3)
  opts.setup?.(src)
  const data = path.join(root, 'data')
  // AG_TEST_STORE=postgres: the same tests with the state in a fresh PostgreSQL database
  const db = process.env['AG_TEST_STORE'] === 'postgres' ? await createDatabase() : undefined
  const store = db ? { store: db.url } : {}
  const principals: Record<string, Principal> = opts.principals ?? {
    alice: { principal: 'agent:alice', role: 'contributor', scopes: ALL_AGENT },
    bob: { principal: 'agent:bob', role: 'contributor', scopes: ALL_AGENT },
    rita: { principal: 'human:rita', role: 'reviewer', scopes: ['read', 'review'] },
    mona: {
      principal: 'human:mona',
      role: 'maintainer',
      scopes: ['read', 'review', 'integrate', 'workspace', 'propose'],
    },
    maxi: {
      principal: 'agent:maxi',
      role: 'maintainer',
      scopes: ['read', 'workspace', 'propose', 'review', 'integrate'],
    },
    reed: { principal: 'agent:reed', role: 'reader', scopes: ['read'] },
    admin: { principal: 'human:root', role: 'admin', scopes: ['read', 'admin'] },
  }
  const { tokens } = await seedWorld(data, {
    repos: { demo: src },
    people: principals,
    ...(opts.policy ? { policy: { demo: opts.policy } } : {}),
    ...store,
  })
  const server = await startServer({
    dataDir: data,
    host: '127.0.0.1',
    port: 0,
    rate: 0,
    log: () => undefined,
    ...store,
    ...(opts.server ?? {}),
  })
  const api: Fixture['api'] = async (who, method, p, body, headers = {}) => {
    const auth = who === '' ? {} : { authorization: `Bearer ${tokens[who] ?? who}` }
    const res = await fetch(server.url + p, {
      method,
      headers: { ...auth, ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
      ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
    })
    const text = await res.text()
    let parsed: unknown = text
    try {
      parsed = JSON.parse(text)
    } catch {
      // keep text
    }
    return { status: res.status, body: parsed, headers: res.headers }
  }
  return {
    root,
    data,
    server,
    tokens,
    api,
    close: async () => {
      await server.close()
      // Every test that wrote through the server leaves repositories git calls sound.
      const problems = fsckProblems(data)
      fs.rmSync(root, { recursive: true, force: true })
      await db?.drop()
      if (problems) throw new Error(`git fsck after the test:\n${problems}`)
    },
  }
}

const ajv = new Ajv2020({ strict: true, allErrors: true })
ajv.addSchema(schema)

/** Validate a response body against a contract definition; returns the error list ('' when valid). */
export function contractErrors(def: string, body: unknown): string {
  const v = ajv.getSchema(`${schema.$id}#/$defs/${def}`)
  if (!v) return `no definition ${def}`
  return v(body) ? '' : ajv.errorsText(v.errors)
}

/** What `git fsck` reports for each repository of a data directory ('' when all are sound). */
export function fsckProblems(data: string): string {
  const out: string[] = []
  const reposDir = path.join(data, 'repos')
  for (const name of fs.existsSync(reposDir) ? fs.readdirSync(reposDir) : []) {
    if (!name.endsWith('.git')) continue
    const r = spawnSync(
      'git',
      ['--git-dir', path.join(reposDir, name), 'fsck', '--strict', '--no-progress', '--no-dangling'],
      {
        env: GIT_ENV,
        encoding: 'utf8',
      },
    )
    // notices (an empty repository's unborn HEAD) are not damage
    const text = `${r.stdout}${r.stderr}`
      .split('\n')
      .filter((l) => l.trim() !== '' && !l.startsWith('notice:'))
      .join('\n')
    if (r.status !== 0 || text !== '') out.push(`${name} (exit ${r.status}): ${text}`)
  }
  return out.join('\n')
}

export interface SigningKey {
  id: string
  privateKey: crypto.KeyObject
  publicPem: string
}

const keyAdmins = new WeakMap<Fixture, string>()
/** A token of an admin for all repositories: the only kind that manages keys. */
export async function keyAdminToken(fx: Fixture): Promise<string> {
  let token = keyAdmins.get(fx)
  if (token === undefined) {
    token = (
      await adminMint(fx.server.ctx.state, {
        principal: 'human:keys',
        scopes: ['admin'],
        repos: ['*'],
        ttl_s: 3600,
      })
    ).token
    keyAdmins.set(fx, token)
  }
  return token
}

/**
 * The journal store under a server's state, for tests that look at or fault the journal
 * itself (commit counts, injected write failures, records planted as an older server wrote them).
 */
export function journalStore(ctx: { state: State }): Store {
  if (!(ctx.state instanceof JournalState)) throw new Error(`not the journal backend: ${ctx.state.backend}`)
  return ctx.state.store
}

/** A fresh Ed25519 key pair registered for `principal` through the admin API. */
export async function registerKey(fx: Fixture, principal: string): Promise<SigningKey> {
  const { publicKey, privateKey } = crypto.generateKeyPairSync('ed25519')
  const publicPem = publicKey.export({ type: 'spki', format: 'pem' }).toString()
  const r = await fx.api(await keyAdminToken(fx), 'POST', '/admin/keys', { principal, public_key: publicPem })
  if (r.status !== 201) throw new Error(`key add: ${r.status} ${JSON.stringify(r.body)}`)
  return { id: r.body.id, privateKey, publicPem }
}

/** The record the key holder produces for a proposal's current head (as `ag-server provenance sign`). */
export async function signedRecord(
  fx: Fixture,
  id: string,
  key: SigningKey,
  who = 'admin',
): Promise<{ key_id: string; signature: string; statement: string }> {
  const s = await fx.api(who, 'GET', `/admin/proposals/${id}/statement`)
  if (s.status !== 200) throw new Error(`statement: ${s.status} ${JSON.stringify(s.body)}`)
  const signature = crypto.sign(null, Buffer.from(s.body.statement, 'utf8'), key.privateKey).toString('base64')
  return { key_id: key.id, signature, statement: s.body.statement }
}
