// One pack (`<root>/.agentpack/`) as seen by one call: its files, its lock, its redactor and
// the call's git probe. A `Pack` is cheap; make one per call so git state is cached per call.
import { execFile } from 'node:child_process'
import { readdir, stat } from 'node:fs/promises'
import { basename, dirname, join, resolve } from 'node:path'
import { addExcludes } from '../../lib/git-exclude.ts'
import { refuse, throwIfAborted } from './errors.ts'
import { GitProbe } from './git.ts'
import { withPackLock } from './lock.ts'
import {
  appendLines,
  createId,
  ensureDir,
  isMissing,
  PACK_DIR,
  packPath,
  readJson,
  readText,
  SCHEMA_VERSION,
  writeFilePrivate,
  writeJson,
} from './pack-files.ts'
import { createRedactor } from './redact.ts'
import type { Redactor } from './redact.ts'
import type { PackConfig, PackEvent, PackState, SourcesFile } from './types.ts'

export const DEFAULT_REDACTIONS = ['OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'GITHUB_TOKEN', 'NPM_TOKEN']

export interface PackOptions {
  signal?: AbortSignal | undefined
  /** The core's token scrubber, applied after the pack's own redaction. */
  shapes?: ((s: string) => string) | undefined
  env?: NodeJS.ProcessEnv
  /**
   * Directories besides the root that bundles may be read from (inspect, plan, import), real
   * paths: the operator's --continuity-bundle-dir. Nothing is ever written there.
   */
  bundleDirs?: readonly string[] | undefined
}

/** The nearest ancestor of `start` holding `.agentpack/`, else the git top level, else `start`. */
export async function findPackRoot(start: string): Promise<string> {
  const from = resolve(start)
  for (let dir = from; ; dir = dirname(dir)) {
    if (await isDir(join(dir, PACK_DIR))) return dir
    if (dirname(dir) === dir) break
  }
  const refs = await new GitProbe(from).refs()
  return refs.topLevel ?? from
}

export class Pack {
  readonly git: GitProbe
  private redactorP?: Promise<Redactor>
  private configP?: Promise<Partial<PackConfig>>

  constructor(
    readonly root: string,
    readonly o: PackOptions = {},
  ) {
    this.git = new GitProbe(root, o.signal)
  }

  get signal(): AbortSignal | undefined {
    return this.o.signal
  }

  path(...parts: string[]): string {
    return packPath(this.root, ...parts)
  }

  async initialized(): Promise<boolean> {
    return isDir(this.path())
  }

  /** Refuses, naming the fix, when the pack does not exist yet. */
  async requireInitialized(): Promise<void> {
    if (!(await this.initialized()))
      throw refuse(
        'not_initialized',
        `no ${PACK_DIR}/ under ${this.root}: a person runs \`ag-mcp continuity init\` there first`,
      )
  }

  /** Runs `fn` under the pack lock (shared with Agentpack); checks cancellation first. */
  async write<T>(fn: () => Promise<T>): Promise<T> {
    await this.requireInitialized()
    throwIfAborted(this.signal)
    return withPackLock(
      this.root,
      async () => {
        throwIfAborted(this.signal)
        return fn()
      },
      { signal: this.signal },
    )
  }

  config(): Promise<Partial<PackConfig>> {
    this.configP ??= readJson<Partial<PackConfig>>(this.path('config.json'), {}).then((c) => {
      if (!c || typeof c !== 'object' || Array.isArray(c))
        throw refuse('invalid', `${PACK_DIR}/config.json is not a JSON object`)
      return c
    })
    return this.configP
  }

  redactor(): Promise<Redactor> {
    this.redactorP ??= this.config().then((c) =>
      createRedactor({
        config: { redactions: c.redactions },
        shapes: this.o.shapes,
        ...(this.o.env ? { env: this.o.env } : {}),
      }),
    )
    return this.redactorP
  }

  async redact(text: string): Promise<string> {
    return (await this.redactor()).redact(text)
  }

  async state(): Promise<PackState> {
    const s = await readJson<PackState | null>(this.path('state.json'), null)
    if (!s) throw refuse('not_initialized', `${PACK_DIR}/state.json is missing: run \`ag-mcp continuity init\` again`)
    return s
  }

  /** Writes state.json with a fresh updatedAt (caller holds the lock). */
  async writeState(state: PackState): Promise<void> {
    await writeJson(this.path('state.json'), { ...state, updatedAt: new Date().toISOString() })
  }

  async sources(): Promise<SourcesFile> {
    const s = await readJson<SourcesFile>(this.path('sources.json'), { schemaVersion: SCHEMA_VERSION, sources: [] })
    if (!Array.isArray(s.sources)) s.sources = []
    return s
  }

  async writeSources(file: SourcesFile): Promise<void> {
    await writeJson(this.path('sources.json'), file)
  }

  /** The repository ledger; a line that does not parse (a foreign writer's tear) is skipped. */
  async events(): Promise<PackEvent[]> {
    const text = (await readText(this.path('events.jsonl'))) ?? ''
    const out: PackEvent[] = []
    for (const line of text.split('\n')) {
      if (!line) continue
      try {
        const e = JSON.parse(line) as PackEvent
        if (e && typeof e === 'object' && typeof e.type === 'string') out.push(e)
      } catch {
        // Skipped: Agentpack would refuse the whole ledger for one bad line.
      }
    }
    return out
  }

  /** Appends one event to the repository ledger (caller holds the lock). */
  async appendEvent(type: string, payload: Record<string, unknown> = {}): Promise<PackEvent> {
    const event: PackEvent = { id: createId('evt'), ts: new Date().toISOString(), type, ...payload }
    await appendLines(this.path('events.jsonl'), [JSON.stringify(event)])
    return event
  }

  async listCheckpoints(): Promise<string[]> {
    const entries = await readdir(this.path('checkpoints'), { withFileTypes: true }).catch((e: unknown) =>
      isMissing(e) ? [] : Promise.reject(e),
    )
    return entries
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort()
  }
}

/**
 * What Agentpack's init keeps out of git, and its `doctor` looks for: the pack, the client
 * configurations and the agent rule files (Agentpack's AGENTPACK_IGNORE_PATTERNS, in its order).
 */
export const IGNORED = ['.agentpack/', '.codex', '.claude', '.cursor', '.mcp.json', 'AGENTS.md', 'CLAUDE.md'] as const

export interface InitResult {
  dir: string
  /** The entries added to .git/info/exclude now (none: all were there, or `git` is false). */
  excluded: string[]
  /** Whether the root is in a git repository (there is nothing to exclude from otherwise). */
  git: boolean
}

/**
 * Creates `.agentpack/` the way `agentpack init` does; existing files are left as they are. One
 * deliberate difference: what Agentpack appends to the tracked `.gitignore` goes to
 * `.git/info/exclude`, so no tracked file changes (a `.gitignore` edited behind the person's back
 * shows in `git status` and blocks `ag-mcp proposals integrate`). Agentpack's `doctor` reads only
 * `.gitignore`, so it still warns about these entries (docs/continuity.md says so).
 */
export async function initPack(root: string): Promise<InitResult> {
  const dir = packPath(root)
  const now = new Date().toISOString()
  await ensureDir(dir)
  for (const d of ['checkpoints', 'evidence', 'instructions', 'exports', 'cache']) await ensureDir(join(dir, d))
  await writeIfMissing(join(dir, 'config.json'), {
    schemaVersion: SCHEMA_VERSION,
    projectName: basename(resolve(root)),
    redactions: DEFAULT_REDACTIONS,
    defaultBudget: 4000,
    includeGitDiff: true,
  })
  await writeIfMissing(join(dir, 'state.json'), {
    schemaVersion: SCHEMA_VERSION,
    goal: null,
    currentStatus: 'Initialized Agentpack.',
    nextActions: [],
    currentCheckpoint: null,
    createdAt: now,
    updatedAt: now,
  })
  await writeIfMissing(join(dir, 'sources.json'), { schemaVersion: SCHEMA_VERSION, sources: [] })
  if ((await readText(join(dir, 'events.jsonl'))) === undefined) await writeFilePrivate(join(dir, 'events.jsonl'), '')
  const inGit = await git(root, ['rev-parse', '--is-inside-work-tree']).then(
    (o) => o === 'true',
    () => false,
  )
  const excluded = inGit ? await addExcludes(root, IGNORED, 'Agentpack (ag-mcp continuity init)') : []
  return { dir, excluded, git: inGit }
}

function git(cwd: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile('git', args, { cwd, encoding: 'utf8' }, (err, out) => (err ? reject(err) : resolve(out.trim()))),
  )
}

async function writeIfMissing(file: string, value: unknown): Promise<void> {
  if ((await readText(file)) === undefined) await writeJson(file, value)
}

async function isDir(p: string): Promise<boolean> {
  try {
    return (await stat(p)).isDirectory()
  } catch (e) {
    if (isMissing(e) || (e as NodeJS.ErrnoException).code === 'ENOTDIR') return false
    throw e
  }
}
