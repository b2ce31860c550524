// The dual-era MCP dispatcher: one JSON-RPC line in, at most one line out per request.
// Requests run concurrently; each in-flight request owns an AbortController so that
// `notifications/cancelled`, shutdown deadlines and the call pipeline all speak one language.
import {
  classify,
  INTERNAL_ERROR,
  INVALID_PARAMS,
  INVALID_REQUEST,
  METHOD_NOT_FOUND,
  PARSE_ERROR,
  UNSUPPORTED_PROTOCOL_VERSION,
} from '../jsonrpc/message.ts'
import type { Incoming, Params, RequestId } from '../jsonrpc/message.ts'
import { RpcError } from './errors.ts'
import type { CallPipeline } from './pipeline-api.ts'
import { decodeCursor, page } from './pagination.ts'
import { CallRequest, LazyAbort } from './lazy-abort.ts'
import { IdTable } from './id-table.ts'
import { Slots } from './slots.ts'
import {
  ALL_REVISIONS,
  eraOf,
  isLegacyRevision,
  LEGACY_FALLBACK,
  META_CAPABILITIES,
  META_SERVER_INFO,
  META_VERSION,
  MODERN_REVISION,
} from './revisions.ts'
import type { Era } from './revisions.ts'
import {
  callResultShape,
  implementationShape,
  promptShape,
  resourceShape,
  resourceTemplateShape,
  toolShape,
} from './shapes.ts'

export interface McpServerOptions {
  pipeline: CallPipeline
  /** Receives each outgoing line (one serialized JSON value). */
  send: (line: OutLine) => void
  pageSize: number
  /** Cache hint for list results, in milliseconds. */
  listTtlMs: number
  /**
   * Answer a request that has neither modern `_meta` nor a prior `initialize` in the legacy
   * fallback revision instead of refusing it, as the peers ag-mcp stands in for do (their
   * clients and tests send tools/call straight away). The process's revision is not fixed by it.
   */
  handshakeOptional?: boolean
  /** How many tools/call and resources/read run at once; more wait their turn. */
  maxConcurrentCalls?: number
  /** Told each time a call finishes (the reader may take more requests). */
  onCallSettled?: () => void
  /** Told about failures that are not protocol errors (bugs): the client only hears "internal error". */
  onInternalError?: (method: string, error: unknown) => void
  /**
   * Applied to every error message and every string of error data before it is written: an
   * error may echo what the client sent (a method, a tool name, a URI), which may hold the token.
   */
  clean?: (s: string) => string
}

/** One outgoing JSON value: a string, or parts (strings and shared buffers) written in order. */
export type OutLine = string | readonly (string | Buffer)[]

export function lineText(line: OutLine): string {
  return typeof line === 'string' ? line : line.map((p) => (typeof p === 'string' ? p : p.toString('utf8'))).join('')
}

/** Methods of other revisions or features this server deliberately does not implement. */
const UNSUPPORTED: Record<string, string> = {
  'logging/setLevel': 'logging is not offered by this server',
  'resources/subscribe': 'resource subscriptions are not offered by this server',
  'resources/unsubscribe': 'resource subscriptions are not offered by this server',
  'subscriptions/listen': 'subscriptions are not offered by this server',
  'completion/complete': 'completions are not offered by this server',
}

const MODERN = eraOf(MODERN_REVISION)
const DEFAULT_CONCURRENT_CALLS = 16
const CANCELLED = 'cancelled by the client'
/** Methods that do real work (an upstream request, rendering): these take a slot. */
const SLOTTED = new Set(['tools/call', 'resources/read'])

interface InFlight {
  /** Cancels the call: aborts it if running, takes it off the queue if waiting for a slot. */
  abort: (reason: Error) => void
  reason: Error | undefined
  done: Promise<void>
}

export class McpServer {
  private legacy: Era | undefined
  private readonly inflight = new IdTable<InFlight>()
  private readonly listCache = new Map<string, Buffer>()
  private readonly slots: Slots
  /** The `_meta` of every modern result (who answered): the same each time. */
  private modernMeta: Record<string, unknown> | undefined
  /** Ids cancelled before their request was read (see cancelAhead). */
  private readonly cancelledAhead = new Set<RequestId>()

  constructor(private readonly opts: McpServerOptions) {
    this.slots = new Slots(opts.maxConcurrentCalls ?? DEFAULT_CONCURRENT_CALLS)
  }

  get inFlightCount(): number {
    return this.inflight.size
  }

