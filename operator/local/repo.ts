// Where local mode's repository is, in every shape git has: a work tree, a linked worktree
// (`git worktree add`), a submodule (its git directory under the superproject's .git/modules),
// a detached HEAD. Nothing here writes anything.
import { execFile, execFileSync } from 'node:child_process'
import { basename, dirname, join, resolve } from 'node:path'

export class LocalError extends Error {}

export const GIT_ENV = { GIT_TERMINAL_PROMPT: '0' }

/** git in `cwd` with the caller's environment (your identity and config), trimmed stdout. */
export function git(cwd: string, args: string[], input?: string): string {
  return gitRaw(cwd, args, input).trim()
}

/** git's stdout as it is (porcelain formats whose leading spaces mean something). */
export function gitRaw(cwd: string, args: string[], input?: string): string {
  return execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, ...GIT_ENV },
    stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    maxBuffer: 256 * 1024 * 1024,
    ...(input === undefined ? {} : { input }),
  })
}

/** git without blocking the event loop (a session keeps answering MCP while it runs); trimmed stdout. */
export function gitAsync(cwd: string, args: string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      'git',
      args,
      { cwd, encoding: 'utf8', env: { ...process.env, ...GIT_ENV }, maxBuffer: 256 * 1024 * 1024 },
      (e, stdout, stderr) => (e ? reject(Object.assign(e, { stderr })) : resolve(stdout.trim())),
    )
    child.stdin?.end(input)
  })
}

/** git's stderr of a failed run, for a message. */
export const gitError = (e: unknown): string => String((e as { stderr?: string }).stderr ?? (e as Error).message).trim()

export interface Located {
  /** This work tree's top level (a linked worktree's own). */
  top: string
  /** The repository's common git directory (shared by its worktrees). */
  common: string
  /** Where .ag/ lives: the main work tree's top (so every worktree shares one private server). */
  home: string
  /** This is a linked worktree, not the main work tree. */
  linked: boolean
  /** The branch checked out here, or undefined (a detached or unborn HEAD). */
  branch: string | undefined
}

/** The repository at `start`, or a LocalError that says what to do (two git runs). */
export function locate(start: string): Located {
  let out: string[]
  let inTree = true
  try {
    out = gitRaw(start, [
      'rev-parse',
      '--is-bare-repository',
      '--path-format=absolute',
      '--git-dir',
      '--git-common-dir',
      '--show-object-format',
      '--show-toplevel',
    ]).split('\n')
  } catch (e) {
    // --show-toplevel fails outside a work tree, after the lines before it were printed.
    out = String((e as { stdout?: string }).stdout ?? '').split('\n')
    inTree = false
  }
  const [bare, gitDir = '', common = '', format, top = ''] = out
  if (bare === undefined || bare === '')
    throw new LocalError(
      `${start} is not inside a git repository: run git init there, or name one (ag-mcp --local PATH)`,
    )
  if (bare === 'true') throw new LocalError(`${start} is a bare repository; local mode needs a working tree`)
  if (!inTree || top === '')
    throw new LocalError(`${start} is inside a git directory, not a working tree: run ag-mcp --local in the work tree`)
  if (format !== 'sha1')
    throw new LocalError(`${start} uses ${format} object ids; local mode works on SHA-1 repositories only`)
  const linked = resolve(gitDir) !== resolve(common)
  return { top, common, home: linked ? mainTreeOf(common) : top, linked, branch: branchAt(top) }
}

/** The main work tree of a repository whose linked worktree we are in (or its git dir, if bare). */
function mainTreeOf(common: string): string {
  if (basename(common) === '.git') return dirname(common)
  try {
    const wt = git(common, ['--git-dir', common, 'config', '--get', 'core.worktree'])
    if (wt) return resolve(common, wt)
  } catch {
    // no core.worktree: a bare repository with linked worktrees
  }
  return join(common, 'ag-mcp')
}

/** The branch checked out in `top`, or undefined (a detached or unborn HEAD). */
export function branchAt(top: string): string | undefined {
  try {
    return git(top, ['symbolic-ref', '--quiet', '--short', 'HEAD']) || undefined
  } catch {
    return undefined
  }
}

/** Refuses a repository without a single commit: there is nothing to read or propose onto. */
export function requireCommits(l: Located): void {
  if (git(l.top, ['for-each-ref', '--count=1', '--format=%(refname)', 'refs/heads/']) !== '') return
  throw new LocalError(
    `${l.top} has no commits yet: make a first commit (git add . && git commit -m "first commit"), then run ag-mcp --local again`,
  )
}

const EXCLUDE_LINE = '/.ag/'

/** The repository's info/exclude (shared by its worktrees). */
export const excludeFile = (l: Pick<Located, 'common'>): string => join(l.common, 'info', 'exclude')

/** Is `line` (of info/exclude) the one that keeps .ag/ out of git? */
export const isAgExclude = (line: string): boolean => ['/.ag/', '.ag/', '.ag', '/.ag'].includes(line.trim())

export { EXCLUDE_LINE }
