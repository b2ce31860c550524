// The dual-era MCP dispatcher: one JSON-RPC line in, at most one line out per request.
// Requests run concurrently; each in-flight request owns an AbortController so that
// `notifications/cancelled`, shutdown deadlines and the call pipeline all speak one language.
import { protocolError } from '../errors.ts'
import { classify } from '../jsonrpc/message.ts'
import type { Incoming, Params, RequestId } from '../jsonrpc/message.ts'
import { lineText } from '../jsonrpc/writer.ts'
import type { LineParts } from '../jsonrpc/writer.ts'
import { RpcError } from './errors.ts'
import { InFlightCalls } from './in-flight.ts'
import { CallRequest } from './lazy-abort.ts'
import type { LazyAbort } from './lazy-abort.ts'
import { ListCache } from './list-cache.ts'
import { isObject, Negotiation } from './negotiation.ts'
import type { CallPipeline } from './pipeline-api.ts'
import { ALL_REVISIONS, META_SERVER_INFO } from './revisions.ts'
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
  send: (line: LineParts) => void
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

/** Methods of other revisions or features this server deliberately does not implement. */
const UNSUPPORTED: Record<string, string> = {
  'logging/setLevel': 'logging is not offered by this server',
  'resources/subscribe': 'resource subscriptions are not offered by this server',
  'resources/unsubscribe': 'resource subscriptions are not offered by this server',
  'subscriptions/listen': 'subscriptions are not offered by this server',
  'completion/complete': 'completions are not offered by this server',
}

/** A result: an object, or a list page kept as its JSON bytes (see ListCache). */
type Answer = Record<string, unknown> | Buffer

const DEFAULT_CONCURRENT_CALLS = 16
/** Methods that do real work (an upstream request, rendering): these take a slot. */
const SLOTTED = new Set(['tools/call', 'resources/read'])

export class McpServer {
  private readonly negotiation: Negotiation
  private readonly lists: ListCache
  private readonly calls: InFlightCalls
  /** The `_meta` of every modern result (who answered): the same each time. */
  private modernMeta: Record<string, unknown> | undefined

  constructor(private readonly opts: McpServerOptions) {
    this.negotiation = new Negotiation(opts.handshakeOptional ?? false, opts.clean)
    this.lists = new ListCache(opts.pageSize, opts.listTtlMs, (era, result) => this.wrap(era, result))
    this.calls = new InFlightCalls(opts.maxConcurrentCalls ?? DEFAULT_CONCURRENT_CALLS, {
      work: async (id, method, params, cancel) =>
        this.answer(id, method, params, (era, p) => this.work(era, method, p, id, cancel)),
      failed: (id, method, e) => this.failureLine(id, method, e),
      notStarted: (id) => this.errorLine(id, protocolError('shutting_down')),
      settled: opts.onCallSettled,
    })
  }

  get inFlightCount(): number {
    return this.calls.size
  }

  /**
   * A line that may be a `notifications/cancelled`, offered out of order, ahead of requests
   * not yet dispatched (the reader holds requests back while too many calls run or stdout is
   * full). Not a cancel notification: undefined, and the line stays in its place. A cancel:
   * see InFlightCalls.cancelAhead, which also says when to call the function returned.
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
    return this.calls.cancelAhead(id)
  }

  /** The revision `initialize` selected for this process, if any. */
  get legacyRevision(): string | undefined {
    return this.negotiation.legacy?.revision
  }

  /** Handles one framed line. */
  handleLine(text: string): void {
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch (e) {
      this.opts.send(this.errorLine(null, protocolError('parse_error', { problem: parseProblem(e) })))
      return
    }
    if (Array.isArray(value)) {
      this.handleBatch(value)
      return
    }
    void this.dispatch(classify(value), (line) => this.opts.send(line))
  }

  /** Answers an oversized line that was discarded unread. */
  rejectOversize(id: RequestId | null, bytes: number, limit: number): void {
    this.opts.send(this.errorLine(id, protocolError('oversize', { bytes, limit })))
  }

  /** Resolves when every in-flight request has answered (or been cancelled). */
  drain(): Promise<void> {
    return this.calls.drain()
  }

  /** Aborts everything still running (shutdown deadline passed). */
  abortAll(reason: string): void {
    this.calls.abortAll(reason)
  }

  private handleBatch(items: unknown[]): void {
    const era = this.negotiation.legacy
    if (!era || !era.batches) {
      const why = era
        ? `revision ${era.revision} does not allow JSON-RPC batches`
        : 'JSON-RPC batches are only accepted after initialize selects revision 2025-03-26'
      this.opts.send(this.errorLine(null, protocolError('batch_refused', { why })))
      return
    }
    if (items.length === 0) {
      this.opts.send(this.errorLine(null, protocolError('batch_empty')))
      return
    }
    const replies: string[] = []
    const pending = items.map((item) => {
      const msg = classify(item)
      if (msg.kind === 'request' && msg.method === 'initialize') {
        replies.push(this.errorLine(msg.id, protocolError('batch_initialize')))
        return undefined
      }
      return this.dispatch(msg, (line) => replies.push(lineText(line)))
    })
    void Promise.all(pending).then(() => {
      if (replies.length > 0) this.opts.send(`[${replies.join(',')}]`)
    })
  }

  private dispatch(msg: Incoming, reply: (line: LineParts) => void): Promise<void> | undefined {
    switch (msg.kind) {
      case 'response':
        return undefined // the server sends no requests, so a response answers nothing
      case 'invalid':
        reply(this.errorLine(msg.id, new RpcError(msg.code, msg.message)))
        return undefined
      case 'notification':
        if (msg.method === 'notifications/cancelled') {
          const id = msg.params?.['requestId']
          if (typeof id === 'string' || typeof id === 'number') this.calls.cancel(id)
        }
        // notifications/initialized and anything else: nothing to do, and never an answer.
        return undefined
      case 'request':
        return this.request(msg.id, msg.method, msg.params, reply)
    }
  }

