// Fixtures for the agit tests: a real git repository with its own identity (never the user's
// git config), and AGIT's exact on-disk layout written by hand, as AGIT 1.3 writes it.
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { GIT_IDENTITY } from '../../helpers/git-identity.ts'

export const GIT_ENV: Record<string, string> = GIT_IDENTITY
// Our own code spawns git with process.env: the test's identity applies to it too.
Object.assign(process.env, GIT_ENV)

export function sh(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: { ...process.env, ...GIT_ENV }, encoding: 'utf8' })
}

export function gitIn(cwd: string, input: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: { ...process.env, ...GIT_ENV }, encoding: 'utf8', input }).trim()
}

const made: string[] = []
// Removed when the test process ends, passed or failed: a test run leaves nothing in the temp dir.
process.once('exit', () => {
  for (const d of made) rmSync(d, { recursive: true, force: true })
})

/** A repository with one commit touching src/auth.ts and README.md; returns its real path. */
export function makeRepo(prefix = 'agit'): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), `${prefix}-`)))
  made.push(dir)
  sh(dir, 'init', '-q', '-b', 'main')
  sh(dir, 'config', 'user.email', 'agit@test.invalid')
  mkdirSync(join(dir, 'src'))
  writeFileSync(join(dir, 'src/auth.ts'), 'export const auth = 1\n')
  writeFileSync(join(dir, 'README.md'), '# demo\n')
  sh(dir, 'add', '.')
  sh(dir, 'commit', '-q', '-m', 'initial')
  return dir
}

/** What `agit init` lays down (V2): HEAD, an empty index, config.json, tmp/. */
export function agitInitLayout(dir: string, branch = 'main'): void {
  mkdirSync(join(dir, '.agit/tmp'), { recursive: true })
  writeFileSync(join(dir, '.agit/HEAD'), branch)
  writeFileSync(join(dir, '.agit/index'), '')
  writeFileSync(join(dir, '.agit/config.json'), '{\n  "storage_version": 2\n}')
}

/** A neural commit exactly as AGIT's V2 pipeline stores it (serde_json::to_vec of the envelope). */
export function agitNeuralCommit(
  dir: string,
  o: { gitHash: string; parent?: string; summary: string; trace: string; at: number; branch?: string },
): string {
  const blob = (type: string, content: string) =>
    gitIn(
      dir,
      `{"object_type":"blob","schema_version":1,"created_at":${o.at},"data":{"content_type":"${type}","content":${JSON.stringify(content)}}}`,
      'hash-object',
      '-w',
      '--stdin',
    )
  const trace = blob('trace', o.trace)
  const roadmap = blob('roadmap', "No roadmap set. Use 'agit roadmap' to set project goals.")
  const parent = o.parent ? `"parent_hash":"${o.parent}",` : ''
  const json = `{"object_type":"neural_commit","schema_version":1,"created_at":${o.at},"data":{"git_hash":"${o.gitHash}",${parent}"author":"agit@test.invalid","roadmap_hash":"${roadmap}","trace_hash":"${trace}","summary":${JSON.stringify(o.summary)},"created_at":${o.at}}}`
  const id = gitIn(dir, json, 'hash-object', '-w', '--stdin')
  sh(dir, 'update-ref', `refs/agit/heads/${o.branch ?? 'main'}`, id)
  return id
}