  /**
   * A line that may be a `notifications/cancelled`, offered out of order, ahead of requests
   * not yet dispatched (the reader holds requests back while too many calls run or stdout is
   * full). Not a cancel notification: undefined, and the line stays in its place. A cancel:
   * it aborts the call if it runs, and otherwise makes the request it names, once dispatched,
   * go unanswered. The function returned is to be called when reading reaches the cancel's own
   * place: a request that was not ahead of it by then (already answered, or not sent yet) must
   * not be suppressed later because its id is reused.
   */
  cancelAhead(text: string): (() => void) | undefined {
    let msg: unknown
    try {
      msg = JSON.parse(text)
    } catch {
      return undefined
    }
    if (!isObject(msg) || 'id' in msg || msg['method'] !== 'notifications/cancelled') return undefined
    const id = isObject(msg['params']) ? msg['params']['requestId'] : undefined
    if (typeof id !== 'string' && typeof id !== 'number') return () => {} // a malformed cancel: nothing to do, now or later
    const running = this.inflight.get(id)
    if (running) {
      running.abort(new Error(CANCELLED))
      return () => {}
    }
    this.cancelledAhead.add(id)
    if (this.cancelledAhead.size > 1024)
      this.cancelledAhead.delete(this.cancelledAhead.values().next().value as RequestId)
    return () => void this.cancelledAhead.delete(id)
  }

  /** The revision `initialize` selected for this process, if any. */
  get legacyRevision(): string | undefined {
    return this.legacy?.revision
  }

  /** Handles one framed line. */
  handleLine(text: string): void {
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch (e) {
      this.sendError(null, PARSE_ERROR, `Parse error: ${parseProblem(e)}`)
      return
    }
    if (Array.isArray(value)) {
      this.handleBatch(value)
      return
    }
    const msg = classify(value)
    void this.dispatch(msg, (line) => this.opts.send(line))
  }

  /** Answers an oversized line that was discarded unread. */
  rejectOversize(id: RequestId | null, bytes: number, limit: number): void {
    this.sendError(
      id,
      INVALID_REQUEST,
      `Invalid Request: message of ${bytes} bytes exceeds the ${limit}-byte limit (--max-message-bytes); it was discarded`,
    )
  }

  /** Resolves when every in-flight request has answered (or been cancelled). */
  async drain(): Promise<void> {
    while (this.inflight.size > 0) await Promise.all(this.inflight.values().map((f) => f.done))
  }

  /** Aborts everything still running (shutdown deadline passed). */
  abortAll(reason: string): void {
    for (const f of this.inflight.values()) f.abort(new Error(reason))
  }

  private handleBatch(items: unknown[]): void {
    const era = this.legacy
    if (!era || !era.batches) {
      const why = era
        ? `revision ${era.revision} does not allow JSON-RPC batches`
        : 'JSON-RPC batches are only accepted after initialize selects revision 2025-03-26'
      this.sendError(null, INVALID_REQUEST, `Invalid Request: ${why}; send one message per line`)
      return
    }
    if (items.length === 0) {
      this.sendError(null, INVALID_REQUEST, 'Invalid Request: empty batch')
      return
    }
    const replies: string[] = []
    const pending = items.map((item) => {
      const msg = classify(item)
      if (msg.kind === 'request' && msg.method === 'initialize') {
        return Promise.resolve(
          replies.push(
            this.errorLine(msg.id, INVALID_REQUEST, 'Invalid Request: initialize must not be part of a batch'),
          ),
        )
      }
      return this.dispatch(msg, (line) => replies.push(lineText(line)))
    })
    void Promise.all(pending).then(() => {
      if (replies.length > 0) this.opts.send(`[${replies.join(',')}]`)
    })
  }

  private dispatch(msg: Incoming, reply: (line: OutLine) => void): Promise<void> | undefined {
    switch (msg.kind) {
      case 'response':
        return undefined // the server sends no requests, so a response answers nothing
      case 'invalid':
        reply(this.errorLine(msg.id, msg.code, msg.message))
        return undefined
      case 'notification':
        this.notification(msg.method, msg.params)
        return undefined
      case 'request':
        return this.request(msg.id, msg.method, msg.params, reply)
    }
  }

  private notification(method: string, params: Params | undefined): void {
    if (method === 'notifications/cancelled') {
      const id = params?.['requestId']
      if (typeof id === 'string' || typeof id === 'number') this.inflight.get(id)?.abort(new Error(CANCELLED))
    }
    // notifications/initialized and anything else: nothing to do, and never an answer.
  }

