// What local mode keeps in a repository, and what other ag-mcp commands put beside it (agit's
// .agit/ and hooks, continuity's .agentpack/, host configs): read, never changed, here.
import { existsSync, lstatSync, readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { hookStatus } from '../../plugins/agit/hooks.ts'
import { excludeFile, isAgExclude } from './repo.ts'
import type { Located } from './repo.ts'
import { listHolders } from './server.ts'
import type { Holder } from './server.ts'
import type { LocalState } from './setup.ts'
import { refsUnder } from './sync.ts'

/** Bytes of the regular files under `dir` (apparent sizes), 0 if it does not exist. */
export function bytesUnder(dir: string): number {
  let n = 0
  let entries: import('node:fs').Dirent[]
  try {
    entries = readdirSync(dir, { withFileTypes: true })
  } catch {
    return 0
  }
  for (const e of entries) {
    const p = join(dir, e.name)
    if (e.isDirectory()) n += bytesUnder(p)
    else if (e.isFile()) n += lstatSync(p).size
  }
  return n
}

export const kib = (n: number): string =>
  n < 1024 ? `${n} B` : n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1024 / 1024).toFixed(1)} MiB`

export interface Footprint {
  /** .ag/ and its bytes (0: absent). */
  agBytes: number
  gitBytes: number
  /** The private server's repositories (one per work tree that ran local mode). */
  repos: string[]
  /** Live holders of the private server, or undefined when it does not run. */
  holders: Holder[] | undefined
  /** Proposal ids the private server has (from refs/ag/<repo>/proposals/ in your repository). */
  proposals: string[]
  /** refs/proposals/<id> of open proposals in your repository. */
  published: string[]
  /** Every ref under refs/ag/. */
  pins: number
  /** info/exclude lines that ag-mcp wrote. */
  excluded: string[]
}

export async function footprint(s: LocalState): Promise<Footprint> {
  let repos: string[] = []
  try {
    repos = readdirSync(join(s.data, 'repos'))
      .filter((f) => f.endsWith('.git'))
      .map((f) => f.slice(0, -4))
  } catch {
    // no state
  }
  const pinned = refsUnder(s, 'refs/ag/')
  const proposals = [...pinned.keys()]
    .map((k) => /^[^/]+\/proposals\/(.+)$/.exec(k)?.[1])
    .filter((x): x is string => x !== undefined)
  const ours = new Set(proposals)
  const published = [...refsUnder(s, 'refs/proposals/').keys()].filter((id) => ours.has(id))
  let excluded: string[] = []
  try {
    excluded = readFileSync(excludeFile(s), 'utf8')
      .split('\n')
      .filter((l) => isAgExclude(l) || ['.agit/', '/.agit/', '.agentpack/', '/.agentpack/'].includes(l.trim()))
  } catch {
    // no exclude file
  }
  return {
    agBytes: bytesUnder(s.dir),
    gitBytes: bytesUnder(s.common) - (s.dir.startsWith(`${s.common}/`) ? bytesUnder(s.dir) : 0),
    repos,
    holders: existsSync(s.data) ? await listHolders(s).catch(() => undefined) : undefined,
    proposals: proposals.sort(byNumber),
    published: published.sort(byNumber),
    pins: pinned.size,
    excluded,
  }
}

const byNumber = (a: string, b: string): number => Number(a.replace(/\D/g, '')) - Number(b.replace(/\D/g, ''))

export interface Neighbour {
  what: string
  path: string
  /** How to remove it (another command's job). */
  undo: string
}

/** What other ag-mcp commands left in this repository (agit, continuity, hosts): reported, not ours to remove. */
export async function neighbours(l: Located): Promise<Neighbour[]> {
  const out: Neighbour[] = []
  for (const top of new Set([l.home, l.top])) {
    if (existsSync(join(top, '.agit')))
      out.push({
        what: `agit's thought log (${kib(bytesUnder(join(top, '.agit')))})`,
        path: join(top, '.agit'),
        undo: `rm -r ${join(top, '.agit')}`,
      })
    if (existsSync(join(top, '.agentpack')))
      out.push({
        what: `continuity's passports and ledger (${kib(bytesUnder(join(top, '.agentpack')))})`,
        path: join(top, '.agentpack'),
        undo: `rm -r ${join(top, '.agentpack')}`,
      })
    for (const f of ['.mcp.json', join('.cursor', 'mcp.json'), join('.vscode', 'mcp.json')]) {
      const p = join(top, f)
      if (existsSync(p) && readFileSync(p, 'utf8').includes('ag-mcp'))
        out.push({ what: 'a host configuration that starts ag-mcp', path: p, undo: 'ag-mcp uninstall <host>' })
    }
  }
  const hooks = await hookStatus(l.top).catch(() => [])
  const ours = hooks.filter((h) => h.ours).map((h) => h.hook)
  if (ours.length)
    out.push({ what: `agit's git hooks (${ours.join(', ')})`, path: 'hooks', undo: 'ag-mcp agit hooks uninstall' })
  return out
}
