// Which MCP revision (era) serves a request: a modern request says so in its `_meta`, every
// request; a legacy client negotiates once, with `initialize`, for the whole process.
import type { Params } from '../jsonrpc/message.ts'
import { protocolError } from '../errors.ts'
import {
  ALL_REVISIONS,
  eraOf,
  isLegacyRevision,
  LEGACY_FALLBACK,
  META_CAPABILITIES,
  META_VERSION,
  MODERN_REVISION,
} from './revisions.ts'
import type { Era } from './revisions.ts'

const MODERN = eraOf(MODERN_REVISION)

export class Negotiation {
  private selected: Era | undefined

  constructor(
    /** Answer a request with neither modern `_meta` nor a prior initialize in the legacy fallback. */
    private readonly handshakeOptional: boolean,
    /** Cleans what is echoed of the client's request (see McpServerOptions.clean). */
    private readonly clean: (s: string) => string = (s) => s,
  ) {}

  /** The legacy era initialize selected for this process, if any. */
  get legacy(): Era | undefined {
    return this.selected
  }

  /** initialize: the first one fixes the process's revision (the requested one, or the fallback). */
  select(requested: unknown): Era {
    this.selected ??= eraOf(isLegacyRevision(requested) ? requested : LEGACY_FALLBACK)
    return this.selected
  }

  /** Which era serves this request, or why none does (a protocol error). */
  eraFor(method: string, params: Params | undefined): Era {
    const meta = params?.['_meta']
    const version = isObject(meta) ? meta[META_VERSION] : undefined
    if (version !== undefined) {
      if (version !== MODERN_REVISION) {
        const requested = describeVersion(version, this.clean)
        const hint = isLegacyRevision(version)
          ? `revision ${version} is negotiated with initialize, not per request: send initialize for it, or use ${MODERN_REVISION} in _meta`
          : `unsupported protocol version ${requested}; per-request _meta supports ${MODERN_REVISION}`
        throw protocolError('version_unsupported', { hint }, { supported: [MODERN_REVISION], requested })
      }
      if (!isObject((meta as Record<string, unknown>)[META_CAPABILITIES]))
        throw protocolError('capabilities_missing', { key: META_CAPABILITIES, revision: MODERN_REVISION })
      return MODERN
    }
    if (method === 'initialize') return eraOf(LEGACY_FALLBACK) // refined by initialize itself
    if (this.selected) return this.selected
    if (method === 'ping') return MODERN
    if (this.handshakeOptional) return eraOf(LEGACY_FALLBACK)
    throw protocolError('handshake_missing', {
      versionKey: META_VERSION,
      capabilitiesKey: META_CAPABILITIES,
      revision: MODERN_REVISION,
      legacy: ALL_REVISIONS.slice(1).join(', '),
    })
  }
}

/** The requested version as data.requested (a string): clipped, and never a deep serialization of junk. */
function describeVersion(v: unknown, clean: (s: string) => string): string {
  // cleaned before it is cut: a cut through a secret would leave a part too short to recognise
  if (typeof v === 'string') {
    const c = clean(v)
    return c.length > 64 ? `${c.slice(0, 64)}…` : c
  }
  if (typeof v === 'number' || typeof v === 'boolean' || v === null) return String(v)
  return Array.isArray(v) ? '(an array)' : '(an object)'
}

export function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null && !Array.isArray(x)
}
