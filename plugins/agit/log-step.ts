// agit_log_step: AGIT's parameters, rules and texts (batch preferred, single mode deprecated),
// with three repairs: nothing is written when the call fails, all accepted entries go in one
// locked append (several processes may log at once), and a location may name a file the agent
// wrote into a workspace of this session (asked of the workspace group: it is not in the work
// tree until a person integrates it), with a hint that says so instead of AGIT's "use cd".
import type { Entry, Location } from './entry.ts'
import { checkLocation, isPlainRelative, sameRepository } from './locations.ts'
import type { LocationCheck } from './locations.ts'
import type { AgitRepo } from './repo.ts'
import { NOT_INITIALIZED } from './repo.ts'
import { truncateChars } from './text.ts'
import type { ToolText } from './tool-text.ts'

export interface LocationArg {
  file: string
  start_line?: number
  end_line?: number
}

export interface EntryArg {
  role: string
  category: string
  content: string
  locations?: LocationArg[]
  file_path?: string
  line_number?: number
}

export interface LogStepArgs extends Partial<EntryArg> {
  batch?: EntryArg[]
  repo_path?: string
}

const SINGLE_REPO = 'Agit is a single-repo tool.'
/** The hint when every refused location named a file that does not exist (here or in a workspace). */
const ONLY_EXISTING =
  'Only existing files can be referenced: a file of this repository, or one a workspace of this session holds (write it there first).'

/** Which of these repository paths a workspace of this session holds (none when nobody answers). */
export type WorkspaceFiles = (paths: string[]) => Promise<ReadonlySet<string>>

type Check = (file: string) => LocationCheck
const MCP_CATEGORIES = ['intent', 'reasoning', 'error']

const plural = (n: number, one: string, many: string) => (n === 1 ? one : many)

/**
 * The schema checks what it declares; AGIT also accepts fields it does not declare (top-level
 * `locations`, legacy `file_path`/`line_number`). Those are checked here, with AGIT's wording.
 */
export function checkUndeclared(raw: Readonly<Record<string, unknown>>): string | undefined {
  const bad = (o: Readonly<Record<string, unknown>>, at: string): string | undefined => {
    if (o.locations !== undefined) {
      if (!Array.isArray(o.locations)) return `${at}locations: expected an array`
      for (const l of o.locations as unknown[]) {
        const r = l as Record<string, unknown>
        if (typeof r !== 'object' || r === null || typeof r.file !== 'string')
          return `${at}locations: each needs a string file`
        for (const k of ['start_line', 'end_line'])
          if (r[k] !== undefined && !(Number.isInteger(r[k]) && (r[k] as number) >= 0))
            return `${at}locations: ${k} must be a non-negative integer`
      }
    }
    if (o.file_path !== undefined && typeof o.file_path !== 'string') return `${at}file_path: expected a string`
    if (o.line_number !== undefined && !(Number.isInteger(o.line_number) && (o.line_number as number) >= 0))
      return `${at}line_number: expected a non-negative integer`
    return undefined
  }
  const top = bad(raw, '')
  if (top) return `Invalid parameters: ${top}`
  if (Array.isArray(raw.batch))
    for (const [i, e] of (raw.batch as unknown[]).entries()) {
      const r = bad(e as Record<string, unknown>, `batch[${i}].`)
      if (r) return `Invalid parameters: ${r}`
    }
  return undefined
}

export async function logStep(
  repo: AgitRepo,
  args: LogStepArgs,
  now = () => Math.floor(Date.now() / 1000),
  inWorkspace: WorkspaceFiles = async () => new Set(),
): Promise<ToolText> {
  if (!repo.initialized) return { text: NOT_INITIALIZED, isError: true, code: 'not_initialized' }
  const invalid = checkUndeclared(args as unknown as Record<string, unknown>)
  if (invalid) return { text: invalid, isError: true }
  if (args.repo_path !== undefined) {
    const same = await sameRepository(repo.root, args.repo_path)
    if (!same.ok) return { text: same.error, isError: true }
  }
  await repo.ensureSync().catch(() => {}) // AGIT: a failed sync only warns
  const check = await locator(repo.root, args, inWorkspace)
  if (args.batch !== undefined) return logBatch(repo, args.batch, now, check)
  if (args.role !== undefined && args.category !== undefined && args.content !== undefined)
    return logSingle(repo, args as EntryArg, now, check)
  return { text: "Invalid parameters: provide either 'batch' array or 'role', 'category', 'content'", isError: true }
}

/**
 * Every file the call names, checked once against the work tree; the missing ones that could be
 * repository paths are asked about in one ask, and a workspace's file counts as existing.
 */
async function locator(root: string, args: LogStepArgs, inWorkspace: WorkspaceFiles): Promise<Check> {
  const files = new Set<string>()
  for (const e of [args, ...(args.batch ?? [])]) {
    for (const l of e.locations ?? []) files.add(l.file)
    if (e.file_path !== undefined) files.add(e.file_path)
  }
  const checked = new Map(await Promise.all([...files].map(async (f) => [f, await checkLocation(root, f)] as const)))
  const ask = [...checked].filter(([f, c]) => !c.ok && c.missing && isPlainRelative(f)).map(([f]) => f)
  const present = ask.length > 0 ? await inWorkspace(ask.slice(0, 100)) : new Set<string>()
  return (f) => (present.has(f) ? { ok: true } : (checked.get(f) as LocationCheck))
}

