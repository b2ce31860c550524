// Local mode's state in a repository, made once and shared by every session and command:
//   <main work tree>/.ag/server/         the private ag-server's data directory
//   .ag/server/repos/<name>.git          a bare repository per work tree that BORROWS your
//                                        objects (git alternates) and mirrors your branches
//   .ag/server.log                       the private server's output
//   .ag/tokens/                          each process's token (0600), gone when it ends
// `.ag/` is listed in .git/info/exclude, so no tracked file changes. Two sessions that start
// at once in a new repository race safely: the data directory is made under a temporary name
// and renamed into place (one rename wins, the other's copy is dropped), and `repo add` of a
// name that appeared meanwhile is taken as done.
import { spawnSync } from 'node:child_process'
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  realpathSync,
  renameSync,
  rmSync,
} from 'node:fs'
import { basename, dirname, join, resolve } from 'node:path'
import { alive } from '../../lib/alive.ts'
import { borrows } from '../../lib/mirror.ts'
import { EXCLUDE_LINE, LocalError, excludeFile, git, isAgExclude, locate, requireCommits } from './repo.ts'
import type { Located } from './repo.ts'

export interface LocalState extends Located {
  /** <home>/.ag */
  dir: string
  /** The private ag-server's data directory. */
  data: string
  /** This work tree's repository inside the private ag-server. */
  repo: string
  /** Its bare repository (borrowing your objects). */
  bare: string
  /** How to run ag-server: node and ag-server.mjs, or this executable's embedded one. */
  agServer: readonly string[]
}

/** The standalone executable's argument that runs its embedded ag-server (bin/ag-mcp-exe.ts). */
export const EMBEDDED_AG_SERVER = 'ag-server'

/**
 * How to run ag-server. The npm package ships ag-server.mjs beside ag-mcp.mjs; the standalone
 * executable embeds it and runs it as `<executable> ag-server …` (bin/ag-mcp-exe.ts), so local
 * mode needs no Node install there either.
 */
export function agServerCommand(): readonly string[] {
  const sea = process.getBuiltinModule('node:sea') as { isSea(): boolean } | undefined
  if (sea?.isSea() === true) return [process.execPath, EMBEDDED_AG_SERVER]
  const self = process.argv[1] ? realpathSync(process.argv[1]) : ''
  const candidate = join(dirname(self), 'ag-server.mjs')
  if (!existsSync(candidate))
    throw new LocalError(`local mode runs ag-server.mjs from beside ag-mcp, and ${candidate} does not exist`)
  return [process.execPath, candidate]
}

export function agServer(s: Pick<LocalState, 'agServer'>, args: string[]): string {
  const [program, ...leading] = s.agServer
  const r = spawnSync(program as string, [...leading, ...args], { encoding: 'utf8' })
  if (r.status !== 0) throw new LocalError(`ag-server ${args[0] ?? ''} failed: ${(r.stderr || r.stdout).trim()}`)
  return r.stdout.trim()
}

const slug = (s: string): string => s.replace(/[^A-Za-z0-9._-]/g, '-').replace(/^[^A-Za-z0-9]+/, '') || 'repo'

/** The private server's repository for this work tree: the main one's, or one per linked worktree. */
function repoName(l: Located, dir: string): string {
  let main = slug(basename(l.home))
  try {
    // Data directories from before linked worktrees had their own repository named it here.
    main = (JSON.parse(readFileSync(join(dir, 'local.json'), 'utf8')) as { repo: string }).repo
  } catch {
    // the usual case
  }
  if (!l.linked) return main
  return `${main}-${slug(basename(l.top))}`.slice(0, 100)
}

/** Where local mode's state is (or would be) for this work tree; nothing is checked or made. */
export function localStateOf(l: Located): LocalState {
  const dir = join(l.home, '.ag')
  const data = join(dir, 'server')
  const repo = repoName(l, dir)
  return { ...l, dir, data, repo, bare: join(data, 'repos', `${repo}.git`), agServer: agServerCommand() }
}

/**
 * The repository at `where` (default: the working directory's), located and, with `create`,
 * set up for local mode: a LocalError says what is wrong and leaves nothing behind.
 */
export function prepareLocal(where: string | undefined, cwd: string, o: { create: boolean }): LocalState {
  const l = locate(resolve(cwd, where ?? '.'))
  const s = localStateOf(l)
  const { data } = s
  if (!o.create) {
    if (!existsSync(join(s.bare, 'HEAD')))
      throw new LocalError(`${l.top} has no local-mode state (.ag/): run ag-mcp --local there first`)
    return s
  }
  // Set up already: no git run is needed to say so (a start costs what it must, no more).
  if (existsSync(join(s.bare, 'HEAD'))) {
    excludeFromGit(l)
    if (!borrows(s.bare, join(l.common, 'objects'))) shareObjects(s)
    return s
  }
  requireCommits(l)
  excludeFromGit(l)
  ensureDataDir(s)
  if (!existsSync(join(s.bare, 'HEAD'))) {
    try {
      agServer(s, ['repo', 'add', s.repo, '--from', l.top, '--shared', '--data', data])
    } catch (e) {
      // Another session added it first.
      if (!existsSync(join(s.bare, 'HEAD'))) throw e
    }
  }
  return s
}

/**
 * A repository made by an older ag-mcp holds a full copy of your objects: from now on it
 * borrows yours, and keeps only what it wrote itself (repack --local drops what yours has).
 */
function shareObjects(s: LocalState): void {
  const alternates = join(s.bare, 'objects', 'info', 'alternates')
  mkdirSync(dirname(alternates), { recursive: true })
  appendFileSync(alternates, `${join(s.common, 'objects')}\n`)
  git(s.top, ['--git-dir', s.bare, 'repack', '-a', '-d', '-l', '-q'])
}

function ensureDataDir(s: LocalState): void {
  if (existsSync(join(s.data, 'ag-server.json'))) return
  mkdirSync(s.dir, { recursive: true })
  for (const f of readdirSync(s.dir)) {
    const pid = Number(/^server\.tmp-(\d+)$/.exec(f)?.[1])
    if (pid && !alive(pid)) rmSync(join(s.dir, f), { recursive: true, force: true })
  }
  const tmp = join(s.dir, `server.tmp-${process.pid}`)
  rmSync(tmp, { recursive: true, force: true })
  try {
    agServer(s, ['init', tmp])
    // A data directory from an interrupted set-up of an older version has no marker: replace it.
    if (existsSync(s.data) && !existsSync(join(s.data, 'ag-server.json')))
      rmSync(s.data, { recursive: true, force: true })
    try {
      // rename(2) onto a non-empty directory fails: the loser of a race keeps nothing.
      renameSync(tmp, s.data)
    } catch (e) {
      if (!existsSync(join(s.data, 'ag-server.json'))) throw e
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true })
  }
}

/** .ag/ is listed in .git/info/exclude: ignored by git, and no tracked file (.gitignore) changes. */
function excludeFromGit(l: Located): void {
  const exclude = excludeFile(l)
  const current = existsSync(exclude) ? readFileSync(exclude, 'utf8') : ''
  if (current.split('\n').some(isAgExclude)) return
  mkdirSync(dirname(exclude), { recursive: true })
  appendFileSync(
    exclude,
    `${current === '' || current.endsWith('\n') ? '' : '\n'}# ag-mcp local mode state\n${EXCLUDE_LINE}\n`,
  )
}
