// `ag-mcp agit …`: the thought log for people. Concise text by default, `--json` for scripts.
//   init [--write] [--no-hooks]   hooks install|uninstall|status   sync [--hook <name>] [--quiet]
// `init` without --write is a dry run: it says what it would do and writes nothing (not even a hook).
//   record <message> [--ai] [--intent] [-f file] [-l line]   status   log [-n N]   show [git-hash] [-t]
//   search <query> [-l N]
import { existsSync } from 'node:fs'
import { appendFile, readFile, writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { UsageError, parseFlags, stringValue } from '../../lib/cli/flags.ts'
import { AGIT_COMMANDS, AGIT_FLAGS } from './cli-words.ts'
import type { AgitCommand } from './cli-words.ts'
import type { Entry } from './entry.ts'
import { topLevel } from './git.ts'
import { hookStatus, installHooks, uninstallHooks } from './hooks.ts'
import { missingExcludes } from '../../lib/git-exclude.ts'
import { checkLocation } from './locations.ts'
import { decodeBlob } from './objects.ts'
import { AgitRepo } from './repo.ts'
import { ThoughtSearch } from './search.ts'
import { describeSync, syncHook } from './sync.ts'
import { utcDateTime } from './text.ts'

export interface CliIo {
  out(line: string): void
  err(line: string): void
  cwd: string
  /** argv that runs ag-mcp itself (absolute node and script paths), written into hooks. */
  self: readonly string[]
  /**
   * The hosts' project files for this repository, with the entry `ag-mcp install <host> --local`
   * writes (one entry name for both): written with `write`, else what would be. The binary
   * provides it; without it, init writes no host file.
   */
  projectConfigs?: (root: string, write: boolean) => Promise<Array<{ path: string; action: string }>>
}

export const USAGE = `usage: ag-mcp agit <command>
  init [--write] [--no-hooks]      .agit/ (in .git/info/exclude), git hooks, hosts' project files and CLAUDE.md
                                   rules where none exist; a dry run that writes nothing without --write
  hooks install|uninstall|status   manage ag-mcp's git hook blocks (AGIT's own blocks are left alone)
  sync [--hook <name>] [--quiet]   what a git hook runs: link thoughts to commits, follow branches
  record <message> [--ai] [--intent] [-f <file>] [-l <line>]
  status | log [-n <count>] | show [<git-hash>] [-t] | search <query> [-l <limit>]
common: --root <dir> (default: the git top level of the working directory), --json`

interface AgitArgs {
  values: {
    root?: string | undefined
    json?: boolean
    write?: boolean
    'no-hooks'?: boolean
    hook?: string | undefined
    quiet?: boolean
    ai?: boolean
    intent?: boolean
    file?: string | undefined
    line?: string | undefined
    count?: string | undefined
    trace?: boolean
    help?: boolean
  }
  positionals: string[]
}

function parseAgitArgs(words: readonly string[]): AgitArgs {
  const { values: v, positionals, rest, help } = parseFlags(words, AGIT_FLAGS, { help: true })
  const on = (name: string) => v[name] === true
  return {
    values: {
      root: stringValue(v, 'root'),
      json: on('json'),
      write: on('write'),
      'no-hooks': on('no-hooks'),
      hook: stringValue(v, 'hook'),
      quiet: on('quiet'),
      ai: on('ai'),
      intent: on('intent'),
      file: stringValue(v, 'file'),
      line: stringValue(v, 'line'),
      count: stringValue(v, 'count'),
      trace: on('trace'),
      help,
    },
    positionals: [...positionals, ...rest],
  }
}

/** What every command gets: the repository, its words, and where to print. */
interface Run {
  root: string
  repo: AgitRepo
  values: AgitArgs['values']
  /** The words after the command's name. */
  words: string[]
  io: CliIo
  json(v: unknown): void
}

/** Each command's code by name. lib/cli refused any other name, with the nearest, before this loaded. */
const RUNS: Record<AgitCommand, (r: Run) => Promise<number>> = {
  init: runInit,
  hooks: runHooks,
  sync: runSync,
  record: runRecord,
  status: runStatus,
  log: runLog,
  show: runShow,
  search: runSearch,
}

const isCommand = (word: string): word is AgitCommand => (AGIT_COMMANDS as readonly string[]).includes(word)

export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    const { values, positionals } = parseAgitArgs(argv)
    const [cmd, ...words] = positionals
    if (!cmd || cmd === 'help' || values.help) {
      io.out(USAGE)
      return cmd ? 0 : 2
    }
    if (!isCommand(cmd)) throw new UsageError(`unknown command '${cmd}'; ag-mcp agit --help lists them`)
    const root = values.root ? resolve(io.cwd, values.root) : await topLevel(io.cwd)
    if (!root || !(await topLevel(root))) {
      if (cmd === 'sync') return 0 // a hook outside a repository: nothing to do, never fail git
      io.err("Not a git repository. Run 'git init' first.")
      return 1
    }
    const json = (v: unknown) => io.out(JSON.stringify(v, null, 2))
    return await RUNS[cmd]({ root, repo: new AgitRepo(root), values, words, io, json })
  } catch (e) {
    if (e instanceof UsageError) {
      io.err(`ag-mcp agit: ${e.message}`)
      return 2
    }
    io.err(`ag-mcp agit: ${(e as Error).message}`)
    return 1
  }
}

