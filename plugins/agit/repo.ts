// One repository's `.agit/` (AGIT's V2 layout): HEAD, index, staged-index, config.json, tmp/,
// stash/<branch>/index, plus neural commits and refs in git. Every mutation of a file holds the
// cross-process lock; rewritten files are replaced atomically.
import { existsSync } from 'node:fs'
import { mkdir, readFile, rm, stat } from 'node:fs/promises'
import { isAbsolute, join } from 'node:path'
import type { Entry } from './entry.ts'
import { parseIndex, serializeEntry } from './entry.ts'
import type { ParsedIndex } from './entry.ts'
import { appendLines, readText, withLock, writeAtomic } from './files.ts'
import { git, gitOut } from './git.ts'
import { addExcludes } from '../../lib/git-exclude.ts'
import type { NeuralCommit, WalkedCommit } from './objects.ts'
import {
  ObjectReader,
  REF_PREFIX,
  ROADMAP_PLACEHOLDER,
  encodeBlob,
  encodeNeuralCommit,
  getRef,
  listRefs,
  saveObject,
  setRef,
  walk,
} from './objects.ts'
import { formatTrace, synthesizeSummary } from './text.ts'

/** AGIT's text, naming the command that works here (and the tool that starts the log by itself). */
export const NOT_INITIALIZED =
  "AGIT not initialized. Run 'ag-mcp agit init --write' first, or log a first step with agit_log_step, which starts it."

export interface LinkResult {
  neural: string
  gitHash: string
  count: number
  summary: string
}

export class AgitRepo {
  readonly dir: string
  private gitDirCache: string | undefined

  constructor(readonly root: string) {
    this.dir = join(root, '.agit')
  }

  get initialized(): boolean {
    return existsSync(this.dir)
  }

  path(...parts: string[]): string {
    return join(this.dir, ...parts)
  }

  /** Creates the V2 layout; existing files are kept (AGIT writes HEAD only if absent). */
  async init(): Promise<void> {
    await mkdir(this.path('tmp'), { recursive: true })
    await withLock(this.dir, async () => {
      if (!existsSync(this.path('HEAD'))) await writeAtomic(this.path('HEAD'), (await this.gitBranch()) ?? 'main')
      if (!existsSync(this.path('index'))) await writeAtomic(this.path('index'), '')
      if (!existsSync(this.path('config.json')))
        await writeAtomic(this.path('config.json'), `${JSON.stringify({ storage_version: 2 }, null, 2)}\n`)
    })
  }

  /** .agit/ stays out of `git status` through .git/info/exclude: no file of the user's is touched. */
  /** `.agit/` in .git/info/exclude (no tracked file changes); true when it was added now. */
  async excludeFromGit(): Promise<boolean> {
    return (await addExcludes(this.root, ['.agit/'], 'agit thought log')).length > 0
  }

  async storageVersion(): Promise<number> {
    try {
      const c = JSON.parse(await readFile(this.path('config.json'), 'utf8')) as { storage_version?: unknown }
      return typeof c.storage_version === 'number' ? c.storage_version : 2
    } catch {
      return 2 // AGIT: nothing found means V2
    }
  }

  // ---- HEAD and the git side ----

  async head(): Promise<string | undefined> {
    const h = (await readText(this.path('HEAD'))).trim()
    return h === '' ? undefined : h
  }

  async gitDir(): Promise<string> {
    if (!this.gitDirCache) {
      const d = await gitOut(this.root, ['rev-parse', '--git-dir'])
      this.gitDirCache = isAbsolute(d) ? d : join(this.root, d)
    }
    return this.gitDirCache
  }

  /** git's current branch (detached: the 7-character commit id), read from HEAD without spawning git. */
  async gitBranch(): Promise<string | undefined> {
    const dir = await this.gitDir().catch(() => undefined)
    if (!dir) return undefined
    const h = (await readText(join(dir, 'HEAD'))).trim()
    if (h.startsWith('ref: refs/heads/')) return h.slice('ref: refs/heads/'.length)
    if (/^[0-9a-f]{40}$/.test(h)) return h.slice(0, 7)
    return undefined
  }

  async gitHeadCommit(): Promise<string | undefined> {
    const r = await git(this.root, ['rev-parse', '--verify', '--quiet', 'HEAD^{commit}'], { okCodes: [1, 128] })
    return r.code === 0 ? r.stdout.trim() : undefined
  }

