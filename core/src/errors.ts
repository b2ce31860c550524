// The core's refusals and protocol errors in one catalog, as server/src/errors.ts is the
// server's: each code has its message (a template whose holes are typed) and its fix, which
// docs/errors.md shows. A tool refusal is an isError result whose summary ends with `[code]`
// and whose structuredContent carries `error: { code, ...holes }`; a protocol error is a
// JSON-RPC error whose bytes are the template's, exactly (clients and tests read them).
import {
  INTERNAL_ERROR,
  INVALID_PARAMS,
  INVALID_REQUEST,
  METHOD_NOT_FOUND,
  PARSE_ERROR,
  UNSUPPORTED_PROTOCOL_VERSION,
} from './jsonrpc/message.ts'
import { RpcError } from './mcp/errors.ts'

type Holes = Record<string, string | number | undefined>

interface Entry<H extends Holes, As extends 'result' | number> {
  /** A tool refusal (`result`), or the JSON-RPC error code a protocol error is answered with. */
  readonly as: As
  readonly message: (h: H) => string
  /** What the caller or the operator does about it. */
  readonly fix: string
}

const result = <H extends Holes = Record<never, never>>(
  message: (h: H) => string,
  fix: string,
): Entry<H, 'result'> => ({ as: 'result', message, fix })

const rpc = <H extends Holes = Record<never, never>>(
  as: number,
  message: (h: H) => string,
  fix: string,
): Entry<H, number> => ({ as, message, fix })

/** Where a plugin's message is shown: fenced after the summary, or as the peer prints it, above it. */
type Shown = 'quoted' | 'above'
const SHOWN_WORDS: Record<Shown, string> = { quoted: 'Its message, quoted:', above: 'Its message is above.' }
// Any other value is docs/errors.md's placeholder (errors-doc.ts): the doc says both cases.
const shownWords = (s: Shown): string =>
  SHOWN_WORDS[s] ?? `"${SHOWN_WORDS.quoted}" (for a peer tool: "${SHOWN_WORDS.above}")`
const retryWords = (s: number | undefined): string => (s === undefined ? '' : ` Retry after ${s} s.`)

