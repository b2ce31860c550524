// The MCP revisions this server speaks, and which era each belongs to.

/** Stateless: every request carries its revision and capabilities in `_meta`. */
export const MODERN_REVISION = '2026-07-28'
/** Handshake revisions: `initialize` selects one for the rest of the process. */
export const LEGACY_REVISIONS = ['2025-11-25', '2025-06-18', '2025-03-26'] as const
export const ALL_REVISIONS: readonly string[] = [MODERN_REVISION, ...LEGACY_REVISIONS]
/** What a legacy client gets when it asks for a revision we do not speak. */
export const LEGACY_FALLBACK = '2025-11-25'

export const META_VERSION = 'io.modelcontextprotocol/protocolVersion'
export const META_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities'
export const META_CLIENT_INFO = 'io.modelcontextprotocol/clientInfo'
export const META_SERVER_INFO = 'io.modelcontextprotocol/serverInfo'

export type LegacyRevision = (typeof LEGACY_REVISIONS)[number]

export function isLegacyRevision(v: unknown): v is LegacyRevision {
  return (LEGACY_REVISIONS as readonly unknown[]).includes(v)
}

/** What a revision's wire shapes allow. */
export interface Era {
  revision: string
  modern: boolean
  /** 2025-06-18 and later: tool `title`, `outputSchema`, result `structuredContent`. */
  structured: boolean
  /** 2025-03-26 only: JSON-RPC batches. */
  batches: boolean
}

export function eraOf(revision: string): Era {
  return {
    revision,
    modern: revision === MODERN_REVISION,
    structured: revision !== '2025-03-26',
    batches: revision === '2025-03-26',
  }
}