  private request(
    id: RequestId,
    method: string,
    params: Params | undefined,
    reply: (line: OutLine) => void,
  ): Promise<void> | undefined {
    if (this.cancelledAhead.delete(id)) return undefined
    if (this.inflight.has(id)) {
      reply(
        this.errorLine(
          id,
          INVALID_REQUEST,
          `Invalid Request: id ${JSON.stringify(id)} is already in use by a request in flight`,
        ),
      )
      return undefined
    }
    // Everything but a call is answered at once, from memory: no controller, no promise, no
    // in-flight entry (a burst of lists or pings then makes almost no garbage).
    if (!SLOTTED.has(method)) {
      reply(this.answer(id, method, params, (era, p) => this.immediate(era, method, p)))
      return undefined
    }
    return this.call(id, method, params, reply)
  }

  /** A tools/call or resources/read: cancellable, and bounded in how many run at once. */
  private async call(
    id: RequestId,
    method: string,
    params: Params | undefined,
    reply: (line: OutLine) => void,
  ): Promise<void> {
    let finish!: () => void
    const entry: InFlight = {
      abort: (r) => (entry.reason ??= r),
      reason: undefined,
      done: new Promise<void>((r) => (finish = r)),
    }
    const cancelled = (): boolean => entry.reason?.message === CANCELLED
    this.inflight.set(id, entry)
    try {
      if (!this.slots.tryAcquire()) {
        const wait = this.slots.wait()
        entry.abort = (r) => {
          entry.reason ??= r
          wait.cancel()
        }
        if (!(await wait.ready)) {
          if (!cancelled())
            reply(
              this.errorLine(id, INTERNAL_ERROR, 'Internal error: ag-mcp is shutting down; the call was not started'),
            )
          return
        }
      }
      try {
        if (entry.reason) throw entry.reason // cancelled between getting the slot and starting
        const cancel = new LazyAbort()
        entry.abort = (r) => {
          entry.reason ??= r
          cancel.abort(r)
        }
        const line = await this.answerLater(id, method, params, cancel)
        if (!cancelled()) reply(line)
      } catch (e) {
        if (!cancelled()) reply(this.failureLine(id, method, e))
      } finally {
        this.slots.release()
      }
    } finally {
      this.inflight.delete(id)
      finish()
      this.opts.onCallSettled?.()
    }
  }

  /** Produces the response line for a request answered at once. */
  private answer(
    id: RequestId,
    method: string,
    params: Params | undefined,
    run: (era: Era, params: Params) => Record<string, unknown> | Buffer,
  ): OutLine {
    try {
      const era = this.eraFor(method, params)
      return this.resultLine(id, era, run(era, params ?? {}))
    } catch (e) {
      return this.failureLine(id, method, e)
    }
  }

  /** Produces the response line for a call. */
  private async answerLater(
    id: RequestId,
    method: string,
    params: Params | undefined,
    cancel: LazyAbort,
  ): Promise<OutLine> {
    try {
      const era = this.eraFor(method, params)
      return this.resultLine(id, era, await this.work(era, method, params ?? {}, id, cancel))
    } catch (e) {
      return this.failureLine(id, method, e)
    }
  }

  private resultLine(id: RequestId, era: Era, result: Record<string, unknown> | Buffer): OutLine {
    if (Buffer.isBuffer(result)) return [`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":`, result, '}']
    return resultLine(id, JSON.stringify(this.wrap(era, result)))
  }

  private failureLine(id: RequestId, method: string, e: unknown): string {
    if (e instanceof RpcError) return this.errorLine(id, e.code, e.message, e.data)
    this.opts.onInternalError?.(method, e)
    return this.errorLine(id, INTERNAL_ERROR, 'Internal error: the request failed inside ag-mcp (see its log)')
  }

