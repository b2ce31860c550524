import fs from 'node:fs'
import path from 'node:path'
import yargs, { type Argv } from 'yargs'
import { acquireLock, initDataDir, isDataDir, prepareSecret, updateLock, type LockInfo } from './datadir.ts'
import { adminMint, adminRevoke, adminSetPolicy, adminSetRole, adminTokens, repoAdd } from './admin.ts'
import { Store } from './store.ts'
import { startServer } from './http.ts'
import { holdOpen } from './holders.ts'
import { isLoopback, listenOrExplain } from './listen.ts'
import { favourMemory } from './heap.ts'
import { AgwpError } from './errors.ts'
import { closest } from '../../lib/closest.ts'
import { parseDuration } from './util.ts'
import { ROLES, SCOPES, type Policy, type Role, type Scope } from './types.ts'
import { validateBody } from './validate.ts'
import { RepoRegistry } from './repos.ts'
import { KeyedMutex } from './mutex.ts'
import { DEFAULT_LIMITS, type Ctx } from './context.ts'
import { createTask } from './coordination.ts'
import { keyAdd, keyList, keyRevoke, parsePrivateKey } from './keys.ts'
import { attachRecord, canonicalStatement, sign, statementFor } from './provenance.ts'
import { MAINTENANCE_FLAGS, maintenanceCommands, maintenanceFromFlags } from './maintenance-cli.ts'

// The operator's CLI. Commands that change state work in one of two modes:
//  - offline: no server holds the data directory; the CLI opens it under the lock;
//  - online: a server holds it; the CLI calls /agwp/v1/admin with <data>/admin.token.

type Out = (s: string) => void

interface Admin {
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
  done(): void
}

function offline(dir: string, release: () => void): Admin {
  const store = Store.open(path.join(dir, 'state'))
  const ctx: Ctx = {
    store,
    repos: new RepoRegistry(path.join(dir, 'repos')),
    mutex: new KeyedMutex(),
    limits: DEFAULT_LIMITS,
    tmpDir: path.join(dir, 'tmp'),
  }
  const requireRepo = (r: string): void => void ctx.repos.get(r)
  return {
    mint: async (b) => adminMint(store, b),
    revoke: async (id) => adminRevoke(store, id),
    tokens: async () => ({ tokens: adminTokens(store) }),
    role: async (repo, principal, role) => (requireRepo(repo), adminSetRole(store, repo, principal, role)),
    policy: async (repo, p) => (requireRepo(repo), adminSetPolicy(store, repo, p)),
    task: async (repo, b) => createTask(ctx, 'human:admin', repo, b),
    provenance: async (id, b) => attachRecord(ctx, id, 'human:admin', b),
    statement: async (id) => {
      const p = store.get('proposals', id)
      if (!p) throw new Error(`proposal '${id}' not found`)
      return {
        proposal: p.id,
        head: p.head,
        statement: canonicalStatement(await statementFor(ctx.repos.get(p.repo), p)),
      }
    },
    keyAdd: async (b) => keyAdd(store, b),
    keys: async (principal) => ({ keys: keyList(store, principal) }),
    keyRevoke: async (id) => keyRevoke(store, id),
    done: () => {
      ctx.repos.closeAll()
      store.close()
      release()
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
    done: () => undefined,
  }
}

async function withAdmin<T>(dir: string, fn: (a: Admin) => Promise<T>): Promise<T> {
  if (!isDataDir(dir)) throw new Error(`${dir} is not an ag-server data directory (run ag-server init)`)
  const lock = acquireLock(dir, { pid: process.pid, kind: 'cli' })
  const admin = lock.ok
    ? offline(dir, lock.release)
    : lock.holder.kind === 'server'
      ? online(dir, lock.holder)
      : undefined
  if (!admin) throw new Error('another ag-server command is using the data directory; retry')
  try {
    return await fn(admin)
  } finally {
    admin.done()
  }
}

const list = (s: string | undefined): string[] =>
  (s ?? '')
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean)

/** A private key is read from a file only its owner can read (never from a flag). */
function readPrivateKeyFile(file: string): string {
  const st = fs.statSync(file)
  if (process.platform !== 'win32' && (st.mode & 0o077) !== 0)
    throw new Error(
      `private key file ${file} is readable by others (mode ${(st.mode & 0o777).toString(8)}); chmod 600 it`,
    )
  return fs.readFileSync(file, 'utf8')
}

