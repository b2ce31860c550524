import fs from 'node:fs'
import path from 'node:path'
import { CatFile, DiffTree, git, gitText, type CatObject } from './git.ts'
import { isTreeMode, parseTree, type Ident, type TreeItem } from './objects.ts'
import { notFound, invalid } from './errors.ts'
import { checkRef } from './paths.ts'
import { isAncestor as walkIsAncestor, parseCommit, type CommitInfo } from './history.ts'
import { Lru } from './lru.ts'
import { once } from './util.ts'
import { casRefFile, deleteRefFile, isPlainRef, listRefs, readRef, usesRefFiles } from './refs.ts'

// Repositories are bare git repositories under <data>/repos/<name>.git. The directory is
// the registry: `ag-server repo add` works whether or not a server is running.
export class Repo {
  readonly cat: CatFile
  // Every cache is bounded (lru.ts), so memory holds at its bounds under any load.
  private mergeCache = new Lru<string, MergeInfo>(1000)
  // Ancestry between two commit ids never changes: "a is an ancestor of d", by "a d".
  private ancestry = new Lru<string, boolean>(10_000)
  // Parsed trees (bounded by entries, not trees: every integration makes new versions of
  // the trees on its paths, and a large directory's versions would otherwise pile up) and
  // commit -> root tree, by object id (immutable, so never stale).
  private trees = new Lru<string, Map<string, TreeItem>>(TREE_CACHE_ENTRIES, (t) => t.size)
  private commitTrees = new Lru<string, string>(10_000)
  private objects = new Lru<string, CatObject>(OBJECT_CACHE_BYTES, (o) => o.size)
  private objectLoads = new Map<string, Promise<CatObject | null>>()
  private treeLoads = new Map<string, Promise<Map<string, TreeItem>>>()
  private sizeCache = new Lru<string, number>(50_000)
  private commitInfos = new Lru<string, CommitInfo>(10_000)
  // Long-lived diff-tree processes by option set and pathspec (least recently used last out).
  private diffTrees = new Map<string, DiffTree>()
  private readonly refFiles: boolean
  constructor(
    readonly name: string,
    readonly gitDir: string,
  ) {
    this.cat = new CatFile(gitDir)
    this.refFiles = usesRefFiles(gitDir)
  }

  async defaultBranch(): Promise<string> {
    const head = fs.readFileSync(path.join(this.gitDir, 'HEAD'), 'utf8').trim()
    const m = /^ref: refs\/heads\/(.+)$/.exec(head)
    return m?.[1] ?? 'main'
  }

  /** Resolve a client ref (branch, tag, full ref or commit id) to a commit id. */
  async resolve(ref: string, field = 'ref'): Promise<string> {
    checkRef(ref, field)
    // The common case, a branch name, is a file read (git's own order: a tag of the same
    // name, or refs/<name>, would win, so those go to git).
    if (this.refFiles && ref !== 'HEAD' && !OID_RE.test(ref) && !ref.startsWith('refs/')) {
      const head = readRef(this.gitDir, `refs/heads/${ref}`)
      if (
        head !== null &&
        readRef(this.gitDir, `refs/tags/${ref}`) === null &&
        readRef(this.gitDir, `refs/${ref}`) === null
      )
        return head
    }
    const o = await this.cat.get(`${ref}^{commit}`)
    if (!o) throw notFound(`${field} '${ref}' does not name a commit`, { field, ref })
    return o.oid
  }

  async branchHead(branch: string): Promise<string | null> {
    if (this.refFiles && isPlainRef(`refs/heads/${branch}`)) return readRef(this.gitDir, `refs/heads/${branch}`)
    const o = await this.cat.get(`refs/heads/${branch}^{commit}`)
    return o ? o.oid : null
  }

