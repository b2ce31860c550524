// ag-server's operator CLI, declared as data: each command's words, flags and summary here, its
// code in server/src/cli/*.ts, imported only when it runs (serving loads no mint code, minting no
// HTTP server). lib/cli parses the words, answers --help, names the nearest slip, and exits 2 for
// a usage error. Commands that change state open the data directory offline under its lock, or
// call the running server's admin API (cli/admin.ts).
import { runCommand, type Command, type Program } from '../../lib/cli/commands.ts'
import type { Flag, FlagTable } from '../../lib/cli/flags.ts'
import { DEFAULT_LIMITS } from './context.ts'
import { AgwpError } from './errors.ts'
import { ROLES, SCOPES } from './types.ts'
import type { CliContext } from './cli/admin.ts'
import { INSTANCE_FLAGS } from './cli/instance.ts'
import { MAINTENANCE_FLAGS } from './cli/maintenance.ts'

/** The package's version, set by build.mjs (esbuild define). */
declare const AG_MCP_VERSION: string

const data: Flag = { type: 'string', value: 'DIR', env: 'AG_SERVER_DATA', describe: 'the data directory' }
const required = (value: string, describe: string, type: Flag['type'] = 'string'): Flag => ({
  type,
  value,
  describe,
  required: true,
})
const optional = (value: string, describe: string, type: Flag['type'] = 'string'): Flag => ({ type, value, describe })

const store: Flag = {
  type: 'string',
  value: 'URL',
  env: 'AG_SERVER_STORE',
  describe:
    "keep the state in this PostgreSQL database (postgres://USER:PASSWORD@HOST:PORT/DB) instead of the data directory's journal; repositories stay in --data",
}

const SERVE_FLAGS: FlagTable = {
  data,
  store,
  migrate: {
    type: 'boolean',
    default: true,
    describe:
      "with --store: apply the database schema's pending migrations at start (--no-migrate: refuse an old schema instead, naming the command that upgrades it)",
  },
  ...INSTANCE_FLAGS,
  ...MAINTENANCE_FLAGS,
  listen: { type: 'string', value: 'HOST:PORT', default: '127.0.0.1:7420', describe: 'the address to listen on' },
  rate: { type: 'number', value: 'N', default: 50, describe: 'requests/s per token (0: unlimited)' },
  burst: { type: 'number', value: 'N', default: 200, describe: 'requests a token may make at once' },
  'max-body-bytes': {
    type: 'number',
    value: 'BYTES',
    default: DEFAULT_LIMITS.maxBodyBytes,
    describe: 'largest request body',
  },
  'max-file-bytes': { type: 'number', value: 'BYTES', default: DEFAULT_LIMITS.maxFileBytes, describe: 'largest file' },
  ui: {
    type: 'boolean',
    describe: 'serve the review page at /ui/ (people sign in with their own AGWP token; not part of AGWP)',
  },
  'ui-origin': optional(
    'ORIGIN',
    'the origin people open the review page at, behind a TLS proxy (https://review.example.com)',
  ),
  'ui-session-ttl': {
    type: 'string',
    value: 'DURATION',
    default: '8h',
    describe: 'how long a review-page session lasts at most (it also ends with its token)',
  },
  'exit-with-stdin': {
    type: 'boolean',
    describe: 'exit when stdin closes: for a parent that runs this server as its child',
  },
  'exit-with-holders': {
    type: 'boolean',
    describe:
      'run while held: open a second loopback port for holders (written to <data>/lock) and exit when the last holder, and stdin, have closed (ag-mcp --local sessions share a server this way)',
  },
  'lean-heap': {
    type: 'boolean',
    default: true,
    describe: 'favour memory over speed in the JS heap (--no-lean-heap: faster, twice the RSS)',
  },
}

const repoPrincipal = {
  repo: required('NAME', 'the repository'),
  principal: required('PRINCIPAL', 'who (agent:NAME or human:NAME)'),
}

