// List results (tools, resources, templates, prompts) never change within a process, so each
// page is serialized once per era and kept as bytes: every answer reuses them, and a burst of
// lists creates no large garbage.
import { decodeCursor, page } from './pagination.ts'
import type { Era } from './revisions.ts'

/** At most this many pages are kept (a client could ask for many cursors). */
const MAX_PAGES = 256

export class ListCache {
  private readonly pages = new Map<string, Buffer>()

  constructor(
    private readonly pageSize: number,
    /** The cache hint modern list results carry, in milliseconds. */
    private readonly ttlMs: number,
    /** The era's shape of a whole result (see McpServer.wrap). */
    private readonly wrap: (era: Era, result: Record<string, unknown>) => Record<string, unknown>,
  ) {}

  /** The page `cursor` names of `list`, as the JSON of a result. */
  get(era: Era, list: string, cursor: unknown, items: () => Record<string, unknown>[]): Buffer {
    // A cursor that is not a string, or is "", must not share the cache entry of "no cursor".
    if (cursor !== undefined && typeof cursor !== 'string') decodeCursor(list, cursor) // throws -32602
    const key = `${era.revision}|${list}|${cursor === undefined ? '' : `c${cursor}`}`
    let json = this.pages.get(key)
    if (json === undefined) {
      const p = page(list, items(), cursor, this.pageSize)
      const result: Record<string, unknown> = { [list]: p.items }
      if (p.nextCursor !== undefined) result['nextCursor'] = p.nextCursor
      if (era.modern) {
        result['ttlMs'] = this.ttlMs
        result['cacheScope'] = 'private'
      }
      json = Buffer.from(JSON.stringify(this.wrap(era, result)), 'utf8')
      if (this.pages.size < MAX_PAGES) this.pages.set(key, json)
    }
    return json
  }
}
