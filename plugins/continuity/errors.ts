// Domain refusals as plugin failures: the core turns them into isError results the model can
// act on (Agentpack answered them with JSON-RPC -32000 errors, which a model never sees).
import { localFailure } from '../../core/src/plugin-api.ts'
import type { FailureCode, PluginFailure } from '../../core/src/plugin-api.ts'

/** A refusal under one of the plugin contract's codes (FAILURE_CODES). */
export function refuse(code: FailureCode, message: string): PluginFailure {
  return localFailure(code, message)
}

export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw refuse('cancelled', 'cancelled before it finished; nothing more was written')
}
