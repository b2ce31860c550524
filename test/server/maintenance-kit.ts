import fs from 'node:fs'
import path from 'node:path'
import { execFileSync } from 'node:child_process'
import { fixture, sh, tmpdir, type Fixture } from './helpers.ts'
import { DEFAULT_MAINTENANCE } from '../../server/src/maintenance.ts'

// What the maintenance tests share: a server whose repository maintenance is driven by its
// tick (or maintainRepo), never by waiting for its timer, and ways to look into the repository.

// At normal priority: see MaintenanceOptions.lowPriority.
export const OPTS = {
  ...DEFAULT_MAINTENANCE,
  looseObjects: 40,
  maxPacks: 3,
  looseRefs: 5,
  intervalS: 3600,
  kickAt: 0,
  lowPriority: false,
}

export async function withServer(grace: number, f: (fx: Fixture, bare: string) => Promise<void>): Promise<void> {
  const fx = await fixture({ server: { maintenance: { ...OPTS, graceS: grace } } })
  try {
    await f(fx, path.join(fx.data, 'repos/demo.git'))
  } finally {
    await fx.close() // runs git fsck --strict on every repository
  }
}

/** Every object some ref reaches, by `git rev-list --objects --all`. */
export const reachable = (bare: string): string[] =>
  sh(bare, 'rev-list', '--objects', '--all')
    .split('\n')
    .filter(Boolean)
    .map((l) => l.slice(0, 40))

/** Of these ids, those the repository does not have. */
export function missing(bare: string, ids: string[]): string[] {
  const out = execFileSync('git', ['--git-dir', bare, 'cat-file', '--batch-check=%(objectname) %(objecttype)'], {
    input: ids.join('\n') + '\n',
    encoding: 'utf8',
  })
  return out
    .split('\n')
    .filter((l) => l.endsWith(' missing'))
    .map((l) => l.slice(0, 40))
}

/** `n` loose objects, as a clone or git run by hand leaves them: the server itself writes packs. */
export function looseBlobs(bare: string, n: number, tag: string): string[] {
  // One git process for all of them (one each took a second or so on a busy machine).
  const dir = tmpdir('loose')
  try {
    const files = Array.from({ length: n }, (_, i) => {
      const f = path.join(dir, String(i))
      fs.writeFileSync(f, `${tag} ${i}\n`)
      return f
    })
    const out = execFileSync('git', ['--git-dir', bare, 'hash-object', '-w', '--stdin-paths'], {
      input: files.join('\n') + '\n',
      encoding: 'utf8',
    })
    return out.trim().split('\n')
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

export const blobOf = (bare: string, content: string): string =>
  execFileSync('git', ['--git-dir', bare, 'hash-object', '--stdin'], { input: content, encoding: 'utf8' }).trim()

/** A workspace with `n` writes of one file (the superseded versions are unreachable) and a proposal. */
export async function churn(fx: Fixture, n: number): Promise<{ ws: string; last: string }> {
  const ws = (await fx.api('alice', 'POST', '/repos/demo/workspaces', {})).body.id as string
  let last = ''
  for (let i = 0; i < n; i++) {
    last = `version ${i} of a file written again and again\n`
    const r = await fx.api('alice', 'PUT', `/workspaces/${ws}/files`, { path: 'churn/file.txt', content: last })
    if (r.status !== 200) throw new Error(`write ${i}: ${r.status}`)
  }
  for (let i = 0; i < 8; i++) {
    const pw = (await fx.api('bob', 'POST', '/repos/demo/workspaces', {})).body.id as string
    await fx.api('bob', 'PUT', `/workspaces/${pw}/files`, { path: `p/${i}.txt`, content: `proposed ${i}\n` })
    const p = await fx.api('bob', 'POST', `/workspaces/${pw}/proposals`, { title: `p${i}` })
    if (p.status !== 201) throw new Error(`propose ${i}: ${p.status}`)
  }
  return { ws, last }
}
