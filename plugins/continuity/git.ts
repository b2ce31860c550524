// Git state for one call, gathered once and cached on the probe (Agentpack starts 6-9 git
// processes per task_status/load_context/task_handoff, about 18 ms on a small repository).
//
//   refs()    branch and HEAD read from the .git files (HEAD, loose refs, packed-refs):
//             no process at all; a reftable repository falls back to one `git rev-parse`.
//   status()  ONE `git status --porcelain=v1 --branch`: branch, upstream, ahead/behind and
//             the changed files together.
//   short()   HEAD abbreviated exactly as git does (`rev-parse --short`, what Agentpack
//             stores), memoised per commit for the life of the process.
//   diff(), shortstat(), aheadCommits()  only when a caller needs them (checkpoint; a tracked
//             change in load_context; ahead of upstream).
//
// Every process honours the call's AbortSignal. `gitProcesses()` counts them (bench, tests).
import { execFile } from 'node:child_process'
import { readFile, stat } from 'node:fs/promises'
import { dirname, isAbsolute, join, resolve } from 'node:path'
import { refuse } from './errors.ts'
import { isMissing } from './pack-files.ts'

let spawned = 0
/** How many git processes this module has started (for benches and tests). */
export const gitProcesses = (): number => spawned

const MAX_GIT_OUTPUT = 64 * 1024 * 1024
const shortMemo = new Map<string, string>()

export interface GitRefs {
  available: boolean
  topLevel: string | null
  /** The branch name, `detached`, or null without git. */
  branch: string | null
  /** The full object id of HEAD; null on an unborn branch or without git. */
  oid: string | null
}

export interface GitStatus {
  upstream: string | null
  ahead: number | null
  behind: number | null
  /** `git status --short` lines (`XY path`). */
  lines: string[]
}

interface GitLocation {
  topLevel: string
  gitDir: string
  commonDir: string
}

export class GitProbe {
  private location?: Promise<GitLocation | null>
  private refsP?: Promise<GitRefs>
  private statusP?: Promise<GitStatus>
  private diffP?: Promise<string>

  constructor(
    readonly root: string,
    private readonly signal?: AbortSignal,
  ) {}

  run(args: string[]): Promise<string | undefined> {
    return runGit(this.root, args, this.signal)
  }

  refs(): Promise<GitRefs> {
    this.refsP ??= this.readRefs()
    return this.refsP
  }

  async short(): Promise<string | null> {
    const { oid } = await this.refs()
    if (!oid) return null
    const known = shortMemo.get(oid)
    if (known) return known
    const out = (await this.run(['rev-parse', '--short', oid]))?.trim()
    const s = out && /^[0-9a-f]{4,64}$/.test(out) ? out : oid.slice(0, 7)
    if (shortMemo.size > 1024) shortMemo.clear()
    shortMemo.set(oid, s)
    return s
  }

  status(): Promise<GitStatus> {
    this.statusP ??= this.readStatus()
    return this.statusP
  }

  diff(): Promise<string> {
    this.diffP ??= this.run(['diff', '--']).then((s) => s?.trimEnd() ?? '')
    return this.diffP
  }

  /** `git diff --shortstat --` trimmed: "2 files changed, 1 insertion(+), 2 deletions(-)", or "". */
  async shortstat(): Promise<string> {
    return ((await this.run(['diff', '--shortstat', '--'])) ?? '').trim()
  }

  async aheadCommits(upstream: string, limit = 5): Promise<string[]> {
    const out = await this.run(['log', '--oneline', '--no-decorate', `--max-count=${limit}`, `${upstream}..HEAD`])
    return (out ?? '').split('\n').filter(Boolean)
  }