export const CATALOG = {
  // Tool refusals: isError results, before or after the plugin ran.
  group_unknown: result(
    () => 'refused: its group is unknown',
    'A build defect (a tool without its group): report it with the tool name.',
  ),
  group_disabled: result<{ group: string; explanation: string }>(
    (h) => `refused: ${h.explanation}`,
    'The operator enables the group with the flag the message names.',
  ),
  rate_limited: result<{ retryAfterS: number }>(
    (h) => `refused by the rate limit (--rate-limit): too many tool calls; retry in ${h.retryAfterS} s.`,
    'Wait the time named and call again; the operator may raise --rate-limit.',
  ),
  arguments_not_object: result(
    () => 'refused: "arguments" must be a JSON object.',
    "Send the tool's arguments as one JSON object (`{}` for none).",
  ),
  no_validator: result(
    () => 'refused: no validator was built for this tool (a build defect; see the log).',
    'A build defect: rebuild (`npm run build`) or report it.',
  ),
  input_invalid: result<{ problems: string }>(
    (h) => `refused: the arguments do not match the input schema: ${h.problems}.`,
    'Correct the arguments as the problems say; tools/list shows the schema.',
  ),
  peer_input_invalid: result(
    () => 'refused: its arguments; the reason is above.',
    'Correct the arguments as the text above says.',
  ),
  not_sent: result<{ failure: string; reason: string }>(
    (h) => `not sent: ${h.reason}`,
    'The operator restarts ag-mcp with what the reason names (an upstream, a token, a root).',
  ),
  plugin_unavailable: result<{ plugin: string }>(
    (h) => `failed: the ${h.plugin} plugin could not start (see the ag-mcp log).`,
    'The operator reads the ag-mcp log for why the plugin did not load.',
  ),
  policy_refused: result<{ rule: string; reason: string }>(
    (h) => `refused by ${h.rule}: ${h.reason}`,
    'Stay within the policy the rule names (--repo, --write-path, --require-lease), or ask the operator to widen it.',
  ),
  no_handler: result<{ plugin: string }>(
    (h) => `failed: the ${h.plugin} plugin has no handler for it.`,
    'A build defect (the build checks every tool has a handler): report it.',
  ),
  plugin_failed: result<{ plugin: string; failure: string; retryAfterS?: number | undefined; shown: Shown }>(
    (h) => `failed: the ${h.plugin} plugin reported ${h.failure}.${retryWords(h.retryAfterS)} ${shownWords(h.shown)}`,
    'Act on the failure code (docs/errors.md, plugin failures) and the message.',
  ),
  upstream_failed: result<{
    failure: string
    status?: number | undefined
    retryAfterS?: number | undefined
    shown: Shown
  }>(
    (h) =>
      `failed: the upstream answered${h.status === undefined ? '' : ` ${h.status}`} ${h.failure}.${retryWords(h.retryAfterS)} ${shownWords(h.shown)}`,
    "Act on the upstream's code (docs/agwp-v1.md) and its message.",
  ),
  internal: result(
    () => 'failed inside ag-mcp (see its log); nothing more is known.',
    'The operator reads the ag-mcp log; report it if it is a defect.',
  ),
  output_invalid: result<{ plugin: string }>(
    (h) =>
      `failed: the ${h.plugin} plugin's answer did not have the expected shape, so it is not shown (see the ag-mcp log).`,
    'The operator reads the log (the problems are there); often an upstream of another version.',
  ),

  // Protocol errors: JSON-RPC errors, in these bytes.
  parse_error: rpc<{ problem: string }>(
    PARSE_ERROR,
    (h) => `Parse error: ${h.problem}`,
    'Send one JSON value per line.',
  ),
  oversize: rpc<{ bytes: number; limit: number }>(
    INVALID_REQUEST,
    (h) =>
      `Invalid Request: message of ${h.bytes} bytes exceeds the ${h.limit}-byte limit (--max-message-bytes); it was discarded`,
    'Send a smaller message, or the operator raises --max-message-bytes.',
  ),
  batch_refused: rpc<{ why: string }>(
    INVALID_REQUEST,
    (h) => `Invalid Request: ${h.why}; send one message per line`,
    'Send one message per line (batches only in revision 2025-03-26).',
  ),
  batch_empty: rpc(INVALID_REQUEST, () => 'Invalid Request: empty batch', 'Send at least one message.'),
  batch_initialize: rpc(
    INVALID_REQUEST,
    () => 'Invalid Request: initialize must not be part of a batch',
    'Send initialize on its own line.',
  ),
  id_in_use: rpc<{ id: string }>(
    INVALID_REQUEST,
    (h) => `Invalid Request: id ${h.id} is already in use by a request in flight`,
    'Give every request in flight its own id.',
  ),
  shutting_down: rpc(
    INTERNAL_ERROR,
    () => 'Internal error: ag-mcp is shutting down; the call was not started',
    'Start a new session.',
  ),
  request_failed: rpc(
    INTERNAL_ERROR,
    () => 'Internal error: the request failed inside ag-mcp (see its log)',
    'The operator reads the ag-mcp log; report it if it is a defect.',
  ),
  version_unsupported: rpc<{ hint: string }>(
    UNSUPPORTED_PROTOCOL_VERSION,
    (h) => `Unsupported protocol version: ${h.hint}`,
    'Use a revision the error data lists as supported.',
  ),
  capabilities_missing: rpc<{ key: string; revision: string }>(
    INVALID_PARAMS,
    (h) =>
      `Invalid params: _meta["${h.key}"] is required on every ${h.revision} request (an empty object declares no capabilities)`,
    'Send the client capabilities in _meta on every request.',
  ),
  handshake_missing: rpc<{ versionKey: string; capabilitiesKey: string; revision: string; legacy: string }>(
    INVALID_PARAMS,
    (h) =>
      `Invalid params: _meta["${h.versionKey}"] and _meta["${h.capabilitiesKey}"] are required on every ${h.revision} request; clients of ${h.legacy} must send initialize first`,
    'Send the modern _meta on every request, or initialize first.',
  ),
  initialize_modern: rpc<{ revision: string }>(
    METHOD_NOT_FOUND,
    (h) =>
      `Method not found: initialize (${h.revision} has no handshake; use server/discover, or send initialize without modern _meta)`,
    'Use server/discover, or send initialize without modern _meta.',
  ),
  method_not_found: rpc<{ method: string; why?: string | undefined }>(
    METHOD_NOT_FOUND,
    (h) => `Method not found: ${h.method}${h.why ? ` (${h.why})` : ''}`,
    'Call a method this server offers (server/discover or initialize says which).',
  ),
  param_missing: rpc<{ method: string; param: string; type: string }>(
    INVALID_PARAMS,
    (h) => `Invalid params: ${h.method} needs "${h.param}" (${h.type})`,
    'Send the parameter the message names.',
  ),
  prompt_arguments_invalid: rpc(
    INVALID_PARAMS,
    () => 'Invalid params: prompts/get "arguments" must be an object of strings',
    'Send prompt arguments as an object of strings.',
  ),
  cursor_invalid: rpc<{ list: string }>(
    INVALID_PARAMS,
    (h) => `Invalid params: cursor is not one this server issued for ${h.list}; start again without a cursor`,
    'Start the listing again without a cursor.',
  ),
  cursor_past_end: rpc<{ list: string }>(
    INVALID_PARAMS,
    (h) => `Invalid params: cursor is past the end of ${h.list}; start again without a cursor`,
    'Start the listing again without a cursor.',
  ),
  unknown_tool: rpc<{ name: string }>(
    INVALID_PARAMS,
    (h) => `Invalid params: unknown tool "${h.name}"; tools/list shows the tools this server offers`,
    'Call a tool tools/list shows.',
  ),
  unknown_resource: rpc<{ uri: string }>(
    INVALID_PARAMS,
    (h) =>
      `Invalid params: no resource matches "${h.uri}"; resources/list and resources/templates/list show what can be read`,
    'Read a resource resources/list or resources/templates/list shows.',
  ),
  resource_refused: rpc<{ tool: string; reason: string }>(
    INVALID_PARAMS,
    (h) => `Invalid params: ${h.tool}: ${h.reason}`,
    'The reason is the refusal of the tool behind the resource: act on it as for the tool.',
  ),
  unknown_prompt: rpc<{ name: string }>(
    INVALID_PARAMS,
    (h) => `Invalid params: unknown prompt "${h.name}"`,
    'Get a prompt prompts/list shows.',
  ),
  prompt_argument_missing: rpc<{ prompt: string; argument: string }>(
    INVALID_PARAMS,
    (h) => `Invalid params: prompt ${h.prompt} needs argument "${h.argument}"`,
    'Pass every required argument prompts/list names.',
  ),
} as const

