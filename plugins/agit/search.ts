// Full-text search over pending and committed thoughts: MiniSearch (BM25), persisted under
// .agit/ag-mcp/ and updated incrementally. Nothing is built or loaded until the first search.
// (AGIT's own Tantivy index in .agit/search_index/ covers committed thoughts only; we leave it alone.)
import { existsSync } from 'node:fs'
import { readFile, readdir, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { createHash } from 'node:crypto'
import MiniSearch from 'minisearch'
import { writeAtomic } from './files.ts'
import { ObjectReader, REF_PREFIX, decodeBlob, firstParent, listRefs } from './objects.ts'
import type { AgitRepo } from './repo.ts'
import { parseTrace } from './text.ts'

interface Doc {
  id: string
  content: string
  category: string
  timestamp: number
}

export interface Hit {
  category: string
  score: number
  content: string
  timestamp: number
  pending: boolean
}

interface Meta {
  version: 1
  /** Neural commit ids whose trace is in the index (a walk stops at the first one it finds). */
  commits: string[]
  /** Refs as last seen: when none moved, no git history is read. */
  refs: Record<string, string>
  pendingStamp: string
  pendingIds: string[]
}

const FILE = 'ag-mcp/search.json'
const OPTIONS = { fields: ['content'], storeFields: ['category', 'content', 'timestamp'], idField: 'id' }

export class ThoughtSearch {
  private index: MiniSearch<Doc> | undefined
  private meta: Meta = { version: 1, commits: [], refs: {}, pendingStamp: '', pendingIds: [] }
  private commits = new Set<string>()
  private refsSeen = ''
  private refreshing: Promise<void> = Promise.resolve()

  constructor(private readonly repo: AgitRepo) {}

  get loaded(): boolean {
    return this.index !== undefined
  }

  async search(query: string, limit: number): Promise<Hit[]> {
    await this.refresh()
    const index = this.index as MiniSearch<Doc>
    return index
      .search(query, { combineWith: 'OR' })
      .slice(0, limit)
      .map((r) => ({
        category: r.category as string,
        score: r.score,
        content: r.content as string,
        timestamp: r.timestamp as number,
        pending: String(r.id).startsWith('p:'),
      }))
  }

  /** Loads the persisted index (or starts empty), then adds what changed since. One at a time:
   *  two searches at once must not both add the same thoughts. */
  refresh(): Promise<void> {
    const run = this.refreshing.then(() => this.refreshNow())
    this.refreshing = run.catch(() => {})
    return run
  }

  private async refreshNow(): Promise<void> {
    if (!this.index) await this.load()
    // Persisted only when committed thoughts were added: pending ones change with every log
    // step and are cheap to re-add, while writing a large index costs far more than a search.
    const committed = await this.addCommitted()
    await this.syncPending()
    if (committed) await this.save()
  }

  private async load(): Promise<void> {
    const path = this.repo.path(FILE)
    if (existsSync(path)) {
      try {
        const text = await readFile(path, 'utf8')
        const nl = text.indexOf('\n')
        const meta = JSON.parse(text.slice(0, nl)) as Meta
        if (meta.version === 1) {
          this.index = MiniSearch.loadJSON<Doc>(text.slice(nl + 1), OPTIONS)
          this.meta = meta
          this.commits = new Set(meta.commits)
          return
        }
      } catch {
        // A damaged or foreign file: rebuild from the log (it is only a cache).
      }
    }
    this.index = new MiniSearch<Doc>(OPTIONS)
    this.meta = { version: 1, commits: [], refs: {}, pendingStamp: '', pendingIds: [] }
    this.commits = new Set()
  }

  /** Where branch pointers live: when none of these changed, no ref moved and git is not asked. */
  private async refsStamp(): Promise<string> {
    const gitDir = await this.repo.gitDir()
    const parts: string[] = []
    const visit = async (dir: string): Promise<void> => {
      for (const e of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
        const p = join(dir, e.name)
        if (e.isDirectory()) await visit(p)
        else {
          const s = await stat(p).catch(() => undefined)
          if (s) parts.push(`${p}:${s.ino}:${s.mtimeMs}:${s.size}`)
        }
      }
    }
    await visit(join(gitDir, REF_PREFIX))
    const packed = await stat(join(gitDir, 'packed-refs')).catch(() => undefined)
    parts.push(packed ? `packed:${packed.ino}:${packed.mtimeMs}:${packed.size}` : 'packed:-')
    return parts.join('|')
  }

  private async addCommitted(): Promise<boolean> {
    // A search costs no git process while no branch pointer moved (measured: the spawn was
    // 5 to 15 ms of each search on a loaded 2-CPU machine).
    const stamp = await this.refsStamp()
    if (stamp === this.refsSeen) return false
    this.refsSeen = stamp
    const refs = Object.fromEntries(await listRefs(this.repo.root))
    const moved = Object.entries(refs).filter(([b, id]) => this.meta.refs[b] !== id)
    if (moved.length === 0 && Object.keys(refs).length === Object.keys(this.meta.refs).length) return false
    const reader = new ObjectReader(this.repo.root)
    const docs: Doc[] = []
    try {
      for (const [, tip] of moved) {
        let id: string | undefined = tip
        while (id && !this.commits.has(id)) {
          const c = await reader.commit(id)
          if (!c) break
          this.commits.add(id)
          this.meta.commits.push(id)
          const trace = await reader.read(c.trace_hash)
          if (trace !== null) {
            let i = 0
            for (const e of parseTrace(decodeBlobSafe(trace)))
              docs.push({ id: `c:${id}:${i++}`, content: e.content, category: e.category, timestamp: c.created_at })
          }
          id = firstParent(c)
        }
      }
    } finally {
      reader.close()
    }
    this.index?.addAll(docs)
    this.meta.refs = refs
    return true
  }

  private async syncPending(): Promise<boolean> {
    const stamp = await this.repo.indexStamp()
    if (stamp === this.meta.pendingStamp) return false
    const index = this.index as MiniSearch<Doc>
    const docs = new Map<string, Doc>()
    for (const [file, parsed] of [
      ['staged', await this.repo.readStaged()],
      ['index', await this.repo.readIndex()],
    ] as const) {
      for (const e of parsed?.entries ?? []) {
        const h = createHash('sha1').update(`${e.timestamp}\0${e.role}\0${e.category}\0${e.content}`).digest('hex')
        const id = `p:${file}:${h}`
        if (!docs.has(id)) docs.set(id, { id, content: e.content, category: e.category, timestamp: e.timestamp })
      }
    }
    for (const id of this.meta.pendingIds) if (!docs.has(id) && index.has(id)) index.discard(id)
    index.addAll([...docs.values()].filter((d) => !index.has(d.id)))
    this.meta.pendingIds = [...docs.keys()]
    this.meta.pendingStamp = stamp
    return true
  }

  private async save(): Promise<void> {
    this.meta.commits = [...this.commits]
    await writeAtomic(this.repo.path(FILE), `${JSON.stringify(this.meta)}\n${JSON.stringify(this.index)}`)
  }
}

function decodeBlobSafe(json: string): string {
  try {
    return decodeBlob(json).content
  } catch {
    return ''
  }
}