  private request(
    id: RequestId,
    method: string,
    params: Params | undefined,
    reply: (line: LineParts) => void,
  ): Promise<void> | undefined {
    if (this.calls.takeCancelledAhead(id)) return undefined
    if (this.calls.has(id)) {
      reply(this.errorLine(id, protocolError('id_in_use', { id: JSON.stringify(id) })))
      return undefined
    }
    // Everything but a call is answered at once, from memory: no controller, no promise, no
    // in-flight entry (a burst of lists or pings then makes almost no garbage).
    if (!SLOTTED.has(method)) {
      reply(this.answer(id, method, params, (era, p) => this.immediate(era, method, p)))
      return undefined
    }
    return this.calls.run(id, method, params, reply)
  }

  /**
   * The response line for a request: what `run` gives, in the request's era, or the error it
   * (or the negotiation) threw. Synchronous when `run` is: a request answered from memory
   * makes no promise.
   */
  private answer(
    id: RequestId,
    method: string,
    params: Params | undefined,
    run: (era: Era, p: Params) => Answer,
  ): LineParts
  private answer(
    id: RequestId,
    method: string,
    params: Params | undefined,
    run: (era: Era, p: Params) => Promise<Answer>,
  ): LineParts | Promise<LineParts>
  private answer(
    id: RequestId,
    method: string,
    params: Params | undefined,
    run: (era: Era, p: Params) => Answer | Promise<Answer>,
  ): LineParts | Promise<LineParts> {
    let era: Era
    let r: Answer | Promise<Answer>
    try {
      era = this.negotiation.eraFor(method, params)
      r = run(era, params ?? {})
    } catch (e) {
      return this.failureLine(id, method, e)
    }
    if (!(r instanceof Promise)) return this.resultLine(id, era, r)
    return r.then(
      (result) => this.resultLine(id, era, result),
      (e: unknown) => this.failureLine(id, method, e),
    )
  }

  private resultLine(id: RequestId, era: Era, result: Answer): LineParts {
    if (Buffer.isBuffer(result)) return [`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":`, result, '}']
    return resultLine(id, JSON.stringify(this.wrap(era, result)))
  }

  private failureLine(id: RequestId, method: string, e: unknown): string {
    if (e instanceof RpcError) return this.errorLine(id, e)
    this.opts.onInternalError?.(method, e)
    return this.errorLine(id, protocolError('request_failed'))
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
        if (era.modern) throw protocolError('initialize_modern', { revision: era.revision })
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
        return this.lists.get(era, 'tools', params['cursor'], () => pipeline.tools().map((t) => toolShape(era, t)))
      case 'resources/list':
        return this.lists.get(era, 'resources', params['cursor'], () =>
          pipeline.resources().map((r) => resourceShape(era, r)),
        )
      case 'resources/templates/list':
        return this.lists.get(era, 'resourceTemplates', params['cursor'], () =>
          pipeline.resourceTemplates().map((r) => resourceTemplateShape(era, r)),
        )
      case 'prompts/list':
        return this.lists.get(era, 'prompts', params['cursor'], () =>
          pipeline.prompts().map((p) => promptShape(era, p)),
        )
      case 'prompts/get': {
        const name = params['name']
        if (typeof name !== 'string')
          throw protocolError('param_missing', { method: 'prompts/get', param: 'name', type: 'a string' })
        const args = params['arguments'] ?? {}
        if (!isObject(args) || Object.values(args).some((v) => typeof v !== 'string'))
          throw protocolError('prompt_arguments_invalid')
        return { ...pipeline.getPrompt(name, args as Record<string, string>) }
      }
    }
    const why =
      UNSUPPORTED[method] ??
      (method.startsWith('tasks/') ? 'the tasks extension is not offered by this server' : undefined)
    throw protocolError('method_not_found', { method, why })
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
          throw protocolError('param_missing', { method: 'tools/call', param: 'name', type: 'a string' })
        const args = params['arguments'] ?? {}
        const outcome = await pipeline.callTool(name, args, opts)
        return callResultShape(era, outcome)
      }
      case 'resources/read': {
        const uri = params['uri']
        if (typeof uri !== 'string')
          throw protocolError('param_missing', { method: 'resources/read', param: 'uri', type: 'a string' })
        const contents = await pipeline.readResource(uri, opts)
        return era.modern ? { contents, ttlMs: 0, cacheScope: 'private' } : { contents }
      }
    }
    throw protocolError('method_not_found', { method })
  }

  private initialize(params: Params): Record<string, unknown> {
    const era = this.negotiation.select(params['protocolVersion'])
    return {
      protocolVersion: era.revision,
      capabilities: { tools: {}, resources: {}, prompts: {} },
      serverInfo: implementationShape(era, this.opts.pipeline.identity),
      instructions: this.opts.pipeline.instructions,
    }
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

  /** Every error this server writes, cleaned (see McpServerOptions.clean). */
  private errorLine(id: RequestId | null, e: RpcError): string {
    const { code, message, data } = e
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

function resultLine(id: RequestId, resultJson: string): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${resultJson}}`
}

function errorLine(id: RequestId | null, code: number, message: string, data?: unknown): string {
  const error: Record<string, unknown> = { code, message }
  if (data !== undefined) error['data'] = data
  return JSON.stringify({ jsonrpc: '2.0', id, error })
}