function needInit(repo: AgitRepo): void {
  if (!repo.initialized) throw new UsageError("AGIT not initialized. Run 'ag-mcp agit init --write' first.")
}

async function runInit({ root, repo, values, io, json }: Run): Promise<number> {
  const write = values.write === true
  const fresh = !repo.initialized
  if (write) await repo.init()
  const excluded = write ? ((await repo.excludeFromGit()) ? ['.agit/'] : []) : await missingExcludes(root, ['.agit/'])
  const hooks = values['no-hooks']
    ? []
    : write
      ? await installHooks(root, io.self)
      : (await hookStatus(root)).map((h) => ({ hook: h.hook, action: h.ours ? 'would refresh' : 'would install' }))
  const files = [...((await io.projectConfigs?.(root, write)) ?? []), ...(await rulesFile(root, write))]
  if (values.json) {
    json({ root, created: fresh && write, dryRun: !write, excluded, hooks, files })
    return 0
  }
  io.out(
    fresh
      ? `${write ? 'Initialized' : 'Would initialize'} .agit/ in ${root}`
      : `.agit/ already exists in ${root}; kept`,
  )
  for (const e of excluded) io.out(`.git/info/exclude: ${write ? 'added' : 'would add'} ${e}`)
  for (const h of hooks) io.out(`hook ${h.hook}: ${h.action}`)
  for (const f of files) io.out(`${f.path}: ${f.action}`)
  if (!write) io.out('(dry run: nothing was written; pass --write to do all of the above)')
  return 0
}

async function runHooks({ root, values, words, io, json }: Run): Promise<number> {
  const sub = words[0]
  const r =
    sub === 'install'
      ? await installHooks(root, io.self)
      : sub === 'uninstall'
        ? await uninstallHooks(root)
        : sub === 'status'
          ? await hookStatus(root)
          : undefined
  if (!r) throw new UsageError('hooks needs install, uninstall or status')
  if (values.json) json(r)
  else
    for (const h of r)
      io.out(
        'action' in h
          ? `${h.hook}: ${h.action}`
          : `${h.hook}: ag-mcp ${h.ours ? 'yes' : 'no'}, AGIT ${h.agit ? 'yes' : 'no'}`,
      )
  return 0
}

async function runSync({ repo, values, io, json }: Run): Promise<number> {
  const report = await syncHook(repo, values.hook)
  if (values.json) json(report)
  else if (!values.quiet) for (const l of describeSync(report)) io.out(l)
  return 0
}

async function runRecord({ root, repo, values, words, io, json }: Run): Promise<number> {
  needInit(repo)
  const message = words.join(' ')
  if (!message) throw new UsageError('record needs a message')
  const entry: Entry = {
    role: values.ai ? 'ai' : 'user',
    category: values.intent ? 'intent' : values.ai ? 'reasoning' : 'note',
    content: message,
    timestamp: Math.floor(Date.now() / 1000),
  }
  if (values.file !== undefined) {
    const c = await checkLocation(root, values.file)
    if (!c.ok) throw new UsageError(c.error)
    const line = values.line !== undefined ? Number(values.line) : undefined
    if (line !== undefined && !(Number.isInteger(line) && line > 0))
      throw new UsageError('--line must be a positive integer')
    entry.locations = [{ file: values.file, ...(line !== undefined ? { start_line: line } : {}) }]
  }
  await repo.ensureSync().catch(() => {})
  await repo.append([entry])
  if (values.json) json(entry)
  else io.out(`Recorded ${entry.role} ${entry.category} to staging area`)
  return 0
}

async function runStatus({ repo, values, io, json }: Run): Promise<number> {
  needInit(repo)
  await repo.ensureSync().catch(() => {})
  await repo.snapBack().catch(() => {})
  const staged = await repo.readStaged()
  const index = await repo.readIndex()
  const branch = (await repo.head()) ?? 'main'
  const malformed = [...(staged?.malformed ?? []), ...index.malformed]
  if (values.json) {
    json({
      branch,
      staged: staged?.entries.length ?? 0,
      pending: index.entries.length,
      malformed,
      entries: index.entries,
    })
    return 0
  }
  io.out(`On branch ${branch}`)
  if (staged) io.out(`Staged context: ${staged.entries.length} thought(s) ready for commit`)
  io.out(index.entries.length > 0 ? `Pending thoughts: ${index.entries.length}` : 'No pending thoughts.')
  for (const m of index.malformed) io.out(`warning: .agit/index line ${m.line} is malformed (skipped): ${m.reason}`)
  return 0
}