  /** Paths changed in the work tree, relative to the pack root (finalize advisories). */
  async dirtyFiles(): Promise<string[]> {
    const [{ lines }, loc] = await Promise.all([this.status(), this.where()])
    if (!loc) return []
    const out = new Set<string>()
    for (const line of lines) {
      const raw = line.slice(3)
      const path = unquote(raw.includes(' -> ') ? (raw.split(' -> ')[1] ?? raw) : raw)
      const rel = relativeTo(this.root, resolve(loc.topLevel, path))
      if (rel) out.add(rel)
    }
    return [...out]
  }

  /** `remote.origin.url` from the repository's config file (no process). */
  async originUrl(): Promise<string> {
    const loc = await this.where()
    if (!loc) return ''
    const text = await readFile(join(loc.commonDir, 'config'), 'utf8').catch(() => '')
    let inOrigin = false
    for (const line of text.split(/\r?\n/)) {
      const section = /^\s*\[\s*remote\s+"([^"]*)"\s*\]/.exec(line)
      if (section) inOrigin = section[1] === 'origin'
      else if (/^\s*\[/.test(line)) inOrigin = false
      else if (inOrigin) {
        const kv = /^\s*url\s*=\s*(.*?)\s*$/i.exec(line)
        if (kv) return configValue(kv[1] ?? '')
      }
    }
    return ''
  }

  private where(): Promise<GitLocation | null> {
    this.location ??= locate(this.root)
    return this.location
  }

  private async readRefs(): Promise<GitRefs> {
    const loc = await this.where()
    if (!loc) return { available: false, topLevel: null, branch: null, oid: null }
    const fromFiles = await refsFromFiles(loc).catch(() => undefined)
    if (fromFiles) return { available: true, topLevel: loc.topLevel, ...fromFiles }
    const out = await this.run(['rev-parse', '--symbolic-full-name', 'HEAD', 'HEAD'])
    const [name, oid] = (out ?? '').split('\n')
    return {
      available: true,
      topLevel: loc.topLevel,
      branch: name?.startsWith('refs/heads/') ? name.slice(11) : 'detached',
      oid: oid && /^[0-9a-f]{40,64}$/.test(oid) ? oid : null,
    }
  }

  private async readStatus(): Promise<GitStatus> {
    const empty: GitStatus = { upstream: null, ahead: null, behind: null, lines: [] }
    if (!(await this.where())) return empty
    const out = await this.run(['status', '--porcelain=v1', '--branch'])
    if (out === undefined) return empty
    const [head = '', ...lines] = out.split('\n')
    const m = /^## (?:.+?)\.\.\.(\S+)(?: \[(?:ahead (\d+))?(?:, )?(?:behind (\d+))?\])?$/.exec(head)
    if (!m) return { ...empty, lines: lines.filter(Boolean) }
    return {
      upstream: m[1] ?? null,
      ahead: Number(m[2] ?? 0),
      behind: Number(m[3] ?? 0),
      lines: lines.filter(Boolean),
    }
  }
}

/** True when the recorded (abbreviated) head names the commit `oid`. */
export function sameHead(recorded: string | null, oid: string | null): boolean {
  if (!recorded || !oid) return true
  return oid.startsWith(recorded) || recorded.startsWith(oid)
}

/** `oid` shortened to the length of the recorded head (so a drift line compares like with like). */
export function abbreviate(oid: string | null, like: string | null): string | null {
  if (!oid) return null
  return oid.slice(0, Math.max(7, like?.length ?? 7))
}

function runGit(cwd: string, args: string[], signal: AbortSignal | undefined): Promise<string | undefined> {
  spawned++
  return new Promise((resolveRun, reject) => {
    execFile(
      'git',
      args,
      { cwd, encoding: 'utf8', maxBuffer: MAX_GIT_OUTPUT, windowsHide: true, ...(signal ? { signal } : {}) },
      (err, stdout) => {
        if (signal?.aborted) return reject(refuse('cancelled', 'cancelled while reading git state'))
        resolveRun(err ? undefined : stdout)
      },
    )
  })
}

