import fs from 'node:fs'
import path from 'node:path'
import { alive } from '../../lib/alive.ts'
import { openState } from './open-state.ts'
import { fsyncDir } from './store.ts'
import { adminMint } from './admin.ts'

// Layout of a data directory:
//   ag-server.json   marker + version
//   state/           state.json (snapshot) + journal.log
//   repos/<n>.git    bare repositories
//   tmp/             throwaway index files
//   admin.token      the operator token minted by `init` (0600)
//   lock             {pid, kind, listen, holders} of the process that owns state/

export const MARKER = 'ag-server.json'

export function isDataDir(dir: string): boolean {
  return fs.existsSync(path.join(dir, MARKER))
}

/**
 * Where a data directory's state lives: its own journal, or a PostgreSQL database (`init
 * --store`), whose URL is never written here; serve names it again with --store.
 */
export function dataDirStore(dir: string): 'journal' | 'postgres' {
  const marker = JSON.parse(fs.readFileSync(path.join(dir, MARKER), 'utf8')) as { store?: unknown }
  return marker.store === 'postgres' ? 'postgres' : 'journal'
}

/** Create a data directory and its admin token; with `store`, the state (the token too) lives in that database. */
export async function initDataDir(dir: string, opts: { store?: string } = {}): Promise<{ adminTokenFile: string }> {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  if (isDataDir(dir)) throw new Error(`${dir} is already an ag-server data directory`)
  if (fs.readdirSync(dir).length > 0) throw new Error(`${dir} is not empty`)
  for (const sub of ['state', 'repos', 'tmp']) fs.mkdirSync(path.join(dir, sub), { mode: 0o700 })
  const state = await openState({ dataDir: dir, ...(opts.store !== undefined ? { store: opts.store } : {}) })
  const { token } = await adminMint(state, {
    principal: 'human:admin',
    scopes: ['read', 'workspace', 'propose', 'coordinate', 'review', 'integrate', 'admin'],
    repos: ['*'],
    ttl_s: 10 * 365 * 86400,
    label: 'created by ag-server init',
  })
  await state.close()
  const adminTokenFile = path.join(dir, 'admin.token')
  writeSecret(adminTokenFile, token)
  fs.writeFileSync(
    path.join(dir, MARKER),
    JSON.stringify({
      format: 1,
      created_at: new Date().toISOString(),
      ...(opts.store !== undefined ? { store: 'postgres' } : {}),
    }) + '\n',
  )
  fsyncDir(dir)
  return { adminTokenFile }
}

/** Write a secret to a file that only the owner can read (created 0600, never widened). */
export function writeSecret(file: string, secret: string): void {
  prepareSecret(file, file).commit(secret)
}

/** A destination reserved for a secret that does not exist yet (see prepareSecret). */
export interface PendingSecret {
  /** Writes the secret (mode 0600, fsynced) and moves it into place. */
  commit(secret: string): void
  /** Drops the reservation; nothing after commit. */
  abort(): void
}

/**
 * Reserves `file` before the secret is made: the folder must exist and take a new 0600 file, so a
 * caller that mints a token only afterwards cannot lose the secret to a bad path. `what` names
 * the destination in errors (e.g. the flag that gave it).
 */
export function prepareSecret(file: string, what: string): PendingSecret {
  const dir = path.dirname(path.resolve(file))
  const dirStat = fs.statSync(dir, { throwIfNoEntry: false })
  if (!dirStat)
    throw new Error(`${what}: the folder ${dir} does not exist; create it (mkdir -p ${dir}) or name another file`)
  if (!dirStat.isDirectory()) throw new Error(`${what}: ${dir} is not a folder; name a file in a folder`)
  if (fs.statSync(file, { throwIfNoEntry: false })?.isDirectory())
    throw new Error(`${what} is a directory; name the file to write the secret to`)
  const tmp = `${file}.tmp-${process.pid}`
  let fd: number | undefined
  try {
    fd = fs.openSync(tmp, 'wx', 0o600)
  } catch (e) {
    throw new Error(`${what}: cannot create a file in ${dir} (${(e as NodeJS.ErrnoException).code ?? String(e)})`)
  }
  const close = (): void => {
    if (fd !== undefined) fs.closeSync(fd)
    fd = undefined
  }
  let done = false
  return {
    commit(secret) {
      try {
        fs.fchmodSync(fd as number, 0o600)
        fs.writeSync(fd as number, `${secret}\n`)
        fs.fsyncSync(fd as number)
        close()
        fs.renameSync(tmp, file)
        done = true
      } catch (e) {
        this.abort()
        throw e
      }
    },
    abort() {
      if (done) return
      done = true
      close()
      fs.rmSync(tmp, { force: true })
    },
  }
}