  /** user.email as AGIT reads it; else the email git itself would commit with (GIT_AUTHOR_EMAIL, …). */
  async author(): Promise<string> {
    const r = await git(this.root, ['config', 'user.email'], { okCodes: [1] })
    if (r.stdout.trim()) return r.stdout.trim()
    const ident = await git(this.root, ['var', 'GIT_AUTHOR_IDENT'], { okCodes: [128] }).catch(() => undefined)
    return /<([^>]*)>/.exec(ident?.stdout ?? '')?.[1] || 'unknown'
  }

  // ---- the index ----

  async readIndex(): Promise<ParsedIndex> {
    return parseIndex(await readText(this.path('index')))
  }

  async readStaged(): Promise<ParsedIndex | undefined> {
    if (!existsSync(this.path('staged-index'))) return undefined
    return parseIndex(await readText(this.path('staged-index')))
  }

  /** What a commit would take: the staged index if there is one, else the index (AGIT's rule). */
  async pending(): Promise<{ entries: Entry[]; from: 'staged-index' | 'index'; malformed: ParsedIndex['malformed'] }> {
    const staged = await this.readStaged()
    if (staged) return { entries: staged.entries, from: 'staged-index', malformed: staged.malformed }
    const idx = await this.readIndex()
    return { entries: idx.entries, from: 'index', malformed: idx.malformed }
  }

  /** Appends entries as whole lines under the lock (several processes may log at once). */
  async append(entries: readonly Entry[]): Promise<void> {
    if (entries.length === 0) return
    await withLock(this.dir, () => appendLines(this.path('index'), entries.map(serializeEntry)))
  }

  /** Index file identity for caches: changes whenever its content may have changed. */
  async indexStamp(): Promise<string> {
    const parts: string[] = []
    for (const f of ['index', 'staged-index']) {
      const s = await stat(this.path(f)).catch(() => undefined)
      parts.push(s ? `${s.size}:${s.mtimeMs}:${s.ino}` : '-')
    }
    return parts.join('|')
  }

  // ---- branch sync (AGIT's ensure_sync, with V2 refs for the fork) ----

  /**
   * Follows git's branch: on a switch, the pending index is stashed under the old branch, the new
   * branch's stash restored (else the index starts empty), and a new branch forks the old pointer.
   */
  async ensureSync(): Promise<{ switched?: { from: string; to: string } }> {
    const branch = await this.gitBranch()
    if (!branch) return {}
    const current = await this.head()
    if (current === branch) return {}
    return withLock(this.dir, async () => {
      const now = await this.head()
      if (now === branch) return {}
      if (now === undefined) {
        await writeAtomic(this.path('HEAD'), branch)
        return {}
      }
      const index = await readText(this.path('index'))
      if (index.trim() !== '') await writeAtomic(this.path('stash', ...stashPath(now)), index)
      if ((await getRef(this.root, branch)) === undefined) {
        const old = await getRef(this.root, now)
        if (old) await setRef(this.root, branch, old, null)
      }
      await writeAtomic(this.path('HEAD'), branch)
      const stashFile = this.path('stash', ...stashPath(branch))
      if (existsSync(stashFile)) {
        await writeAtomic(this.path('index'), await readFile(stashFile))
        await rm(stashFile, { force: true })
      } else await writeAtomic(this.path('index'), '')
      return { switched: { from: now, to: branch } }
    })
  }

  /**
   * After reset --hard, amend or rebase the branch pointer may name a commit that is no longer in
   * git history: move it back to the newest neural commit whose git commit is HEAD or an ancestor.
   * A neural commit whose git commit is not in this clone at all (a proposal on a server) is kept.
   * Orphans are never deleted.
   */
  async snapBack(): Promise<{ from: string; to: string | undefined } | undefined> {
    const branch = await this.head()
    if (!branch) return undefined
    const headCommit = await this.gitHeadCommit()
    if (!headCommit) return undefined
    return withLock(this.dir, async () => {
      const tip = await getRef(this.root, branch)
      if (!tip) return undefined
      const reader = new ObjectReader(this.root)
      try {
        for (const c of await walk(reader, tip, 10_000)) {
          if (await this.inHistory(c.commit.git_hash, headCommit)) {
            if (c.id === tip) return undefined
            await setRef(this.root, branch, c.id, tip)
            return { from: tip, to: c.id }
          }
        }
        // None of the branch's neural commits is in history any more (the only commit was
        // amended): the branch starts afresh; the objects stay in git's database.
        await git(this.root, ['update-ref', '-d', `${REF_PREFIX}${branch}`, tip])
        return { from: tip, to: undefined }
      } finally {
        reader.close()
      }
    })
  }