type Catalog = typeof CATALOG
export type ErrorCode = keyof Catalog
type HolesOf<C extends ErrorCode> = Parameters<Catalog[C]['message']>[0]
/** Holes as arguments: none to pass when the template has none. */
type HoleArgs<C extends ErrorCode> =
  Record<never, never> extends HolesOf<C> ? [holes?: HolesOf<C>] : [holes: HolesOf<C>]

/** The codes answered as isError results. */
export type RefusalCode = { [C in ErrorCode]: Catalog[C]['as'] extends 'result' ? C : never }[ErrorCode]
/** The codes answered as JSON-RPC errors. */
export type ProtocolCode = Exclude<ErrorCode, RefusalCode>

/** A tool refusal, not yet rendered: ag-mcp's own words, its code and its holes. */
export interface Refusal {
  readonly code: RefusalCode
  readonly message: string
  readonly holes: Readonly<Holes>
}

export function refusal<C extends RefusalCode>(code: C, ...[holes]: HoleArgs<C>): Refusal {
  const h = (holes ?? {}) as Holes
  return { code, message: (CATALOG[code].message as (h: Holes) => string)(h), holes: h }
}

/** A protocol error with the catalog's bytes; `data` is the JSON-RPC error's data, if any. */
export function protocolError<C extends ProtocolCode>(code: C, ...[holes, data]: [...HoleArgs<C>, unknown?]): RpcError {
  const entry = CATALOG[code] as Entry<Holes, number>
  return new RpcError(entry.as, entry.message((holes ?? {}) as Holes), data)
}