export interface LockInfo {
  pid: number
  kind: 'server' | 'cli'
  listen?: string
  /** HOST:PORT of the holders' port of a server run with --exit-with-holders. */
  holders?: string
}

/**
 * The lock file of an instance of several on one PostgreSQL store (`lock-<instance>`): each
 * excludes a second process with its id, not the other instances, which share repos/.
 */
export const instanceLockName = (instance: string): string => `lock-${instance.replace(/[^A-Za-z0-9._-]/g, '_')}`

/**
 * Take the data directory's lock (`name`: the one exclusive `lock`, or an instance's, see
 * instanceLockName), or report who holds it. Stale locks (dead pid) are broken.
 */
export function acquireLock(
  dir: string,
  info: LockInfo,
  name = 'lock',
): { ok: true; release: () => void } | { ok: false; holder: LockInfo } {
  const file = path.join(dir, name)
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = fs.openSync(file, 'wx', 0o600)
      fs.writeSync(fd, JSON.stringify(info))
      fs.fsyncSync(fd)
      fs.closeSync(fd)
      return {
        ok: true,
        release: () => {
          try {
            const cur = JSON.parse(fs.readFileSync(file, 'utf8')) as LockInfo
            if (cur.pid === info.pid) fs.unlinkSync(file)
          } catch {
            // already gone
          }
        },
      }
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e
      let holder: LockInfo | undefined
      try {
        holder = JSON.parse(fs.readFileSync(file, 'utf8')) as LockInfo
      } catch {
        holder = undefined // torn lock file from a crash
      }
      if (holder && alive(holder.pid) && holder.pid !== process.pid) return { ok: false, holder }
      fs.rmSync(file, { force: true })
    }
  }
  throw new Error('could not take the data directory lock')
}

export function updateLock(dir: string, info: LockInfo, name = 'lock'): void {
  const file = path.join(dir, name)
  const tmp = `${file}.tmp-${process.pid}`
  fs.writeFileSync(tmp, JSON.stringify(info), { mode: 0o600 })
  fs.renameSync(tmp, file)
}

/** Who holds lock file `name` of dir, if a live process does (a stale or torn file: nobody). */
export function lockHolder(dir: string, name: string): LockInfo | undefined {
  try {
    const holder = JSON.parse(fs.readFileSync(path.join(dir, name), 'utf8')) as LockInfo
    return alive(holder.pid) && holder.pid !== process.pid ? holder : undefined
  } catch {
    return undefined
  }
}

/**
 * The lock of a server about to start, beside the others: under the journal the one exclusive
 * `lock`, refused while an instance of a PostgreSQL store serves the same repositories; under
 * a PostgreSQL store the instance's own (instanceLockName), refused while a journal server
 * holds the exclusive one. Refused: ok false, and why.
 */
export function acquireServeLock(
  dir: string,
  info: LockInfo,
  instance: string | undefined,
): { ok: true; name: string; release: () => void } | { ok: false; why: string } {
  const others =
    instance === undefined
      ? fs
          .readdirSync(dir)
          .filter((n) => n.startsWith('lock-'))
          .map((n) => lockHolder(dir, n))
      : [lockHolder(dir, 'lock')]
  const other = others.find((h) => h !== undefined)
  if (other)
    return {
      ok: false,
      why:
        instance === undefined
          ? `the repositories are served by an instance on a PostgreSQL store (pid ${other.pid}); start this one with the same --store`
          : `data directory is in use by pid ${other.pid} (${other.kind}) on the embedded journal; stop it before serving the repositories from a PostgreSQL store`,
    }
  const name = instance === undefined ? 'lock' : instanceLockName(instance)
  const lock = acquireLock(dir, info, name)
  if (!lock.ok)
    return {
      ok: false,
      why: `data directory is in use by pid ${lock.holder.pid} (${lock.holder.kind})${instance === undefined ? '' : ` as instance ${instance}`}`,
    }
  return { ok: true, name, release: lock.release }
}

/** A live instance of a PostgreSQL store serving dir's repositories (one with its address), if any. */
export function liveInstance(dir: string): LockInfo | undefined {
  for (const n of fs.readdirSync(dir)) {
    if (!n.startsWith('lock-')) continue
    const h = lockHolder(dir, n)
    if (h?.kind === 'server' && h.listen !== undefined) return h
  }
  return undefined
}