/** An operator mistake on the command line: exit 2, as yargs' own usage errors. */
class CliUsageError extends Error {}

/** `token mint --scopes/--repos`: every scope known and every repository there, or the fix. */
function checkMintLists(scopes: string[], repos: string[], known: string[]): void {
  const badScopes = scopes.filter((x) => !(SCOPES as readonly string[]).includes(x))
  if (badScopes.length > 0)
    throw new CliUsageError(
      `--scopes: unknown scope${badScopes.length > 1 ? 's' : ''} ${badScopes
        .map((x) => {
          const near = closest(x, SCOPES)
          return `${x}${near ? ` (did you mean ${near}?)` : ''}`
        })
        .join(', ')}; the scopes are ${SCOPES.join(', ')}`,
    )
  const missing = repos.filter((r) => r !== '*' && !known.includes(r))
  if (missing.length > 0)
    throw new CliUsageError(
      `--repos: no repository ${missing.join(', ')} in this data directory (it has ${known.length > 0 ? known.join(', ') : 'none'}); add one with ag-server repo add NAME --from PATH, or use '*'`,
    )
}

function parseListen(s: string): { host: string; port: number } {
  const m = /^(\[[^\]]+\]|[^:]+):([0-9]{1,5})$/.exec(s)
  if (!m) throw new Error(`--listen must be HOST:PORT, got ${s}`)
  return { host: (m[1] ?? '').replace(/^\[|\]$/g, ''), port: Number(m[2]) }
}

/** The package's version, set by build.mjs (esbuild define). */
declare const AG_MCP_VERSION: string

const NO_COMMAND = 'name a command: see the usage above'

/** What `.fail` gets as its third argument: yargs' usage printer, not the instance. */
interface UsagePrinter {
  showHelp(print: (s: string) => void): void
}

/**
 * yargs' own usage messages, made to say what to do: no command prints the usage first; a flag the
 * command does not know is named with the nearest one it does (also when yargs complains first
 * about a missing required flag, which is usually the misspelt one).
 */
function explainUsage(msg: string, usage: UsagePrinter, argv: readonly string[], known: readonly string[]): string {
  if (msg === NO_COMMAND || msg.startsWith('Not enough non-option arguments')) {
    usage.showHelp((s) => process.stderr.write(`${s}\n\n`))
    return NO_COMMAND
  }
  const unknown = argv
    .filter((a) => a.startsWith('--') && a.length > 2)
    .map((a) => a.slice(2).split('=')[0] ?? '')
    .filter((n) => !known.includes(n) && !(n.startsWith('no-') && known.includes(n.slice(3))))
  if (unknown.length === 0) return msg
  return unknown
    .map((name) => {
      if ((name === 'port' || name === 'host') && known.includes('listen'))
        return `unknown flag --${name}: ag-server takes --listen HOST:PORT (e.g. --listen 127.0.0.1:7420)`
      const near = closest(name, known)
      return `unknown flag --${name}${near ? ` (did you mean --${near}?)` : ' (see --help)'}`
    })
    .join('; ')
}

const dataOpt = {
  type: 'string',
  describe: 'data directory (default: $AG_SERVER_DATA)',
  default: process.env['AG_SERVER_DATA'],
} as const