  /**
   * A blob (or any object) by id, through a small cache: objects are immutable, so a hit
   * is never stale. Bounded by bytes so memory stays flat under any read pattern.
   */
  async object(oid: string): Promise<CatObject | null> {
    const hit = this.objects.get(oid)
    if (hit) return hit
    // Concurrent misses of one id share one read (and one insertion below).
    return once(this.objectLoads, oid, async () => {
      const o = await this.cat.get(oid)
      if (o && o.size <= OBJECT_CACHE_ITEM) this.objects.set(oid, o)
      return o
    })
  }

  /** A blob or other object already in the cache, without waiting (search scans thousands). */
  cachedObject(oid: string): CatObject | undefined {
    return this.objects.peek(oid)
  }

  /** What the bounded caches hold and what they count (tests: the two always agree). */
  cacheStats(): { objects: number; objectBytes: number; trees: number; treeEntries: number } {
    let objects = 0
    for (const o of this.objects.values()) objects += o.size
    let trees = 0
    for (const t of this.trees.values()) trees += t.size
    return { objects, objectBytes: this.objects.weight, trees, treeEntries: this.trees.weight }
  }

  /** Sizes of blobs by id (a pipelined `info` per id not seen before; cached). */
  async sizes(oids: string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>()
    await Promise.all(
      oids.map(async (oid) => {
        let n = this.sizeCache.get(oid)
        if (n === undefined) {
          const i = await this.cat.info(oid)
          if (!i) return
          n = i.size
          this.sizeCache.set(oid, n)
        }
        out.set(oid, n)
      }),
    )
    return out
  }

  async branches(): Promise<{ name: string; commit: string }[]> {
    // Read from the ref files (refs.ts) unless a name needs git's own reading.
    const listed = this.refFiles ? listRefs(this.gitDir, 'refs/heads/') : undefined
    if (listed) return listed.map((r) => ({ name: r.ref.slice('refs/heads/'.length), commit: r.oid }))
    const out = await gitText(this.gitDir, ['for-each-ref', '--format=%(objectname) %(refname:strip=2)', 'refs/heads/'])
    return out
      .split('\n')
      .filter(Boolean)
      .map((l) => ({ commit: l.slice(0, 40), name: l.slice(41) }))
  }

  /**
   * Compare-and-swap a ref: fails (false) if it no longer has `expected` (null: must not
   * exist). In-process for the files backend (refs.ts: no child process to orphan).
   */
  async casRef(ref: string, next: string, expected: string | null, env: Record<string, string> = {}): Promise<boolean> {
    if (this.refFiles && isPlainRef(ref)) return casRefFile(this.gitDir, ref, next, expected)
    const r = await git(this.gitDir, ['update-ref', ref, next, expected ?? '0'.repeat(40)], { okCodes: [1, 128], env })
    return r.code === 0
  }

  /** Delete a ref if it holds `expected` (in-process unless git must rewrite packed-refs). */
  async deleteRef(ref: string, expected: string): Promise<boolean> {
    if (this.refFiles && isPlainRef(ref)) {
      const r = await deleteRefFile(this.gitDir, ref, expected)
      if (r !== 'packed') return r === 'deleted'
      await git(this.gitDir, ['update-ref', '--no-deref', '-d', ref], { okCodes: [1, 128] })
      return (await this.refValue(ref)) === null
    }
    const r = await git(this.gitDir, ['update-ref', '--no-deref', '-d', ref, expected], { okCodes: [1, 128] })
    return r.code === 0
  }

  /** Current value of a full ref name, or null if it does not exist. */
  async refValue(ref: string): Promise<string | null> {
    if (this.refFiles && isPlainRef(ref)) return readRef(this.gitDir, ref)
    // Other ref stores (reftable): resolved by the cat-file process, as rev-parse would.
    const o = await this.cat.info(`${ref}^{commit}`)
    return o ? o.oid : null
  }