export const COMMANDS: readonly Command<CliContext>[] = [
  {
    name: 'init',
    summary: 'create a data directory and an admin token (<dir>/admin.token)',
    args: ['<dir>'],
    flags: {
      store: {
        ...store,
        describe:
          "keep the state (the admin token too) in this PostgreSQL database instead of the directory's journal; serve then needs the same --store",
      },
    },
    load: async () => (await import('./cli/repos.ts')).init,
  },
  {
    name: 'repo',
    summary: 'manage repositories',
    commands: [
      {
        name: 'add',
        summary: 'add a repository (bare clone of --from, or --empty)',
        args: ['<name>'],
        flags: {
          from: optional('PATH', 'the repository to clone'),
          empty: { type: 'boolean', describe: 'start with no commits' },
          shared: {
            type: 'boolean',
            describe:
              "with --from: borrow its objects through git alternates instead of copying them (its owner keeps what this repository's refs reach)",
          },
          branch: {
            type: 'string',
            value: 'NAME',
            default: 'main',
            describe: 'initial branch of an --empty repository',
          },
          data,
        },
        load: async () => (await import('./cli/repos.ts')).add,
      },
    ],
  },
  {
    name: 'token',
    summary: 'mint, revoke or list tokens',
    commands: [
      {
        name: 'mint',
        summary: 'mint a token and write it to --out (mode 0600); prints only its id',
        flags: {
          principal: required('PRINCIPAL', 'who the token is for (agent:NAME or human:NAME)'),
          scopes: required('SCOPES', `comma list of ${SCOPES.join(', ')}`, 'list'),
          repos: required('REPOS', "comma list of repositories, or '*'", 'list'),
          ttl: { type: 'string', value: 'DURATION', default: '8h', describe: 'how long it lives (30m, 8h, 7d)' },
          label: optional('TEXT', 'a note shown by token list'),
          out: required('FILE', 'where the token is written (mode 0600)'),
          data,
        },
        load: async () => (await import('./cli/tokens.ts')).mint,
      },
      {
        name: 'revoke',
        summary: 'revoke a token by id',
        args: ['<id>'],
        flags: { data },
        load: async () => (await import('./cli/tokens.ts')).revoke,
      },
      {
        name: 'list',
        summary: 'list tokens (never the secrets)',
        flags: { data },
        load: async () => (await import('./cli/tokens.ts')).list,
      },
    ],
  },
  {
    name: 'role',
    summary: "set principals' roles on repositories",
    commands: [
      {
        name: 'set',
        summary: "set (or with --role none, remove) a principal's role on a repository",
        flags: {
          ...repoPrincipal,
          role: { type: 'string', value: 'ROLE', required: true, choices: [...ROLES, 'none'], describe: 'the role' },
          data,
        },
        load: async () => (await import('./cli/repos.ts')).setRole,
      },
    ],
  },
  {
    name: 'policy',
    summary: "change repositories' policies",
    commands: [
      {
        name: 'set',
        summary: "change a repository's policy",
        flags: {
          repo: repoPrincipal.repo,
          'required-approvals': optional('N', 'approvals a proposal needs', 'number'),
          'require-provenance-for-agents': {
            type: 'boolean',
            describe: "agents' proposals need a verified provenance record",
          },
          'protected-branches': optional('GLOBS', 'comma list of branch globs', 'list'),
          data,
        },
        load: async () => (await import('./cli/repos.ts')).setPolicy,
      },
    ],
  },
  {
    name: 'task',
    summary: 'create tasks',
    commands: [
      {
        name: 'add',
        summary: 'create a task; prints its id',
        flags: {
          repo: repoPrincipal.repo,
          title: required('TEXT', 'the title'),
          body: optional('TEXT', 'the description'),
          paths: optional('GLOBS', 'comma list of globs', 'list'),
          data,
        },
        load: async () => (await import('./cli/repos.ts')).addTask,
      },
    ],
  },
  {
    name: 'key',
    summary: "manage principals' signing keys (Ed25519)",
    commands: [
      {
        name: 'add',
        summary: 'register a public key for a principal (PEM or an ssh-ed25519 line); prints its id',
        flags: {
          principal: repoPrincipal.principal,
          ed25519: required('FILE', 'public key file'),
          label: optional('TEXT', 'a note shown by key list'),
          data,
        },
        load: async () => (await import('./cli/keys.ts')).addKey,
      },
      {
        name: 'list',
        summary: 'list keys (public halves only)',
        flags: { principal: optional('PRINCIPAL', 'only this principal'), data },
        load: async () => (await import('./cli/keys.ts')).listKeys,
      },
      {
        name: 'revoke',
        summary: 'revoke a key: records attached from now on with it are refused',
        args: ['<id>'],
        flags: { data },
        load: async () => (await import('./cli/keys.ts')).revokeKey,
      },
    ],
  },
  {
    name: 'provenance',
    summary: 'sign and attach provenance records',
    commands: [
      {
        name: 'sign',
        summary: "sign the proposal's current head with a private key read from --key-file; writes the record",
        args: ['<proposal>'],
        flags: {
          'key-file': required('FILE', 'Ed25519 private key, PEM (mode 0600)'),
          out: optional('FILE', 'write the record here (default: stdout)'),
          attach: { type: 'boolean', describe: 'attach the record as well' },
          data,
        },
        load: async () => (await import('./cli/keys.ts')).signProvenance,
      },
      {
        name: 'attach',
        summary: 'attach a signed record (from provenance sign --out); the server verifies it',
        args: ['<proposal>'],
        flags: {
          record: optional('FILE', 'record file written by provenance sign'),
          'key-id': optional('ID', 'the key that signed (without --record)'),
          signature: optional('BASE64', 'the signature (without --record)'),
          'signature-file': optional('FILE', 'the signature, from a file'),
          statement: optional('TEXT', 'the signed statement (without --record)'),
          head: optional('SHA', 'the head the record is for'),
          data,
        },
        load: async () => (await import('./cli/keys.ts')).attachProvenance,
      },
    ],
  },
  {
    name: 'maintenance',
    summary: "the repositories' packing and pruning (serve does it in the background)",
    commands: [
      {
        name: 'status',
        summary: "each repository's objects, packs and refs now, and its last maintenance runs",
        flags: {
          repo: optional('NAME', 'one repository (default: all)'),
          json: { type: 'boolean', describe: 'print JSON' },
          data,
        },
        load: async () => (await import('./cli/maintenance.ts')).status,
      },
      {
        name: 'run',
        summary: 'maintain the repositories now, with the server stopped (what is due; --full: everything)',
        flags: {
          repo: optional('NAME', 'one repository (default: all)'),
          full: { type: 'boolean', describe: 'pack refs and consolidate whatever the counts say' },
          grace: {
            type: 'string',
            value: 'DURATION',
            default: '1h',
            describe: 'keep unreachable objects this long (0: drop them all)',
          },
          data,
        },
        load: async () => (await import('./cli/maintenance.ts')).run,
      },
    ],
  },
  {
    name: 'migrate',
    summary: "apply the PostgreSQL store's pending schema migrations, and nothing else; prints the versions",
    flags: { store: { ...store, required: true } },
    load: async () => (await import('./cli/migrate.ts')).migrate,
  },
  {
    name: 'serve',
    summary: 'run the AGWP v1 server',
    flags: SERVE_FLAGS,
    hints: {
      port: 'ag-server takes --listen HOST:PORT (e.g. --listen 127.0.0.1:7420)',
      host: 'ag-server takes --listen HOST:PORT (e.g. --listen 127.0.0.1:7420)',
    },
    details: 'Beyond loopback, put a TLS reverse proxy in front: docs/security.md, "A shared server over a network".',
    load: async () => (await import('./cli/serve.ts')).serve,
  },
]

export const PROGRAM: Program<CliContext> = {
  name: 'ag-server',
  summary: 'The AGWP v1 reference server and its operator commands.',
  version: typeof AG_MCP_VERSION === 'string' ? AG_MCP_VERSION : '0.0.0-dev',
  commands: COMMANDS,
}

export async function main(
  argv: string[],
  out: CliContext['out'] = (s) => process.stdout.write(`${s}\n`),
): Promise<void> {
  const io = { out, err: (s: string) => void process.stderr.write(`${s}\n`), env: process.env }
  let code: number
  try {
    code = await runCommand(PROGRAM, argv, { out }, io)
  } catch (e) {
    const msg = e instanceof AgwpError ? `${e.code}: ${e.message}` : e instanceof Error ? e.message : String(e)
    process.stderr.write(`ag-server: ${msg}\n`)
    code = 1
  }
  if (code !== 0) process.exit(code)
}