async function locate(root: string): Promise<GitLocation | null> {
  for (let dir = resolve(root); ; dir = dirname(dir)) {
    const dotGit = join(dir, '.git')
    const s = await stat(dotGit).catch((e: unknown) => (isMissing(e) ? undefined : Promise.reject(e)))
    if (s?.isDirectory()) return { topLevel: dir, gitDir: dotGit, commonDir: await commonDirOf(dotGit) }
    if (s?.isFile()) {
      const m = /^gitdir:\s*(.+?)\s*$/m.exec(await readFile(dotGit, 'utf8'))
      if (m?.[1]) {
        const gitDir = isAbsolute(m[1]) ? m[1] : resolve(dir, m[1])
        return { topLevel: dir, gitDir, commonDir: await commonDirOf(gitDir) }
      }
    }
    if (dirname(dir) === dir) return null
  }
}

async function commonDirOf(gitDir: string): Promise<string> {
  const c = await readFile(join(gitDir, 'commondir'), 'utf8').catch(() => undefined)
  return c ? resolve(gitDir, c.trim()) : gitDir
}

async function refsFromFiles(loc: GitLocation): Promise<{ branch: string; oid: string | null } | undefined> {
  if (
    await stat(join(loc.commonDir, 'reftable')).then(
      () => true,
      () => false,
    )
  )
    return undefined
  const head = (await readFile(join(loc.gitDir, 'HEAD'), 'utf8')).trim()
  if (/^[0-9a-f]{40,64}$/.test(head)) return { branch: 'detached', oid: head }
  const m = /^ref:\s*(\S+)$/.exec(head)
  if (!m?.[1]) return undefined
  const ref = m[1]
  const branch = ref.startsWith('refs/heads/') ? ref.slice(11) : ref
  for (const dir of ref.startsWith('refs/heads/') ? [loc.commonDir] : [loc.gitDir, loc.commonDir]) {
    const loose = await readFile(join(dir, ref), 'utf8').catch(() => undefined)
    if (loose !== undefined) {
      const oid = loose.trim()
      return /^[0-9a-f]{40,64}$/.test(oid) ? { branch, oid } : undefined
    }
  }
  const packed = await readFile(join(loc.commonDir, 'packed-refs'), 'utf8').catch(() => '')
  for (const line of packed.split('\n')) {
    const [oid, name] = line.split(' ')
    if (name === ref && oid && /^[0-9a-f]{40,64}$/.test(oid)) return { branch, oid }
  }
  return { branch, oid: null }
}

function relativeTo(root: string, abs: string): string | undefined {
  const r = resolve(root)
  if (!abs.startsWith(`${r}/`)) return undefined
  return abs.slice(r.length + 1).replace(/\/$/, '')
}

/** A git config value: quotes removed, escapes undone, an unquoted `#`/`;` starts a comment. */
function configValue(raw: string): string {
  let out = ''
  let quoted = false
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i] as string
    if (c === '"') quoted = !quoted
    else if (c === '\\') {
      const n = raw[++i] ?? ''
      out += n === 'n' ? '\n' : n === 't' ? '\t' : n
    } else if (!quoted && (c === '#' || c === ';')) break
    else out += c
  }
  return out.trim()
}

/** git's C-style quoting of unusual paths ("a\tb") undone. */
function unquote(p: string): string {
  if (!p.startsWith('"') || !p.endsWith('"')) return p
  const bytes: number[] = []
  const s = p.slice(1, -1)
  for (let i = 0; i < s.length; i++) {
    const c = s[i] as string
    if (c !== '\\') {
      bytes.push(...Buffer.from(c, 'utf8'))
      continue
    }
    const n = s[++i] ?? ''
    if (/[0-7]/.test(n)) {
      bytes.push(Number.parseInt(s.slice(i, i + 3), 8))
      i += 2
    } else
      bytes.push(
        ({ n: 10, t: 9, r: 13, '"': 34, '\\': 92, a: 7, b: 8, f: 12, v: 11 } as Record<string, number>)[n] ?? 0,
      )
  }
  return Buffer.from(bytes).toString('utf8')
}