  private async inHistory(gitHash: string, headCommit: string): Promise<boolean> {
    if (headCommit.startsWith(gitHash)) return true
    const exists = await git(this.root, ['cat-file', '-e', `${gitHash}^{commit}`], { okCodes: [1, 128] })
    if (exists.code !== 0) return true // not in this clone: not judged (see above)
    const r = await git(this.root, ['merge-base', '--is-ancestor', gitHash, headCommit], { okCodes: [1, 128] })
    return r.code === 0
  }

  // ---- neural commits ----

  /** Every branch's first-parent history, newest first per branch. */
  async history(branch?: string, max = 500): Promise<WalkedCommit[]> {
    const b = branch ?? (await this.head()) ?? 'main'
    const reader = new ObjectReader(this.root)
    try {
      return await walk(reader, await getRef(this.root, b), max)
    } finally {
      reader.close()
    }
  }

  /** The neural commit that links `gitHash` (prefix match either way, AGIT's rule) on any branch. */
  async findLinked(gitHash: string): Promise<string | undefined> {
    const reader = new ObjectReader(this.root)
    try {
      for (const tip of (await listRefs(this.root)).values()) {
        for (const c of await walk(reader, tip, 10_000)) {
          if (c.commit.git_hash.startsWith(gitHash) || gitHash.startsWith(c.commit.git_hash)) return c.id
        }
      }
      return undefined
    } finally {
      reader.close()
    }
  }

  async readObject(hash: string): Promise<string | null> {
    const reader = new ObjectReader(this.root)
    try {
      return await reader.read(hash)
    } finally {
      reader.close()
    }
  }

  /**
   * Turns the pending thoughts into a neural commit linked to `gitHash` and clears what it took,
   * all under the lock: an append waits, so no thought is lost or linked twice. Skips (returns
   * undefined) when nothing is pending or when a neural commit already links that git commit
   * (AGIT's own hook may have run first).
   */
  async linkPending(gitHash: string, o: { only?: (e: Entry) => boolean } = {}): Promise<LinkResult | undefined> {
    if (!/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(gitHash)) throw new Error(`not a full git commit id: ${gitHash}`)
    return withLock(this.dir, async () => {
      const p = await this.pending()
      const taken = o.only ? p.entries.filter(o.only) : p.entries
      if (taken.length === 0) return undefined
      if (await this.findLinked(gitHash)) return undefined
      const branch = (await this.head()) ?? 'main'
      const now = Math.floor(Date.now() / 1000)
      const trace = await saveObject(this.root, encodeBlob('trace', formatTrace(taken), now))
      const roadmap = await saveObject(this.root, encodeBlob('roadmap', ROADMAP_PLACEHOLDER, now))
      const parent = await getRef(this.root, branch)
      const summary = synthesizeSummary(taken)
      const commit: NeuralCommit = {
        git_hash: gitHash,
        ...(parent ? { parent_hash: parent } : {}),
        author: await this.author(),
        roadmap_hash: roadmap,
        trace_hash: trace,
        summary,
        created_at: now,
      }
      const neural = await saveObject(this.root, encodeNeuralCommit(commit, now))
      await setRef(this.root, branch, neural, parent ?? null)
      // Clear what was taken. Lines we could not parse stay (they are the user's to repair).
      const file = this.path(p.from)
      const text = await readText(file)
      const kept = text.split('\n').filter((line) => {
        if (line.trim() === '') return false
        const r = parseIndex(line)
        return r.entries.length === 0 || (o.only ? !o.only(r.entries[0] as Entry) : false)
      })
      if (p.from === 'staged-index' && kept.length === 0) await rm(file, { force: true })
      else await writeAtomic(file, kept.length ? `${kept.join('\n')}\n` : '')
      return { neural, gitHash, count: taken.length, summary }
    })
  }
}

/** A branch name as stash path segments (AGIT: stash/<branch>/index; `feature/x` nests). */
function stashPath(branch: string): string[] {
  const parts = branch.split('/').filter((p) => p !== '' && p !== '.' && p !== '..')
  return [...parts, 'index']
}
