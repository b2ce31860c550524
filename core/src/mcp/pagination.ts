// Opaque list cursors. A cursor names its list and offset, so a cursor from one list (or a
// forged one) is refused with -32602 instead of silently restarting the listing.
import { protocolError } from '../errors.ts'

export function encodeCursor(list: string, offset: number): string {
  return Buffer.from(`${list}:${offset}`, 'utf8').toString('base64url')
}

export function decodeCursor(list: string, cursor: unknown): number {
  if (cursor === undefined) return 0
  if (typeof cursor === 'string' && cursor.length <= 64) {
    const m = /^([A-Za-z/]+):(\d{1,6})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'))
    if (m && m[1] === list) return Number(m[2])
  }
  throw protocolError('cursor_invalid', { list })
}

export function page<T>(
  list: string,
  items: readonly T[],
  cursor: unknown,
  size: number,
): { items: T[]; nextCursor?: string } {
  const offset = decodeCursor(list, cursor)
  if (offset > items.length) throw protocolError('cursor_past_end', { list })
  const slice = items.slice(offset, offset + size)
  const next = offset + size
  return next < items.length ? { items: slice, nextCursor: encodeCursor(list, next) } : { items: slice }
}
