// Opaque list cursors. A cursor names its list and offset, so a cursor from one list (or a
// forged one) is refused with -32602 instead of silently restarting the listing.
import { INVALID_PARAMS } from '../jsonrpc/message.ts'
import { RpcError } from './errors.ts'

export function encodeCursor(list: string, offset: number): string {
  return Buffer.from(`${list}:${offset}`, 'utf8').toString('base64url')
}

export function decodeCursor(list: string, cursor: unknown): number {
  if (cursor === undefined) return 0
  if (typeof cursor === 'string' && cursor.length <= 64) {
    const m = /^([A-Za-z/]+):(\d{1,6})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'))
    if (m && m[1] === list) return Number(m[2])
  }
  throw new RpcError(
    INVALID_PARAMS,
    `Invalid params: cursor is not one this server issued for ${list}; start again without a cursor`,
  )
}

export function page<T>(
  list: string,
  items: readonly T[],
  cursor: unknown,
  size: number,
): { items: T[]; nextCursor?: string } {
  const offset = decodeCursor(list, cursor)
  if (offset > items.length)
    throw new RpcError(
      INVALID_PARAMS,
      `Invalid params: cursor is past the end of ${list}; start again without a cursor`,
    )
  const slice = items.slice(offset, offset + size)
  const next = offset + size
  return next < items.length ? { items: slice, nextCursor: encodeCursor(list, next) } : { items: slice }
}
