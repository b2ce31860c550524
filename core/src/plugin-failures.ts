// How a plugin reports a failed call: the codes it may name (each with its meaning and fix, which
// docs/errors.md shows) and the plain-data failure it throws. Part of the plugin contract:
// plugins import it through core/src/plugin-api.ts, never from here.
/**
 * The codes a plugin may name its own failures with (`localFailure`, and `upstreamFailure` for
 * what it concluded about an upstream's answer): each with what it means and the fix, which
 * docs/errors.md shows. An upstream's own codes (AGWP's `not_found`, `conflict`, …) are relayed
 * as the upstream named them, with `relayed`.
 */
export const FAILURE_CODES = {
  invalid: {
    meaning: 'the arguments match the schema, but the plugin cannot act on them',
    fix: 'Correct the argument the message names and call again.',
  },
  not_found: {
    meaning: 'what the call names does not exist',
    fix: 'List what exists (the message says where) and call again with an existing name.',
  },
  conflict: {
    meaning: 'the state of the task, workspace or pack does not allow the call now',
    fix: 'Read the current state, then call again from it.',
  },
  locked: {
    meaning: 'another process holds the lock on the data the call writes',
    fix: 'Call again once the other writer is done.',
  },
  not_initialized: {
    meaning: 'the plugin has no data here yet (no .agit/ or no pack)',
    fix: 'Initialize it first (the message names the call or command).',
  },
  not_configured: {
    meaning: 'ag-mcp was started without what the plugin needs (an upstream, a token, a root)',
    fix: 'The operator restarts ag-mcp with the flag the message names.',
  },
  cancelled: {
    meaning: 'the call was cancelled before it finished',
    fix: 'Call again if it is still wanted; the message says what was written.',
  },
  timeout: {
    meaning: 'no complete answer within the configured time',
    fix: 'Call again, or narrow the request; the operator may raise the timeout flag named.',
  },
  unreachable: {
    meaning: 'the upstream cannot be reached',
    fix: 'The operator checks --upstream and that the server runs.',
  },
  bad_response: {
    meaning: 'the upstream answered something that is not a valid AGWP answer, or too much of it',
    fix: 'Narrow the request; if it persists, the operator checks the upstream.',
  },
  redirect: {
    meaning: 'the upstream answered with a redirect, which is never followed (the token would travel)',
    fix: 'The operator sets --upstream to the final address.',
  },
  failed: {
    meaning: 'the plugin could not complete the operation (a write or a git command failed)',
    fix: 'Read the quoted message; call again once its cause is fixed.',
  },
} as const satisfies Record<string, { meaning: string; fix: string }>

/** A code a plugin may name its own failure with. */
export type FailureCode = keyof typeof FAILURE_CODES

/**
 * What a plugin throws when a call fails. Plain data (checked by shape, not instanceof) because
 * plugins are bundled apart from the core. `origin` says whose failure it is: `upstream` when
 * the upstream answered with it (the core says "the upstream answered …"), `local` when the
 * plugin itself refused or failed (bad input it caught, no connection, a file it could not
 * write). `message` is untrusted: the core quotes, sanitizes, scrubs and bounds it.
 */
export interface PluginFailure {
  pluginFailure: true
  origin: 'upstream' | 'local'
  /** A FailureCode, or (only from `relayed`) the upstream's own code, which the core checks before showing it. */
  code: string
  message: string
  status?: number
  retryAfterS?: number
  details?: unknown
}

type FailureExtra = Partial<Pick<PluginFailure, 'status' | 'retryAfterS' | 'details'>>

/** The upstream answered, and the plugin names what it made of the answer (`bad_response`, `redirect`). */
export function upstreamFailure(code: FailureCode, message: string, extra: FailureExtra = {}): PluginFailure {
  return { ...extra, pluginFailure: true, origin: 'upstream', code, message }
}

/** The upstream answered with a failure of its own: its code is passed on as it named it. */
export function relayed(code: string, message: string, extra: FailureExtra = {}): PluginFailure {
  return { ...extra, pluginFailure: true, origin: 'upstream', code, message }
}

/** The plugin itself refused or failed; nothing was answered by an upstream. */
export function localFailure(code: FailureCode, message: string, extra: FailureExtra = {}): PluginFailure {
  return { ...extra, pluginFailure: true, origin: 'local', code, message }
}

export function isPluginFailure(x: unknown): x is PluginFailure {
  return typeof x === 'object' && x !== null && (x as { pluginFailure?: unknown }).pluginFailure === true
}