  /** Is `ancestor` reachable from `descendant` (or equal to it)? */
  async isAncestor(ancestor: string, descendant: string): Promise<boolean> {
    if (ancestor === descendant) return true
    const key = `${ancestor} ${descendant}`
    const hit = this.ancestry.get(key)
    if (hit !== undefined) return hit
    // In process (history.ts) unless the walk declines (grafts, replace refs, a missing
    // or malformed commit): then git, whose 128 (not a commit here) is an answer about
    // this moment, not a fact, and is not kept.
    let answer = await walkIsAncestor(this, ancestor, descendant)
    if (answer === undefined) {
      const r = await git(this.gitDir, ['merge-base', '--is-ancestor', ancestor, descendant], { okCodes: [1, 128] })
      if (r.code === 128) return false
      answer = r.code === 0
    }
    this.ancestry.set(key, answer)
    return answer
  }

  /**
   * Is `commit` reachable from some branch (refs/heads/*)? What a branch contains was
   * integrated (reviewed) or put there by the operator; anything else is unreviewed work.
   */
  async onSomeBranch(commit: string): Promise<boolean> {
    // Not a commit here: on no branch (as for-each-ref --contains refuses it).
    if ((await this.cat.info(commit))?.type !== 'commit') return false
    for (const b of await this.branches()) if (await this.isAncestor(commit, b.commit)) return true
    return false
  }

  /** A commit's parsed fields (cached: objects never change); undefined if not a plain commit. */
  async commitInfo(oid: string): Promise<CommitInfo | undefined> {
    const hit = this.commitInfos.get(oid)
    if (hit) return hit
    const o = await this.cat.get(oid)
    if (!o || o.type !== 'commit') return undefined
    const info = parseCommit(o.oid, o.data)
    if (!info) return undefined
    this.commitInfos.set(oid, info)
    return info
  }

  /** Root tree id of a commit. */
  async commitTree(commit: string): Promise<string> {
    const hit = this.commitTrees.get(commit)
    if (hit) return hit
    const o = await this.cat.get(commit)
    if (!o || o.type !== 'commit') throw new Error(`not a commit: ${commit}`)
    // The id read alone from the bytes: a regex group would be a slice keeping the header.
    const tree = o.data.toString('latin1', 5, 45)
    if (o.data.toString('latin1', 0, 5) !== 'tree ' || o.data[45] !== 0x0a || !OID_RE.test(tree))
      throw new Error(`malformed commit ${commit}`)
    this.commitTrees.set(commit, tree)
    return tree
  }

  /** Entries of a tree object by name (parsed once, then cached). */
  async treeItems(oid: string): Promise<Map<string, TreeItem>> {
    const hit = this.trees.get(oid)
    if (hit) return hit
    // One load per id however many ask at once: counting a tree again on every concurrent
    // miss once made the count drift above what the cache held, until it held almost
    // nothing (the soak's search slowed 2-4x over five minutes, re-reading every tree).
    return once(this.treeLoads, oid, async () => {
      const o = await this.cat.get(oid)
      if (!o || o.type !== 'tree') throw new Error(`not a tree: ${oid}`)
      const items = new Map(parseTree(o.data).map((it) => [it.name, it]))
      this.trees.set(oid, items)
      return items
    })
  }

  /** The tree entry at a path of a commit ('' is not a path), or null. */
  async entryAt(commit: string, p: string): Promise<TreeItem | null> {
    let tree = await this.commitTree(commit)
    const segs = p.split('/')
    for (let i = 0; i < segs.length; i++) {
      const it = (await this.treeItems(tree)).get(segs[i] as string)
      if (!it) return null
      if (i === segs.length - 1) return it
      if (!isTreeMode(it.mode)) return null
      tree = it.oid
    }
    return null
  }

  cachedMerge(key: string): MergeInfo | undefined {
    return this.mergeCache.get(key)
  }
  rememberMerge(key: string, v: MergeInfo): void {
    this.mergeCache.set(key, v)
  }

