// AGIT's V2 objects: JSON envelopes stored as git blobs, branch pointers in refs/agit/heads/.
// Envelope: {"object_type","schema_version":1,"created_at","data"}; a neural commit's data keeps
// AGIT's field order (serde's declaration order) so AGIT reads what we write byte for byte alike.
import { spawn } from 'node:child_process'
import { git, gitOut } from './git.ts'

export const REF_PREFIX = 'refs/agit/heads/'
export const ROADMAP_PLACEHOLDER = "No roadmap set. Use 'agit roadmap' to set project goals."

export interface NeuralCommit {
  git_hash: string
  parent_hash?: string
  parent_hashes?: string[]
  author: string
  roadmap_hash: string
  trace_hash: string
  summary: string
  created_at: number
}

export interface Envelope<T> {
  object_type: 'neural_commit' | 'blob'
  schema_version: number
  created_at: number
  data: T
}

export interface BlobData {
  content_type: string
  content: string
}

export function firstParent(c: NeuralCommit): string | undefined {
  return c.parent_hashes?.[0] ?? c.parent_hash
}

export function encodeNeuralCommit(c: NeuralCommit, now: number): string {
  const data: Record<string, unknown> = { git_hash: c.git_hash }
  if (c.parent_hash !== undefined) data.parent_hash = c.parent_hash
  if (c.parent_hashes && c.parent_hashes.length > 0) data.parent_hashes = c.parent_hashes
  Object.assign(data, {
    author: c.author,
    roadmap_hash: c.roadmap_hash,
    trace_hash: c.trace_hash,
    summary: c.summary,
    created_at: c.created_at,
  })
  return JSON.stringify({ object_type: 'neural_commit', schema_version: 1, created_at: now, data })
}

export function encodeBlob(contentType: string, content: string, now: number): string {
  return JSON.stringify({
    object_type: 'blob',
    schema_version: 1,
    created_at: now,
    data: { content_type: contentType, content },
  })
}

export function decodeNeuralCommit(json: string): NeuralCommit {
  const env = JSON.parse(json) as Envelope<NeuralCommit>
  if (env.object_type !== 'neural_commit' || typeof env.data?.git_hash !== 'string')
    throw new Error('not a neural commit object')
  return env.data
}

export function decodeBlob(json: string): BlobData {
  const env = JSON.parse(json) as Envelope<BlobData>
  if (env.object_type !== 'blob' || typeof env.data?.content !== 'string') throw new Error('not a blob object')
  return env.data
}

/** Writes bytes into git's object database; returns the 40-hex blob id. */
export async function saveObject(root: string, json: string): Promise<string> {
  return gitOut(root, ['hash-object', '-w', '--stdin'], { input: json })
}

/** Branch → neural commit id, for every refs/agit/heads/* ref. */
export async function listRefs(root: string): Promise<Map<string, string>> {
  const out = await gitOut(root, ['for-each-ref', '--format=%(objectname) %(refname)', REF_PREFIX])
  const refs = new Map<string, string>()
  for (const line of out.split('\n')) {
    const sp = line.indexOf(' ')
    if (sp > 0) refs.set(line.slice(sp + 1 + REF_PREFIX.length), line.slice(0, sp))
  }
  return refs
}

export async function getRef(root: string, branch: string): Promise<string | undefined> {
  const r = await git(root, ['rev-parse', '--verify', '--quiet', `${REF_PREFIX}${branch}`], { okCodes: [1, 128] })
  return r.code === 0 ? r.stdout.trim() : undefined
}

/** Moves a branch pointer; with `expected`, only if it still points there (git's own compare-and-swap). */
export async function setRef(root: string, branch: string, hash: string, expected?: string | null): Promise<void> {
  const args = ['update-ref', '-m', `agit: update ${branch}`, `${REF_PREFIX}${branch}`, hash]
  if (expected !== undefined) args.push(expected ?? '0000000000000000000000000000000000000000')
  await git(root, args)
}

/**
 * Reads objects through one `git cat-file --batch` process: a history walk of hundreds of
 * neural commits costs one spawn, not hundreds.
 */
export class ObjectReader {
  private child: ReturnType<typeof spawn> | undefined
  private buf: Buffer = Buffer.alloc(0)
  private waiting: Array<() => void> = []
  private readonly cache = new Map<string, string | null>()

  constructor(private readonly root: string) {}

  /** The object's text, or null when it does not exist (or is not a blob). */
  async read(hash: string): Promise<string | null> {
    if (!/^[0-9a-f]{40}$/.test(hash)) return null
    const hit = this.cache.get(hash)
    if (hit !== undefined) return hit
    const child = this.start()
    child.stdin?.write(`${hash}\n`)
    const header = await this.line()
    let value: string | null = null
    if (!header.endsWith(' missing')) {
      const [, type, size] = header.split(' ')
      const body = await this.bytes(Number(size) + 1)
      value = type === 'blob' ? body.subarray(0, -1).toString('utf8') : null
    }
    this.cache.set(hash, value)
    return value
  }

  async commit(hash: string): Promise<NeuralCommit | null> {
    const text = await this.read(hash)
    if (text === null) return null
    try {
      return decodeNeuralCommit(text)
    } catch {
      return null
    }
  }

  close(): void {
    this.child?.stdin?.end()
    this.child = undefined
  }

  private start(): ReturnType<typeof spawn> {
    if (this.child) return this.child
    const child = spawn('git', ['cat-file', '--batch'], {
      cwd: this.root,
      shell: false,
      stdio: ['pipe', 'pipe', 'ignore'],
    })
    child.stdout?.on('data', (b: Buffer) => {
      this.buf = this.buf.length === 0 ? b : Buffer.concat([this.buf, b])
      const w = this.waiting
      this.waiting = []
      for (const f of w) f()
    })
    child.on('error', () => {})
    this.child = child
    return child
  }

  private async line(): Promise<string> {
    for (;;) {
      const nl = this.buf.indexOf(0x0a)
      if (nl >= 0) {
        const s = this.buf.subarray(0, nl).toString('utf8')
        this.buf = this.buf.subarray(nl + 1)
        return s
      }
      await this.more()
    }
  }

  private async bytes(n: number): Promise<Buffer> {
    while (this.buf.length < n) await this.more()
    const b = this.buf.subarray(0, n)
    this.buf = this.buf.subarray(n)
    return b
  }

  private more(): Promise<void> {
    const child = this.child
    return new Promise((resolve, reject) => {
      if (!child || child.exitCode !== null) return reject(new Error('git cat-file ended'))
      const onExit = () => reject(new Error('git cat-file ended'))
      child.once('exit', onExit)
      this.waiting.push(() => {
        child.off('exit', onExit)
        resolve()
      })
    })
  }
}

export interface WalkedCommit {
  id: string
  commit: NeuralCommit
}

/** First-parent history from `head`, newest first, at most `max` commits; stops at a cycle or a missing object. */
export async function walk(reader: ObjectReader, head: string | undefined, max = 500): Promise<WalkedCommit[]> {
  const out: WalkedCommit[] = []
  const seen = new Set<string>()
  let id = head
  while (id && !seen.has(id) && out.length < max) {
    seen.add(id)
    const commit = await reader.commit(id)
    if (!commit) break
    out.push({ id, commit })
    id = firstParent(commit)
  }
  return out
}
