import { execFileSync } from 'node:child_process'
import { initBorrowing, mirrorRefs, objectsDirOf } from '../../lib/mirror.ts'
import { invalid } from './errors.ts'

// `repo add NAME --from PATH --shared`: the repository borrows PATH's objects (alternates)
// instead of copying them, and starts with PATH's branches, tags and HEAD. What the server
// writes (workspaces, proposals, integrations) goes into its own object store; PATH's store is
// only read. Whoever owns PATH must keep what this repository's refs reach reachable there too
// (ag-mcp --local does: operator/local/sync.ts), or a `git gc` in PATH may prune it.

export function initShared(dest: string, from: string, env: NodeJS.ProcessEnv): void {
  const format = execFileSync('git', ['-C', from, 'rev-parse', '--show-object-format'], {
    env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim()
  if (format !== 'sha1') throw invalid(`--from ${from} uses ${format} object ids; ag-server keeps SHA-1 repositories`)
  initBorrowing(dest, objectsDirOf(from, env), env)
  let prefer: string | undefined
  try {
    prefer = execFileSync('git', ['-C', from, 'symbolic-ref', '--quiet', '--short', 'HEAD'], {
      env,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim()
  } catch {
    prefer = undefined // a detached HEAD
  }
  mirrorRefs(from, dest, prefer, env)
}
