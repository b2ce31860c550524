// `ag-mcp local status|remove`: what local mode keeps in this repository, and taking it all away.
// One function per subcommand. What other commands put here (agit, continuity, host configs) is
// reported by status and named by remove, with how to remove it, but left alone.
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { footprint, kib, neighbours } from './local/footprint.ts'
import type { Footprint } from './local/footprint.ts'
import { LocalError, excludeFile, git, isAgExclude, locate } from './local/repo.ts'
import { readLock } from './local/server.ts'
import { alive } from '../lib/alive.ts'
import { localStateOf } from './local/setup.ts'
import type { LocalState } from './local/setup.ts'
import { agentPrincipal } from './local/tokens.ts'

export interface Io {
  out(s: string): void
  err(s: string): void
  cwd: string
}

export interface Args {
  verb: keyof typeof COMMANDS
  force: boolean
  repoDir: string | undefined
}

/** `ag-mcp local status|remove` (operator/commands.ts parses the words). */
export async function local(a: Args, io: Io): Promise<number> {
  try {
    // Located only: status and remove never create anything.
    const s = localStateOf(locate(resolve(io.cwd, a.repoDir ?? '.')))
    return await COMMANDS[a.verb](s, a, io)
  } catch (e) {
    if (!(e instanceof LocalError)) throw e
    io.err(`ag-mcp local ${a.verb}: ${e.message}`)
    return e instanceof Refusal ? 1 : 2
  }
}

/** A refusal that changes nothing (exit 1), not a usage error. */
class Refusal extends LocalError {}

const sessionsOf = (f: Footprint) => (f.holders ?? []).filter((h) => h.slot !== undefined)

const COMMANDS = {
  async status(s: LocalState, _a: Args, io: Io): Promise<number> {
    const f = await footprint(s)
    const line = (k: string, v: string): void => io.out(`  ${k.padEnd(22)} ${v}`)
    io.out(`local mode in ${s.home}`)
    if (f.agBytes === 0 && f.pins === 0 && f.excluded.length === 0) {
      io.out('  nothing: ag-mcp --local has not run here')
    } else {
      const ratio = f.gitBytes ? ` (${((100 * f.agBytes) / f.gitBytes).toFixed(1)}% of .git's ${kib(f.gitBytes)})` : ''
      line('.ag/', `${kib(f.agBytes)}${ratio}: the private server's state; it borrows your objects, copies none`)
      line('repositories', f.repos.length ? f.repos.join(', ') : '(none)')
      const sessions = sessionsOf(f)
      const lock = readLock(s.data)
      line(
        'private server',
        f.holders === undefined
          ? 'not running (it runs while a session or command uses it)'
          : `running (pid ${lock?.pid ?? '?'}), held by ${f.holders.length} process(es)`,
      )
      line(
        'sessions',
        sessions.length
          ? sessions.map((h) => `${agentPrincipal(h.slot)} (pid ${h.pid}, since ${h.since})`).join('; ')
          : 'none live',
      )
      line(
        'proposals',
        `${f.proposals.length} recorded, ${f.published.length} open${f.published.length ? ` (${f.published.join(', ')})` : ''}`,
      )
      line(
        'refs in your repo',
        `${f.published.length} refs/proposals/* (open proposals), ${f.pins} refs/ag/* (what the private server's refs reach, kept from git gc)`,
      )
      line('.git/info/exclude', f.excluded.length ? f.excluded.map((l) => l.trim()).join(' ') : '(no line)')
    }
    for (const n of await neighbours(s)) line('also here', `${n.what}: ${n.path} (not local mode's; ${n.undo})`)
    if (f.agBytes || f.pins) io.out('undo all of local mode: ag-mcp local remove')
    return 0
  },

  async remove(s: LocalState, a: Args, io: Io): Promise<number> {
    const f = await footprint(s)
    const sessions = sessionsOf(f)
    if (sessions.length && !a.force)
      throw new Refusal(
        `${sessions.length} session(s) use local mode here (pids ${sessions.map((h) => h.pid).join(', ')}): end them first (close their host or window), or run ag-mcp local remove --force to stop their private server under them`,
      )
    if (f.published.length && !a.force)
      throw new Refusal(
        `open proposals would be lost: ${f.published.join(', ')}. Integrate or reject them (ag-mcp proposals), or keep one as a branch (git branch keep-${f.published[0]} refs/proposals/${f.published[0]}); --force removes them anyway`,
      )
    await stopServer(s, io, sessions.length)
    const removed: string[] = []
    if (f.agBytes || f.repos.length) {
      rmSync(s.dir, { recursive: true, force: true })
      removed.push(`${s.dir} (${kib(f.agBytes)})`)
    }
    const refs = deleteRefs(s, f)
    if (refs) removed.push(`${refs} ref(s) under refs/ag/ and refs/proposals/ (their objects go with your next git gc)`)
    if (dropExcludeLine(s)) removed.push(`the /.ag/ line of ${excludeFile(s)}`)
    io.out(removed.length ? `removed ${removed.join('; ')}` : 'nothing of local mode was here')
    for (const n of await neighbours(s)) io.out(`left ${n.path}: ${n.what}, not local mode's (${n.undo})`)
    return 0
  },
}

/**
 * The private server stops before its files go (with --force while sessions run: they are told
 * by their failures). Its marker goes first, so a session whose server stops starts no next one.
 */
async function stopServer(s: LocalState, io: Io, sessions: number): Promise<void> {
  const lock = readLock(s.data)
  if (!lock || !alive(lock.pid)) return
  rmSync(join(s.data, 'ag-server.json'), { force: true })
  process.kill(lock.pid, 'SIGTERM')
  for (let i = 0; i < 400 && alive(lock.pid); i++) await new Promise((r) => setTimeout(r, 25))
  if (alive(lock.pid))
    throw new LocalError(`the private server (pid ${lock.pid}) did not stop; stop it, then run this again`)
  io.out(
    `stopped the private server (pid ${lock.pid})${sessions ? `; the ${sessions} session(s) using it will fail from now on` : ''}`,
  )
}

function deleteRefs(s: LocalState, f: Footprint): number {
  const lines = git(s.top, ['for-each-ref', '--format=delete %(refname) %(objectname)', 'refs/ag/'])
    .split('\n')
    .filter(Boolean)
  const mine = new Set(f.proposals)
  for (const l of git(s.top, ['for-each-ref', '--format=%(refname) %(objectname)', 'refs/proposals/']).split('\n')) {
    const [ref = '', oid = ''] = l.split(' ')
    if (mine.has(ref.slice('refs/proposals/'.length))) lines.push(`delete ${ref} ${oid}`)
  }
  if (lines.length) git(s.top, ['update-ref', '--stdin'], `${lines.join('\n')}\n`)
  return lines.length
}

function dropExcludeLine(s: LocalState): boolean {
  const file = excludeFile(s)
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch {
    return false
  }
  const lines = text.split('\n')
  const kept = lines.filter(
    (l, i) => !isAgExclude(l) && !(l === '# ag-mcp local mode state' && isAgExclude(lines[i + 1] ?? '')),
  )
  if (kept.length === lines.length) return false
  writeFileSync(file, kept.join('\n'))
  return true
}