async function runLog({ repo, values, io, json }: Run): Promise<number> {
  needInit(repo)
  await repo.snapBack().catch(() => {})
  const n = values.count !== undefined ? Number(values.count) : 10
  if (!(Number.isInteger(n) && n > 0)) throw new UsageError('-n must be a positive integer')
  const commits = await repo.history(undefined, n)
  const branch = (await repo.head()) ?? 'main'
  if (values.json) json(commits.map((c) => ({ neural: c.id, ...c.commit })))
  else if (commits.length === 0) io.out(`No neural commits yet on branch '${branch}'.`)
  else
    io.out(
      commits
        .map(
          (c) =>
            `commit ${c.id.slice(0, 7)} (git: ${c.commit.git_hash})\nAuthor: ${c.commit.author}\nDate:   ${utcDateTime(c.commit.created_at)}\n\n    ${c.commit.summary}`,
        )
        .join('\n\n'),
    )
  return 0
}

async function runShow({ repo, values, words, io, json }: Run): Promise<number> {
  needInit(repo)
  const want = words[0]
  const commits = await repo.history(undefined, 10_000)
  const c = want ? commits.find((x) => x.commit.git_hash.startsWith(want) || x.id.startsWith(want)) : commits[0]
  if (!c) throw new UsageError(want ? `No neural commit for '${want}'` : 'No neural commits yet.')
  const raw = values.trace ? await repo.readObject(c.commit.trace_hash) : null
  const trace = raw ? decodeBlob(raw).content : undefined
  if (values.json) {
    json({ neural: c.id, ...c.commit, ...(trace !== undefined ? { trace } : {}) })
    return 0
  }
  io.out(`Neural Commit: ${c.id}\nGit Commit:    ${c.commit.git_hash}\nAuthor:        ${c.commit.author}`)
  io.out(`Date:          ${utcDateTime(c.commit.created_at)}\nSummary:       ${c.commit.summary}`)
  if (trace !== undefined) io.out(`\nTrace:\n${trace}`)
  return 0
}

async function runSearch({ repo, values, words, io, json }: Run): Promise<number> {
  needInit(repo)
  const q = words.join(' ')
  if (!q) throw new UsageError('search needs a query')
  const limit = values.line !== undefined ? Number(values.line) : 5
  if (!(Number.isInteger(limit) && limit > 0)) throw new UsageError('-l must be a positive integer')
  const hits = await new ThoughtSearch(repo).search(q, Math.min(limit, 50))
  if (values.json) json(hits)
  else if (hits.length === 0) io.out('No relevant context found.')
  else
    for (const h of hits)
      io.out(`[${h.category}] (score: ${h.score.toFixed(2)})${h.pending ? ' (pending)' : ''} ${h.content}`)
  return 0
}

const RULES = `# SYSTEM POLICY: AGIT MEMORY

<system_protocol>
  <rule id="BATCH_LOGGING">At the end of a task, call agit_log_step once with a \`batch\` of entries (the user's intent, your reasoning) and \`locations\` for the files you changed.</rule>
  <rule id="RETRIEVAL_VERIFICATION">When asked why something is the way it is, call agit_get_relevant_context first.</rule>
  <rule id="CONTEXT_INJECTION">Before writing to a non-empty file, call agit_get_file_history(filepath=...) and respect earlier decisions.</rule>
</system_protocol>
`

type RulesAction = 'created' | 'would create' | 'rules added' | 'would add rules' | 'rules already there'

/**
 * The editor rules (CLAUDE.md), only with --write: created when absent; in a CLAUDE.md the user
 * already has, appended after a blank line, once (a file holding AGIT's policy heading already
 * has them); the user's text is never rewritten.
 */
async function rulesFile(root: string, write: boolean): Promise<Array<{ path: string; action: RulesAction }>> {
  const path = 'CLAUDE.md'
  const abs = join(root, path)
  if (existsSync(abs)) return [{ path, action: await addRules(abs, write) }]
  if (!write) return [{ path, action: 'would create' }]
  // 'wx': created only if still absent at the moment of writing (never replaces a user's file).
  await writeFile(abs, RULES, { flag: 'wx' })
  return [{ path, action: 'created' }]
}

async function addRules(abs: string, write: boolean): Promise<RulesAction> {
  const text = await readFile(abs, 'utf8')
  if (text.includes('# SYSTEM POLICY: AGIT MEMORY')) return 'rules already there'
  if (!write) return 'would add rules'
  await appendFile(abs, `${text === '' ? '' : text.endsWith('\n') ? '\n' : '\n\n'}${RULES}`)
  return 'rules added'
}