  /** Which era serves this request, or why none does. */
  private eraFor(method: string, params: Params | undefined): Era {
    const meta = params?.['_meta']
    const version = isObject(meta) ? meta[META_VERSION] : undefined
    if (version !== undefined) {
      if (version !== MODERN_REVISION) {
        const requested = describeVersion(version, this.opts.clean)
        const hint = isLegacyRevision(version)
          ? `revision ${version} is negotiated with initialize, not per request: send initialize for it, or use ${MODERN_REVISION} in _meta`
          : `unsupported protocol version ${requested}; per-request _meta supports ${MODERN_REVISION}`
        throw new RpcError(UNSUPPORTED_PROTOCOL_VERSION, `Unsupported protocol version: ${hint}`, {
          supported: [MODERN_REVISION],
          requested,
        })
      }
      if (!isObject((meta as Record<string, unknown>)[META_CAPABILITIES])) {
        throw new RpcError(
          INVALID_PARAMS,
          `Invalid params: _meta["${META_CAPABILITIES}"] is required on every ${MODERN_REVISION} request (an empty object declares no capabilities)`,
        )
      }
      return MODERN
    }
    if (method === 'initialize') return eraOf(LEGACY_FALLBACK) // refined by initialize itself
    if (this.legacy) return this.legacy
    if (method === 'ping') return MODERN
    if (this.opts.handshakeOptional) return eraOf(LEGACY_FALLBACK)
    throw new RpcError(
      INVALID_PARAMS,
      `Invalid params: _meta["${META_VERSION}"] and _meta["${META_CAPABILITIES}"] are required on every ${MODERN_REVISION} request; clients of ${ALL_REVISIONS.slice(1).join(', ')} must send initialize first`,
    )
  }

  /** Methods answered from memory. */
  private immediate(era: Era, method: string, params: Params): Record<string, unknown> | Buffer {
    const pipeline = this.opts.pipeline
    switch (method) {
      case 'ping':
        return {}
      case 'initialize':
        // 2026-07-28 has no handshake: a request carrying modern _meta must not switch the
        // process to a legacy revision (nor get a result its schema does not define).
        if (era.modern)
          throw new RpcError(
            METHOD_NOT_FOUND,
            `Method not found: initialize (${MODERN_REVISION} has no handshake; use server/discover, or send initialize without modern _meta)`,
          )
        return this.initialize(params)
      case 'server/discover':
        if (!era.modern) break
        return {
          supportedVersions: ALL_REVISIONS,
          capabilities: { tools: {}, resources: {}, prompts: {} },
          instructions: pipeline.instructions,
          ttlMs: this.opts.listTtlMs,
          cacheScope: 'private',
        }
      case 'tools/list':
        return this.cachedList(era, 'tools', params['cursor'], () => pipeline.tools().map((t) => toolShape(era, t)))
      case 'resources/list':
        return this.cachedList(era, 'resources', params['cursor'], () =>
          pipeline.resources().map((r) => resourceShape(era, r)),
        )
      case 'resources/templates/list':
        return this.cachedList(era, 'resourceTemplates', params['cursor'], () =>
          pipeline.resourceTemplates().map((r) => resourceTemplateShape(era, r)),
        )
      case 'prompts/list':
        return this.cachedList(era, 'prompts', params['cursor'], () =>
          pipeline.prompts().map((p) => promptShape(era, p)),
        )
      case 'prompts/get': {
        const name = params['name']
        if (typeof name !== 'string')
          throw new RpcError(INVALID_PARAMS, 'Invalid params: prompts/get needs "name" (a string)')
        const args = params['arguments'] ?? {}
        if (!isObject(args) || Object.values(args).some((v) => typeof v !== 'string')) {
          throw new RpcError(INVALID_PARAMS, 'Invalid params: prompts/get "arguments" must be an object of strings')
        }
        return { ...pipeline.getPrompt(name, args as Record<string, string>) }
      }
    }
    const why =
      UNSUPPORTED[method] ??
      (method.startsWith('tasks/') ? 'the tasks extension is not offered by this server' : undefined)
    throw new RpcError(METHOD_NOT_FOUND, `Method not found: ${method}${why ? ` (${why})` : ''}`)
  }

  /** Methods that do real work: a plugin, an upstream. */
  private async work(
    era: Era,
    method: string,
    params: Params,
    id: RequestId,
    cancel: LazyAbort,
  ): Promise<Record<string, unknown>> {
    const pipeline = this.opts.pipeline
    const opts = new CallRequest(cancel, era.structured, id)
    switch (method) {
      case 'tools/call': {
        const name = params['name']
        if (typeof name !== 'string')
          throw new RpcError(INVALID_PARAMS, 'Invalid params: tools/call needs "name" (a string)')
        const args = params['arguments'] ?? {}
        const outcome = await pipeline.callTool(name, args, opts)
        return callResultShape(era, outcome)
      }
      case 'resources/read': {
        const uri = params['uri']
        if (typeof uri !== 'string')
          throw new RpcError(INVALID_PARAMS, 'Invalid params: resources/read needs "uri" (a string)')
        const contents = await pipeline.readResource(uri, opts)
        return era.modern ? { contents, ttlMs: 0, cacheScope: 'private' } : { contents }
      }
    }
    throw new RpcError(METHOD_NOT_FOUND, `Method not found: ${method}`)
  }