  /**
   * The diff-tree process for these options and pathspecs (git.ts DiffTree). A few are
   * kept per repository: the unnarrowed ones serve every diff, commit and workspace view;
   * a narrowed one serves repeated diffs of the same paths.
   */
  diffTree(args: string[], paths: string[]): DiffTree {
    const key = [...args, '--', ...paths].join('\0')
    let d = this.diffTrees.get(key)
    if (d) this.diffTrees.delete(key)
    else d = new DiffTree(this.gitDir, paths.length ? [...args, '--', ...paths] : args)
    this.diffTrees.set(key, d)
    for (const [k, v] of this.diffTrees) {
      if (this.diffTrees.size <= DIFF_PROCESSES) break
      this.diffTrees.delete(k)
      v.close()
    }
    return d
  }

  /**
   * Who a commit made for a token is by: `<git dir>/agwp-identities/<token id>.json`
   * ({"author": {name, email}, "committer": {name, email}}), written by whoever minted the token
   * (ag-mcp --local writes the person's and its agents'); otherwise, or when the file is not that
   * shape, `fallback` for both. Read at each commit: small, and never stale.
   */
  identityFor(tokenId: string, fallback: Ident): { author: Ident; committer: Ident } {
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(tokenId)) return { author: fallback, committer: fallback }
    let v: unknown
    try {
      v = JSON.parse(fs.readFileSync(path.join(this.gitDir, IDENTITIES, `${tokenId}.json`), 'utf8'))
    } catch {
      return { author: fallback, committer: fallback }
    }
    const ident = (x: unknown): Ident | undefined => {
      const i = x as Partial<Ident> | null | undefined
      return typeof i?.name === 'string' && typeof i.email === 'string' && i.name.trim() !== ''
        ? { name: i.name, email: i.email }
        : undefined
    }
    const o = v as { author?: unknown; committer?: unknown } | null
    return { author: ident(o?.author) ?? fallback, committer: ident(o?.committer) ?? ident(o?.author) ?? fallback }
  }

  close(): void {
    this.cat.close()
    for (const d of this.diffTrees.values()) d.close()
    this.diffTrees.clear()
  }
}

const OID_RE = /^[0-9a-f]{40}$/
/** The folder of a repository's git directory that holds per-token commit identities. */
export const IDENTITIES = 'agwp-identities'

const OBJECT_CACHE_BYTES = 8 * 1024 * 1024
const TREE_CACHE_ENTRIES = 20_000
const OBJECT_CACHE_ITEM = 256 * 1024
const DIFF_PROCESSES = 6

export type Mergeability = 'fast_forward' | 'clean' | 'conflicts' | 'up_to_date' | 'target_missing' | 'not_open'

/** How a head merges into a target head, and their merge base (null: no common history). */
export interface MergeInfo {
  mergeability: Mergeability
  conflicts: string[]
  merge_base: string | null
}

export class RepoRegistry {
  private open = new Map<string, Repo>()
  constructor(readonly reposDir: string) {}

  dirOf(name: string): string {
    return path.join(this.reposDir, `${name}.git`)
  }

  names(): string[] {
    let entries: string[] = []
    try {
      entries = fs.readdirSync(this.reposDir)
    } catch {
      return []
    }
    return entries
      .filter((e) => e.endsWith('.git'))
      .map((e) => e.slice(0, -4))
      .sort()
  }

  get(name: string): Repo {
    const cached = this.open.get(name)
    if (cached) return cached
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/.test(name)) throw invalid('invalid repository name', { field: 'repo' })
    const dir = this.dirOf(name)
    if (!fs.existsSync(path.join(dir, 'HEAD'))) throw notFound(`repository '${name}' not found`, { repo: name })
    const repo = new Repo(name, dir)
    this.open.set(name, repo)
    return repo
  }

  exists(name: string): boolean {
    return fs.existsSync(path.join(this.dirOf(name), 'HEAD'))
  }

  closeAll(): void {
    for (const r of this.open.values()) r.close()
    this.open.clear()
  }
}
