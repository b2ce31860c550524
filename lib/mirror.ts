// A repository that borrows another's objects (git alternates) and mirrors its branches and
// tags: what `ag-server repo add --shared` creates and what `ag-mcp --local` keeps in step with
// your repository. Nothing is copied: the mirror's refs name commits that live in the other
// repository's object store, which the mirror reads but never writes, repacks or prunes (git's
// own gc in the mirror repacks with --local and prunes only its own loose objects).
import { execFileSync } from 'node:child_process'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'

export type GitEnv = NodeJS.ProcessEnv

function git(args: string[], env: GitEnv, input?: string): string {
  return execFileSync('git', args, {
    env,
    encoding: 'utf8',
    stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    maxBuffer: 256 * 1024 * 1024,
    ...(input === undefined ? {} : { input }),
  })
}

/** The object directory of the repository at `dir` (a work tree, a linked worktree or a bare one). */
export function objectsDirOf(dir: string, env: GitEnv): string {
  const common = git(['-C', dir, 'rev-parse', '--path-format=absolute', '--git-common-dir'], env).trim()
  return join(common, 'objects')
}

/** A new bare repository at `dest` that borrows `objects` and holds no object of its own. */
export function initBorrowing(dest: string, objects: string, env: GitEnv): void {
  // No template: no sample hooks, no description, nothing but what git needs.
  git(['init', '--bare', '--quiet', '--template=', dest], env)
  mkdirSync(join(dest, 'objects', 'info'), { recursive: true })
  writeFileSync(join(dest, 'objects', 'info', 'alternates'), `${resolve(objects)}\n`)
}

/** Does the repository at `gitDir` borrow `objects` through its alternates file? */
export function borrows(gitDir: string, objects: string): boolean {
  try {
    return readFileSync(join(gitDir, 'objects', 'info', 'alternates'), 'utf8')
      .split('\n')
      .some((l) => l.trim() === resolve(objects))
  } catch {
    return false
  }
}

const MIRRORED = ['refs/heads/', 'refs/tags/']

function refsOf(args: string[], env: GitEnv): Map<string, string> {
  const out = new Map<string, string>()
  for (const line of git([...args, 'for-each-ref', '--format=%(objectname) %(refname)', ...MIRRORED], env).split('\n'))
    if (line.length > 41) out.set(line.slice(41), line.slice(0, 40))
  return out
}

export interface MirrorResult {
  /** The branch the mirror's HEAD names. */
  head: string
  changed: number
}

/**
 * Makes the mirror's branches and tags exactly those of the repository at `from` (one git
 * transaction: a concurrent change fails it and it is read again), and its HEAD `prefer` when
 * that branch exists, else what it was, else main, master or the first branch.
 */
export function mirrorRefs(from: string, mirror: string, prefer: string | undefined, env: GitEnv): MirrorResult {
  for (let attempt = 0; ; attempt++) {
    const theirs = refsOf(['-C', from], env)
    const ours = refsOf(['--git-dir', mirror], env)
    const lines: string[] = []
    for (const [ref, oid] of theirs)
      if (ours.get(ref) !== oid) lines.push(`update ${ref} ${oid} ${ours.get(ref) ?? ''}`)
    for (const [ref, oid] of ours) if (!theirs.has(ref)) lines.push(`delete ${ref} ${oid}`)
    try {
      if (lines.length) git(['--git-dir', mirror, 'update-ref', '--stdin'], env, `${lines.join('\n')}\n`)
      return { head: pointHead(mirror, theirs, prefer, env), changed: lines.length }
    } catch (e) {
      if (attempt >= 3) throw e
    }
  }
}

function pointHead(mirror: string, refs: Map<string, string>, prefer: string | undefined, env: GitEnv): string {
  const has = (b: string | undefined): b is string => b !== undefined && refs.has(`refs/heads/${b}`)
  const current = /^ref: refs\/heads\/(.+)$/.exec(readFileSync(join(mirror, 'HEAD'), 'utf8').trim())?.[1]
  const first = [...refs.keys()].find((r) => r.startsWith('refs/heads/'))?.slice('refs/heads/'.length)
  const head = [prefer, current, 'main', 'master'].find(has) ?? first ?? prefer ?? current ?? 'main'
  if (head !== current) git(['--git-dir', mirror, 'symbolic-ref', 'HEAD', `refs/heads/${head}`], env)
  return head
}