  private initialize(params: Params): Record<string, unknown> {
    const requested = params['protocolVersion']
    if (!this.legacy) this.legacy = eraOf(isLegacyRevision(requested) ? requested : LEGACY_FALLBACK)
    const era = this.legacy
    return {
      protocolVersion: era.revision,
      capabilities: { tools: {}, resources: {}, prompts: {} },
      serverInfo: implementationShape(era, this.opts.pipeline.identity),
      instructions: this.opts.pipeline.instructions,
    }
  }

  /** List results never change within a process, so each page is serialized once per era. */
  private cachedList(era: Era, list: string, cursor: unknown, items: () => Record<string, unknown>[]): Buffer {
    // A cursor that is not a string, or is "", must not share the cache entry of "no cursor".
    if (cursor !== undefined && typeof cursor !== 'string') decodeCursor(list, cursor) // throws -32602
    const key = `${era.revision}|${list}|${cursor === undefined ? '' : `c${cursor}`}`
    let json = this.listCache.get(key)
    if (json === undefined) {
      const p = page(list, items(), cursor, this.opts.pageSize)
      const result: Record<string, unknown> = { [list]: p.items }
      if (p.nextCursor !== undefined) result['nextCursor'] = p.nextCursor
      if (era.modern) {
        result['ttlMs'] = this.opts.listTtlMs
        result['cacheScope'] = 'private'
      }
      // Kept as bytes: every answer reuses them, so a burst of lists creates no large garbage.
      json = Buffer.from(JSON.stringify(this.wrap(era, result)), 'utf8')
      if (this.listCache.size < 256) this.listCache.set(key, json)
    }
    return json
  }

  /**
   * Modern results all say they are complete and who answered. Built key by key: a spread
   * (`{ ...result, resultType }`) of a call's result got a new hidden class (map and descriptor
   * array, in the old generation) on every call, megabytes of garbage under a burst.
   */
  private wrap(era: Era, result: Record<string, unknown>): Record<string, unknown> {
    if (!era.modern) return result
    const out: Record<string, unknown> = {}
    for (const key of Object.keys(result)) out[key] = result[key]
    out['resultType'] = 'complete'
    this.modernMeta ??= { [META_SERVER_INFO]: implementationShape(era, this.opts.pipeline.identity) }
    const meta = this.modernMeta
    const own = result['_meta']
    out['_meta'] = isObject(own) ? { ...own, ...meta } : meta
    return out
  }

  private sendError(id: RequestId | null, code: number, message: string): void {
    this.opts.send(this.errorLine(id, code, message))
  }

  /** Every error this server writes, cleaned (see McpServerOptions.clean). */
  private errorLine(id: RequestId | null, code: number, message: string, data?: unknown): string {
    const clean = this.opts.clean
    if (clean === undefined) return errorLine(id, code, message, data)
    const cleanData =
      data === undefined
        ? undefined
        : (JSON.parse(JSON.stringify(data), (_k, v: unknown) => (typeof v === 'string' ? clean(v) : v)) as unknown)
    return errorLine(id, code, clean(message), cleanData)
  }
}

/**
 * Why a line is not JSON, without V8's quote of the line itself (which may hold part of a
 * secret too short to be recognised once cut out of its context).
 */
function parseProblem(e: unknown): string {
  const m = e instanceof Error ? e.message : ''
  return m === '' || /["'`]/.test(m) ? 'the line is not valid JSON' : m
}

/** The requested version as data.requested (a string): clipped, and never a deep serialization of junk. */
function describeVersion(v: unknown, clean: (s: string) => string = (s) => s): string {
  // cleaned before it is cut: a cut through a secret would leave a part too short to recognise
  if (typeof v === 'string') {
    const c = clean(v)
    return c.length > 64 ? `${c.slice(0, 64)}…` : c
  }
  if (typeof v === 'number' || typeof v === 'boolean' || v === null) return String(v)
  return Array.isArray(v) ? '(an array)' : '(an object)'
}

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x)
}

function resultLine(id: RequestId, resultJson: string): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${resultJson}}`
}

export function errorLine(id: RequestId | null, code: number, message: string, data?: unknown): string {
  const error: Record<string, unknown> = { code, message }
  if (data !== undefined) error['data'] = data
  return JSON.stringify({ jsonrpc: '2.0', id, error })
}