export async function main(argv: string[], out: Out = (s) => process.stdout.write(s + '\n')): Promise<void> {
  const need = (d: string | undefined): string => {
    if (!d) throw new Error('--data DIR is required (or set AG_SERVER_DATA)')
    return d
  }
  const cli = yargs(argv)
    .scriptName('ag-server')
    .version(typeof AG_MCP_VERSION === 'string' ? AG_MCP_VERSION : '0.0.0-dev')
    .strict()
    .demandCommand(1, NO_COMMAND)
    .recommendCommands()
    .command(
      'init <dir>',
      'create a data directory and an admin token (<dir>/admin.token)',
      (y: Argv) => y.positional('dir', { type: 'string', demandOption: true }),
      (a) => {
        const { adminTokenFile } = initDataDir(String(a['dir']))
        out(`initialized ${String(a['dir'])}; admin token written to ${adminTokenFile} (mode 0600)`)
      },
    )
    .command('repo <action>', 'manage repositories', (y: Argv) =>
      y
        .command(
          'add <name>',
          'add a repository (bare clone of --from, or --empty)',
          (y2: Argv) =>
            y2
              .positional('name', { type: 'string', demandOption: true })
              .option('from', { type: 'string' })
              .option('empty', { type: 'boolean' })
              .option('shared', {
                type: 'boolean',
                describe:
                  "with --from: borrow its objects through git alternates instead of copying them (its owner keeps what this repository's refs reach)",
              })
              .option('branch', {
                type: 'string',
                default: 'main',
                describe: 'initial branch of an --empty repository',
              })
              .option('data', dataOpt)
              .check((a) => {
                if (!a['from'] === !a['empty']) throw new Error('give exactly one of --from PATH or --empty')
                if (a['shared'] && !a['from']) throw new Error('--shared borrows the objects of --from PATH: name it')
                return true
              }),
          (a) => {
            const dir = need(a['data'] as string | undefined)
            if (!isDataDir(dir)) throw new Error(`${dir} is not an ag-server data directory`)
            repoAdd(dir, String(a['name']), a['from'] as string | undefined, String(a['branch']), a['shared'] === true)
            out(`repository ${String(a['name'])} added`)
          },
        )
        .demandCommand(1, NO_COMMAND),
    )
    .command('token <action>', 'mint, revoke or list tokens', (y: Argv) =>
      y
        .command(
          'mint',
          'mint a token and write it to --out (mode 0600); prints only its id',
          (y2: Argv) =>
            y2
              .option('principal', { type: 'string', demandOption: true })
              .option('scopes', { type: 'string', demandOption: true, describe: `comma list of ${SCOPES.join(',')}` })
              .option('repos', { type: 'string', demandOption: true, describe: "comma list of repositories, or '*'" })
              .option('ttl', { type: 'string', default: '8h' })
              .option('label', { type: 'string' })
              .option('out', { type: 'string', demandOption: true })
              .option('data', dataOpt),
          async (a) => {
            const dir = need(a['data'] as string | undefined)
            const scopes = list(a['scopes'] as string)
            const repos = list(a['repos'] as string)
            checkMintLists(scopes, repos, new RepoRegistry(path.join(dir, 'repos')).names())
            const body = {
              principal: String(a['principal']),
              scopes: scopes as Scope[],
              repos,
              ttl_s: parseDuration(String(a['ttl'])),
              ...(a['label'] ? { label: String(a['label']) } : {}),
            }
            validateBody('AdminTokenMintRequest', body)
            const file = String(a['out'])
            // The destination is checked and reserved before minting, and a token whose secret could
            // still not be written is revoked: no live token is left that nobody holds.
            const pending = prepareSecret(file, `--out ${file}`)
            const { info } = await withAdmin(dir, async (adm) => {
              const minted = await adm.mint(body)
              try {
                pending.commit(minted.token)
              } catch (e) {
                const id = String(minted.info['id'])
                const why = (e as Error).message
                const revoked = await adm.revoke(id).then(
                  () => `token ${id} was revoked, so none is live without its secret`,
                  (r: unknown) => `revoking token ${id} failed too (${String(r)}): run ag-server token revoke ${id}`,
                )
                throw new Error(`--out ${file}: the token could not be written (${why}); ${revoked}`)
              }
              return minted
            }).finally(() => pending.abort())
            out(
              `minted ${String(info['id'])} for ${body.principal} (expires ${String(info['expires_at'])}); token written to ${String(a['out'])}`,
            )
          },
        )
        .command(
          'revoke <id>',
          'revoke a token by id',
          (y2: Argv) => y2.positional('id', { type: 'string', demandOption: true }).option('data', dataOpt),
          async (a) => {
            await withAdmin(need(a['data'] as string | undefined), (adm) => adm.revoke(String(a['id'])))
            out(`revoked ${String(a['id'])}`)
          },
        )
        .command(
          'list',
          'list tokens (never the secrets)',
          (y2: Argv) => y2.option('data', dataOpt),
          async (a) => {
            out(JSON.stringify(await withAdmin(need(a['data'] as string | undefined), (adm) => adm.tokens()), null, 2))
          },
        )
        .demandCommand(1, NO_COMMAND),
    )
    .command(
      'role set',
      "set (or with --role none, remove) a principal's role on a repository",
      (y: Argv) =>
        y
          .option('repo', { type: 'string', demandOption: true })
          .option('principal', { type: 'string', demandOption: true })
          .option('role', { type: 'string', demandOption: true, choices: [...ROLES, 'none'] })
          .option('data', dataOpt),
      async (a) => {
        const body = { principal: String(a['principal']), role: String(a['role']) as Role | 'none' }
        validateBody('AdminRoleSetRequest', body)
        await withAdmin(need(a['data'] as string | undefined), (adm) =>
          adm.role(String(a['repo']), body.principal, body.role),
        )
        out(`${body.principal} is ${body.role} on ${String(a['repo'])}`)
      },
    )
    .command(
      'policy set',
      "change a repository's policy",
      (y: Argv) =>
        y
          .option('repo', { type: 'string', demandOption: true })
          .option('required-approvals', { type: 'number' })
          .option('require-provenance-for-agents', { type: 'boolean' })
          .option('protected-branches', { type: 'string', describe: 'comma list of branch globs' })
          .option('data', dataOpt),
      async (a) => {
        const p: Partial<Policy> = {}
        if (a['required-approvals'] !== undefined) p.required_approvals = Number(a['required-approvals'])
        if (a['require-provenance-for-agents'] !== undefined)
          p.require_provenance_for_agents = Boolean(a['require-provenance-for-agents'])
        if (a['protected-branches'] !== undefined) p.protected_branches = list(String(a['protected-branches']))
        validateBody('AdminPolicySetRequest', p)
        out(
          JSON.stringify(
            await withAdmin(need(a['data'] as string | undefined), (adm) => adm.policy(String(a['repo']), p)),
          ),
        )
      },
    )
    .command(
      'task add',
      'create a task',
      (y: Argv) =>
        y
          .option('repo', { type: 'string', demandOption: true })
          .option('title', { type: 'string', demandOption: true })
          .option('body', { type: 'string' })
          .option('paths', { type: 'string', describe: 'comma list of globs' })
          .option('data', dataOpt),
      async (a) => {
        const body = {
          title: String(a['title']),
          ...(a['body'] !== undefined ? { body: String(a['body']) } : {}),
          ...(a['paths'] !== undefined ? { paths: list(String(a['paths'])) } : {}),
        }
        validateBody('AdminTaskCreateRequest', body)
        const t = await withAdmin(need(a['data'] as string | undefined), (adm) => adm.task(String(a['repo']), body))
        out(t.id)
      },
    )
    .command('key <action>', "manage principals' signing keys (Ed25519)", (y: Argv) =>
      y
        .command(
          'add',
          'register a public key for a principal (PEM or an ssh-ed25519 line); prints its id',
          (y2: Argv) =>
            y2
              .option('principal', { type: 'string', demandOption: true })
              .option('ed25519', { type: 'string', demandOption: true, describe: 'public key file' })
              .option('label', { type: 'string' })
              .option('data', dataOpt),
          async (a) => {
            const body = {
              principal: String(a['principal']),
              public_key: fs.readFileSync(String(a['ed25519']), 'utf8'),
              ...(a['label'] !== undefined ? { label: String(a['label']) } : {}),
            }
            validateBody('AdminKeyAddRequest', body)
            const k = await withAdmin(need(a['data'] as string | undefined), (adm) => adm.keyAdd(body))
            out(`added key ${k.id} for ${body.principal}`)
          },
        )
        .command(
          'list',
          'list keys (public halves only)',
          (y2: Argv) => y2.option('principal', { type: 'string' }).option('data', dataOpt),
          async (a) => {
            const principal = a['principal'] !== undefined ? String(a['principal']) : undefined
            out(
              JSON.stringify(
                await withAdmin(need(a['data'] as string | undefined), (adm) => adm.keys(principal)),
                null,
                2,
              ),
            )
          },
        )
        .command(
          'revoke <id>',
          'revoke a key: records attached from now on with it are refused',
          (y2: Argv) => y2.positional('id', { type: 'string', demandOption: true }).option('data', dataOpt),
          async (a) => {
            await withAdmin(need(a['data'] as string | undefined), (adm) => adm.keyRevoke(String(a['id'])))
            out(`revoked ${String(a['id'])}`)
          },
        )
        .demandCommand(1),
    )
    .command('provenance <action>', 'sign and attach provenance records', (y: Argv) =>
      y
        .command(
          'sign <proposal>',
          "sign the proposal's current head with a private key read from --key-file; writes the record",
          (y2: Argv) =>
            y2
              .positional('proposal', { type: 'string', demandOption: true })
              .option('key-file', {
                type: 'string',
                demandOption: true,
                describe: 'Ed25519 private key, PEM (mode 0600)',
              })
              .option('out', { type: 'string', describe: 'write the record here (default: stdout)' })
              .option('attach', { type: 'boolean', default: false, describe: 'attach the record as well' })
              .option('data', dataOpt),
          async (a) => {
            const dir = need(a['data'] as string | undefined)
            const { key, keyId } = parsePrivateKey(readPrivateKeyFile(String(a['key-file'])))
            const record = await withAdmin(dir, async (adm) => {
              const s = await adm.statement(String(a['proposal']))
              const r = { key_id: keyId, signature: sign(s.statement, key), statement: s.statement }
              if (a['attach']) await adm.provenance(s.proposal, { ...r, head: s.head })
              return r
            })
            if (a['out'] !== undefined) fs.writeFileSync(String(a['out']), JSON.stringify(record) + '\n')
            else out(JSON.stringify(record))
            if (a['attach']) out(`provenance signed with ${keyId} and attached to ${String(a['proposal'])}`)
          },
        )
        .command(
          'attach <proposal>',
          'attach a signed record (from provenance sign --out); the server verifies it',
          (y2: Argv) =>
            y2
              .positional('proposal', { type: 'string', demandOption: true })
              .option('record', { type: 'string', describe: 'record file written by provenance sign' })
              .option('key-id', { type: 'string' })
              .option('signature', { type: 'string' })
              .option('signature-file', { type: 'string' })
              .option('statement', { type: 'string' })
              .option('head', { type: 'string' })
              .option('data', dataOpt),
          async (a) => {
            let body: { key_id: string; signature: string; statement: string; head?: string }
            if (a['record'] !== undefined) {
              body = JSON.parse(fs.readFileSync(String(a['record']), 'utf8')) as typeof body
            } else {
              const sig = a['signature-file']
                ? fs.readFileSync(String(a['signature-file']), 'utf8').trim()
                : a['signature']
              if (!sig || a['key-id'] === undefined || a['statement'] === undefined)
                throw new Error('give --record FILE, or --key-id, --statement and --signature or --signature-file')
              body = { key_id: String(a['key-id']), signature: String(sig), statement: String(a['statement']) }
            }
            if (a['head']) body = { ...body, head: String(a['head']) }
            validateBody('ProvenanceAttachRequest', body)
            await withAdmin(need(a['data'] as string | undefined), (adm) => adm.provenance(String(a['proposal']), body))
            out(`provenance verified and attached to ${String(a['proposal'])}`)
          },
        )
        .demandCommand(1),
    )
    .command('maintenance <action>', 'pack and prune the repositories: status, run', (y: Argv) =>
      maintenanceCommands(y, out, dataOpt),
    )
    .command(
      'serve',
      'run the AGWP v1 server',
      (y: Argv) =>
        y
          .option('data', dataOpt)
          .option('listen', { type: 'string', default: '127.0.0.1:7420' })
          .option('rate', { type: 'number', default: 50, describe: 'requests/s per token (0: unlimited)' })
          .option('burst', { type: 'number', default: 200 })
          .option('max-body-bytes', { type: 'number', default: DEFAULT_LIMITS.maxBodyBytes })
          .option('max-file-bytes', { type: 'number', default: DEFAULT_LIMITS.maxFileBytes })
          .option('ui', {
            type: 'boolean',
            default: false,
            describe: 'serve the review page at /ui/ (people sign in with their own AGWP token; not part of AGWP)',
          })
          .option('ui-origin', {
            type: 'string',
            describe: 'the origin people open the review page at, behind a TLS proxy (https://review.example.com)',
          })
          .option('ui-session-ttl', {
            type: 'string',
            default: '8h',
            describe: 'how long a review-page session lasts at most (it also ends with its token)',
          })
          .option('exit-with-stdin', {
            type: 'boolean',
            describe: 'exit when stdin closes: for a parent that runs this server as its child',
          })
          .option('exit-with-holders', {
            type: 'boolean',
            describe:
              'run while held: open a second loopback port for holders (written to <data>/lock) and exit when the last holder, and stdin, have closed (ag-mcp --local sessions share a server this way)',
          })
          .option('lean-heap', {
            type: 'boolean',
            default: true,
            describe: 'favour memory over speed in the JS heap (--no-lean-heap: faster, twice the RSS)',
          })
          .options(MAINTENANCE_FLAGS),
      async (a) => {
        if (a['lean-heap'] !== false) favourMemory()
        const dir = need(a['data'] as string | undefined)
        if (!isDataDir(dir)) throw new Error(`${dir} is not an ag-server data directory (run ag-server init)`)
        const { host, port } = parseListen(String(a['listen']))
        const maintenance = maintenanceFromFlags(a)
        const lock = acquireLock(dir, { pid: process.pid, kind: 'server' })
        if (!lock.ok) throw new Error(`data directory is in use by pid ${lock.holder.pid} (${lock.holder.kind})`)
        const srv = await listenOrExplain(host, port, lock.release, () =>
          startServer({
            dataDir: dir,
            host,
            port,
            rate: Number(a['rate']),
            burst: Number(a['burst']),
            limits: { maxBodyBytes: Number(a['max-body-bytes']), maxFileBytes: Number(a['max-file-bytes']) },
            maintenance,
            ...(a['ui'] === true
              ? {
                  ui: {
                    sessionTtlS: parseDuration(String(a['ui-session-ttl'])),
                    ...(a['ui-origin'] !== undefined ? { origin: String(a['ui-origin']) } : {}),
                  },
                }
              : {}),
          }),
        )
        const listen = srv.url.replace(/^http:\/\//, '').replace(/\/agwp\/v1$/, '')
        let stopping = false
        const stop = (): void => {
          if (stopping) return
          stopping = true
          void srv.close().finally(() => {
            lock.release()
            process.exit(0)
          })
        }
        const holders = a['exit-with-holders']
          ? await holdOpen({ host, store: srv.ctx.store, stdinHolds: true, onIdle: stop })
          : undefined
        updateLock(dir, { pid: process.pid, kind: 'server', listen, ...(holders ? { holders: holders.address } : {}) })
        if (!isLoopback(host))
          process.stderr.write(
            `ag-server: warning: plain HTTP on ${listen}, beyond loopback: tokens and code cross the network unencrypted; put a TLS reverse proxy in front and listen on 127.0.0.1 (docs/security.md, "A shared server over a network")\n`,
          )
        out(`ag-server listening on ${srv.url}${holders ? ` (holders on ${holders.address})` : ''}`)
        if (srv.ui)
          out(
            `review page at ${srv.url.replace(/\/agwp\/v1$/, '')}/ui/ (sessions are kept in memory: a restart signs people out)`,
          )
        process.once('SIGINT', stop)
        process.once('SIGTERM', stop)
        // The parent holds the other end of stdin: when it ends, however it ends (even SIGKILL), the
        // pipe closes and this server follows it instead of living on unowned.
        if (a['exit-with-stdin']) {
          process.stdin.once('end', stop)
          process.stdin.once('error', stop)
          process.stdin.resume()
        }
        await new Promise<never>(() => undefined)
      },
    )
    .fail((msg, err, usage: UsagePrinter) => {
      if (err) throw err
      // At failure yargs holds the options of the command that failed.
      // getOptions() exists at run time but is missing from @types/yargs.
      const known = Object.keys((cli as unknown as { getOptions(): { key: object } }).getOptions().key)
      process.stderr.write(`ag-server: ${explainUsage(msg, usage, argv, known)}\n`)
      process.exit(2)
    })
    .help()
  try {
    await cli.parseAsync()
  } catch (e) {
    const msg = e instanceof AgwpError ? `${e.code}: ${e.message}` : e instanceof Error ? e.message : String(e)
    process.stderr.write(`ag-server: ${msg}\n`)
    process.exit(e instanceof CliUsageError ? 2 : 1)
  }
}