function validLocations(check: Check, locs: readonly LocationArg[]) {
  const valid: Location[] = []
  const invalid: string[] = []
  let missingOnly = true
  for (const l of locs) {
    const c = check(l.file)
    if (c.ok)
      valid.push({
        file: l.file,
        ...(l.start_line !== undefined ? { start_line: l.start_line } : {}),
        ...(l.end_line !== undefined ? { end_line: l.end_line } : {}),
      })
    else {
      invalid.push(`${l.file}: ${c.error}`)
      missingOnly &&= c.missing
    }
  }
  return { valid, invalid, missingOnly }
}

function entryOf(e: EntryArg, at: number, locations: Location[] | undefined, legacy: boolean): Entry {
  return {
    role: e.role.toLowerCase(),
    category: e.category.toLowerCase(),
    content: e.content,
    timestamp: at,
    ...(locations && locations.length > 0 ? { locations } : {}),
    ...(legacy && e.file_path !== undefined ? { file_path: e.file_path } : {}),
    ...(legacy && e.line_number !== undefined ? { line_number: e.line_number } : {}),
  }
}

async function logBatch(
  repo: AgitRepo,
  batch: readonly EntryArg[],
  now: () => number,
  check: Check,
): Promise<ToolText> {
  if (batch.length === 0) return { text: 'No entries to log' }
  const accepted: Entry[] = []
  const errors: string[] = []
  const skipped: string[] = []
  let rejected = 0
  let missingOnly = true
  for (const e of batch) {
    let locations: Location[] | undefined
    let legacy = false
    if (e.locations !== undefined) {
      const { valid, invalid, missingOnly: missing } = validLocations(check, e.locations)
      skipped.push(...invalid)
      missingOnly &&= missing
      if (e.locations.length > 0 && valid.length === 0) {
        rejected++
        continue
      }
      locations = valid
    } else if (e.file_path !== undefined) {
      const c = check(e.file_path)
      if (!c.ok) {
        skipped.push(`${e.file_path}: ${c.error}`)
        missingOnly &&= c.missing
        continue
      }
      legacy = true
    }
    if (!['user', 'ai'].includes(e.role.toLowerCase())) {
      errors.push(`Invalid role '${e.role}'`)
      continue
    }
    if (!MCP_CATEGORIES.includes(e.category.toLowerCase())) {
      errors.push(`Invalid category '${e.category}'`)
      continue
    }
    accepted.push(entryOf(e, now(), locations, legacy))
  }
  try {
    await repo.append(accepted)
  } catch (err) {
    return { text: `Failed to log: ${(err as Error).message}`, isError: true, code: 'failed' }
  }
  const n = accepted.length
  const logged = `Logged ${n} ${plural(n, 'entry', 'entries')}`
  if (rejected > 0 || skipped.length > 0) {
    const lines: string[] = []
    if (rejected > 0)
      lines.push(
        `⛔ ${rejected} ${plural(rejected, 'entry', 'entries')} rejected (${missingOnly ? 'no location names an existing file' : 'all locations outside repository scope'})`,
      )
    if (skipped.length > 0) {
      lines.push(`⚠️ ${skipped.length} ${plural(skipped.length, 'location', 'locations')} skipped:`)
      for (const s of skipped) lines.push(`  - ${s}`)
    }
    const hint = missingOnly
      ? ONLY_EXISTING
      : `${SINGLE_REPO} Use \`cd\` to switch to the correct repository before logging context for those files.`
    const message = `${lines.join('\n')}\n\n${hint}`
    if (n === 0 && errors.length === 0) return { text: message, isError: true }
    const errs = errors.length > 0 ? ` ${errors.length} errors: ${errors.join('; ')}` : ''
    return { text: `${logged}.${errs}\n${message}` }
  }
  if (errors.length === 0) return { text: logged }
  if (n > 0) return { text: `${logged} with ${errors.length} errors: ${errors.join('; ')}` }
  return { text: `All entries failed: ${errors.join('; ')}`, isError: true }
}

async function logSingle(repo: AgitRepo, e: EntryArg, now: () => number, check: Check): Promise<ToolText> {
  let locations: Location[] | undefined
  let legacy = false
  if (e.locations !== undefined) {
    const { valid, invalid, missingOnly } = validLocations(check, e.locations)
    if (e.locations.length > 0 && valid.length === 0)
      return {
        text: `⛔ All paths rejected:\n${invalid.join('\n')}\n\n${missingOnly ? ONLY_EXISTING : SINGLE_REPO}`,
        isError: true,
      }
    locations = valid
  } else if (e.file_path !== undefined) {
    const c = check(e.file_path)
    if (!c.ok)
      return { text: `⛔ Path rejected: ${c.error}\n\n${c.missing ? ONLY_EXISTING : SINGLE_REPO}`, isError: true }
    legacy = true
  }
  if (!['user', 'ai'].includes(e.role.toLowerCase()))
    return { text: `Invalid role '${e.role}'. Must be 'user' or 'ai'`, isError: true }
  if (!MCP_CATEGORIES.includes(e.category.toLowerCase()))
    return { text: `Invalid category '${e.category}'. Must be 'intent', 'reasoning', or 'error'`, isError: true }
  try {
    await repo.append([entryOf(e, now(), locations, legacy)])
  } catch (err) {
    return { text: `Failed to log step: ${(err as Error).message}`, isError: true, code: 'failed' }
  }
  return { text: `Logged: [${e.role}/${e.category}] ${truncateChars(e.content, 50)}` }
}
