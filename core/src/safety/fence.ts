// The text form of a result: a trusted summary line, then repository-derived data between
// fence lines carrying a fresh, unguessable id, so no content can close the fence early.
//
//   <summary>
//   [<note>]…
//   <<<AGENTGIT-DATA <id> kind=<kind>>>>
//   <body, bounded>
//   [ag-mcp: output truncated at N bytes; narrow the request (path, limit, ref) to see the rest]
//   <<<END-AGENTGIT-DATA <id>>>>
//
// N is the number of body bytes kept. The marker line is present only when the body was cut.
// The body is expected sanitized and scrubbed already (the pipeline's earlier stages).

import { sanitizeText } from './sanitize.ts'
import { utf8Prefix } from './bound.ts'

const KIND = /^[a-z][a-z0-9_.-]{0,63}$/

/** What replaces the fence id should the body contain it (it cannot, short of a leak). */
export const FENCE_ID_PLACEHOLDER = '[ag-mcp: fence id removed]'

const ID_BYTES = 16
/** Random bytes drawn ahead, enough for this many ids: one CSPRNG call and no Buffer per call. */
const POOL_IDS = 256
let pool: Buffer | undefined
let poolAt = POOL_IDS * ID_BYTES

/**
 * 128 bits from the CSPRNG, hex; each byte is used once. node:crypto is fetched on first use,
 * not imported: loading it costs about 3 ms of start-up, and server/discover or tools/list never
 * need a fence.
 */
export function newFenceId(): string {
  if (poolAt === POOL_IDS * ID_BYTES) {
    pool ??= Buffer.allocUnsafeSlow(POOL_IDS * ID_BYTES)
    process.getBuiltinModule('node:crypto').randomFillSync(pool)
    poolAt = 0
  }
  const id = (pool as Buffer).toString('hex', poolAt, poolAt + ID_BYTES)
  poolAt += ID_BYTES
  return id
}

export function openFence(id: string, kind: string): string {
  return `<<<AGENTGIT-DATA ${id} kind=${kind}>>>`
}

export function closeFence(id: string): string {
  return `<<<END-AGENTGIT-DATA ${id}>>>`
}

export function truncationMarker(keptBytes: number): string {
  return `[ag-mcp: output truncated at ${keptBytes} bytes; narrow the request (path, limit, ref) to see the rest]`
}

export interface FenceOptions {
  /** One trusted line written by ag-mcp (never repository-derived text). */
  summary: string
  /** The manifest's dataKind; must match ^[a-z][a-z0-9_.-]{0,63}$. */
  kind: string
  body: string
  /** Bound on the WHOLE text in UTF-8 bytes: summary, notes, fences, marker and body. */
  maxBytes: number
  /** Further trusted lines between the summary and the opening fence. */
  notes?: string[]
  /** The fence id; a fresh one (newFenceId) unless given. Tests pass one to simulate a leaked id. */
  id?: string
}

export interface FencedText {
  text: string
  truncated: boolean
  /** The fence id used (fresh per call). */
  id: string
  /** UTF-8 bytes of `text`. */
  bytes: number
}

/** Trusted lines are still forced onto one line each: a stray newline must not fake structure. */
function oneLine(s: string): string {
  return sanitizeText(s).text.replace(/[\n\t]+/g, ' ')
}

export function renderFenced(opts: FenceOptions): FencedText {
  if (!KIND.test(opts.kind))
    throw new TypeError(`invalid data kind ${JSON.stringify(opts.kind)}: must match ${KIND.source}`)
  if (!Number.isSafeInteger(opts.maxBytes) || opts.maxBytes < 0)
    throw new RangeError(`maxBytes must be a non-negative integer, got ${opts.maxBytes}`)
  const id = opts.id ?? newFenceId()
  const lines = [oneLine(opts.summary), ...(opts.notes ?? []).map(oneLine)]
  const head = `${lines.join('\n')}\n${openFence(id, opts.kind)}\n`
  const tail = `\n${closeFence(id)}`
  // The id is 128 random bits, so this never fires unless the id leaked into the data; then the
  // data must still not be able to close (or mimic) this fence.
  const body = opts.body.includes(id) ? opts.body.split(id).join(FENCE_ID_PLACEHOLDER) : opts.body

  const frame = Buffer.byteLength(head, 'utf8') + Buffer.byteLength(tail, 'utf8')
  const bodyBytes = Buffer.byteLength(body, 'utf8')
  if (frame + bodyBytes <= opts.maxBytes) {
    return { text: head + body + tail, truncated: false, id, bytes: frame + bodyBytes }
  }
  // N <= maxBytes, so a marker sized for maxBytes is never shorter than the real one.
  const markerRoom = Buffer.byteLength(`\n${truncationMarker(opts.maxBytes)}`, 'utf8')
  const room = opts.maxBytes - frame - markerRoom
  if (room < 0)
    throw new RangeError(
      `maxBytes ${opts.maxBytes} cannot hold the summary, both fence lines and the truncation marker (${frame + markerRoom} bytes)`,
    )
  const [units, kept] = utf8Prefix(body, room)
  const marker = `\n${truncationMarker(kept)}`
  const text = head + body.slice(0, units) + marker + tail
  return { text, truncated: true, id, bytes: frame + kept + Buffer.byteLength(marker, 'utf8') }
}
