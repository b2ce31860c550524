import t from 'tap'
import { decodeCursor, encodeCursor, page } from '../../../core/src/mcp/pagination.ts'
import { RpcError } from '../../../core/src/mcp/errors.ts'

const items = ['a', 'b', 'c', 'd', 'e']

t.test('walking with cursors visits every item once, in order', async (t) => {
  for (const size of [1, 2, 3, 5, 100]) {
    const seen: string[] = []
    let cursor: string | undefined
    let pages = 0
    do {
      const p = page('tools', items, cursor, size)
      t.ok(p.items.length <= size, 'a page is at most the page size')
      seen.push(...p.items)
      cursor = p.nextCursor
      pages++
    } while (cursor !== undefined && pages < 20)
    t.same(seen, items, `page size ${size}`)
    t.equal(pages, Math.max(1, Math.ceil(items.length / size)), `page count for size ${size}`)
  }
})

t.test('the last page has no nextCursor; an empty list is one empty page', async (t) => {
  t.same(page('prompts', [], undefined, 1), { items: [] })
  t.same(page('tools', ['a'], undefined, 1), { items: ['a'] })
})

t.test('cursors round-trip and are bound to their list', async (t) => {
  t.equal(decodeCursor('tools', encodeCursor('tools', 3)), 3)
  t.equal(decodeCursor('tools', undefined), 0)
  t.throws(() => decodeCursor('prompts', encodeCursor('tools', 1)), { code: -32602 }, 'a cursor of another list')
  // Every list the server pages, by the name server.ts gives it.
  for (const list of ['tools', 'prompts', 'resources', 'resourceTemplates']) {
    t.equal(decodeCursor(list, encodeCursor(list, 2)), 2, `${list} cursors round-trip`)
    t.same(
      page(list, items, page(list, items, undefined, 2).nextCursor, 2),
      { items: ['c', 'd'], nextCursor: encodeCursor(list, 4) },
      `${list}: page 2`,
    )
  }
})

t.test('forged and malformed cursors are -32602', async (t) => {
  const bad: unknown[] = [
    '',
    'garbage',
    'dG9vbHM6',
    Buffer.from('tools:-1').toString('base64url'),
    Buffer.from('tools:1x').toString('base64url'),
    'x'.repeat(65),
    7,
    null,
    {},
    [],
  ]
  for (const c of bad) {
    try {
      page('tools', items, c, 2)
      t.fail(`accepted ${JSON.stringify(c)}`)
    } catch (e) {
      t.ok(e instanceof RpcError && e.code === -32602, `refused ${JSON.stringify(c)}`)
    }
  }
  const past = encodeCursor('tools', 6)
  t.throws(() => page('tools', items, past, 2), { code: -32602 }, 'past the end')
  t.same(page('tools', items, encodeCursor('tools', 5), 2), { items: [] }, 'exactly at the end: an empty last page')
})
