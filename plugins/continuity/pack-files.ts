// File primitives with Agentpack's rules: files 0600 and directories 0700 (ledger content can
// carry command output; owner-only on shared machines), JSON written to a temp file and
// renamed, ledger lines appended with one O_APPEND write each (a line is never torn, and the
// pack lock serialises writers across processes). Everything is asynchronous: a slow disk
// never holds up another request.
import { randomBytes } from 'node:crypto'
import { appendFile, mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises'
import { dirname, join } from 'node:path'

export const PACK_DIR = '.agentpack'
export const FILE_MODE = 0o600
export const DIR_MODE = 0o700
/** Passport, state, config and sources schema; Agentpack refuses any other on read. */
export const SCHEMA_VERSION = 1

export function packPath(root: string, ...parts: string[]): string {
  return join(root, PACK_DIR, ...parts)
}

/** `prefix_<ISO stamp with : and . as ->_<6 hex>`, as Agentpack makes them. */
export function createId(prefix: string, now = new Date()): string {
  return `${prefix}_${stamp(now)}_${randomBytes(3).toString('hex')}`
}

/** The ISO time with `:` and `.` replaced by `-` (checkpoint directory names, id stamps). */
export function stamp(now = new Date()): string {
  return now.toISOString().replace(/[:.]/g, '-')
}

export function isMissing(e: unknown): boolean {
  return (e as NodeJS.ErrnoException)?.code === 'ENOENT'
}

/** The parsed file, or `fallback` when it does not exist (a corrupt file is an error, never a default). */
export async function readJson<T>(file: string, fallback: T): Promise<T> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (e) {
    if (isMissing(e)) return fallback
    throw e
  }
  return JSON.parse(text) as T
}

export async function readText(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8')
  } catch (e) {
    if (isMissing(e)) return undefined
    throw e
  }
}

export function jsonText(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`
}

export async function ensureDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: DIR_MODE })
}

export async function writeTextAtomic(file: string, content: string): Promise<void> {
  const temp = join(
    dirname(file),
    `.${file.slice(dirname(file).length + 1)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`,
  )
  try {
    await writeFile(temp, content, { encoding: 'utf8', mode: FILE_MODE })
    await rename(temp, file)
  } catch (e) {
    await unlink(temp).catch(() => undefined)
    throw e
  }
}

export function writeJson(file: string, value: unknown): Promise<void> {
  return writeTextAtomic(file, jsonText(value))
}

/** Creates the file; refuses (EEXIST) when something is already there. */
export async function writeNew(file: string, content: string): Promise<void> {
  await writeFile(file, content, { encoding: 'utf8', mode: FILE_MODE, flag: 'wx' })
}

/** One write of whole lines with O_APPEND: concurrent appenders interleave lines, never bytes. */
export async function appendLines(file: string, lines: readonly string[]): Promise<void> {
  if (lines.length === 0) return
  await appendFile(file, `${lines.join('\n')}\n`, { encoding: 'utf8', mode: FILE_MODE, flag: 'a' })
}

export async function writeFilePrivate(file: string, content: string): Promise<void> {
  await writeFile(file, content, { encoding: 'utf8', mode: FILE_MODE })
}
