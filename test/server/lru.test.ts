import t from 'tap'
import fc from 'fast-check'
import { Lru } from '../../server/src/lru.ts'

// The server's caches are all this one bounded map: what it holds must stay within its
// bound, and what it drops must be what was used longest ago.

t.test('drops the least recently used first, by weight', async (t) => {
  const c = new Lru<string, string>(10, (v) => v.length)
  c.set('a', 'aaaa') // 4
  c.set('b', 'bbbb') // 8
  t.equal(c.get('a'), 'aaaa', 'a used: b is now the oldest')
  c.set('c', 'cccc') // 12 > 10: b goes
  t.equal(c.peek('b'), undefined)
  t.equal(c.peek('a'), 'aaaa')
  t.equal(c.weight, 8)
  c.peek('a') // a peek does not count as a use
  c.set('d', 'dd') // 10: fits
  c.set('e', 'e') // 11: a, the oldest, goes
  t.same([...c.values()], ['cccc', 'dd', 'e'])
  t.equal(c.weight, 7)
})

t.test('replacing a key re-weighs it; one entry stays even over the bound', async (t) => {
  const c = new Lru<string, string>(4, (v) => v.length)
  c.set('a', 'aa')
  c.set('a', 'a')
  t.equal(c.weight, 1)
  t.equal(c.size, 1)
  c.set('big', 'bigger than the bound')
  t.same([...c.values()], ['bigger than the bound'], 'the newest entry is kept on its own')
  t.equal(c.weight, 21)
})

t.test('matches a plain model under any sequence of gets, sets and deletes', async (t) => {
  const op = fc.oneof(
    fc.record({ set: fc.integer({ min: 0, max: 9 }), w: fc.integer({ min: 1, max: 6 }) }),
    fc.record({ get: fc.integer({ min: 0, max: 9 }) }),
    fc.record({ del: fc.integer({ min: 0, max: 9 }) }),
  )
  const run = (): void =>
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 15 }), fc.array(op, { maxLength: 60 }), (limit, ops) => {
        const told: number[] = []
        const c = new Lru<number, number>(
          limit,
          (w) => w,
          (k) => told.push(k),
        )
        let model: [number, number][] = [] // oldest first
        const modelDropped: number[] = []
        for (const o of ops) {
          if ('set' in o) {
            model = model.filter(([k]) => k !== o.set)
            model.push([o.set, o.w])
            while (model.length > 1 && model.reduce((s, [, w]) => s + w, 0) > limit)
              modelDropped.push((model.shift() as [number, number])[0])
            c.set(o.set, o.w)
          } else if ('del' in o) {
            model = model.filter(([k]) => k !== o.del)
            c.delete(o.del)
          } else {
            const i = model.findIndex(([k]) => k === o.get)
            const hit = i >= 0 ? model.splice(i, 1)[0] : undefined
            if (hit) model.push(hit)
            if (c.get(o.get) !== hit?.[1]) return false
          }
        }
        const w = model.reduce((s, [, x]) => s + x, 0)
        return (
          c.weight === w &&
          c.size === model.length &&
          [...c.values()].join() === model.map(([, x]) => x).join() &&
          told.join() === modelDropped.join()
        )
      }),
      { numRuns: 300 },
    )
  t.doesNotThrow(run, 'the same entries, in the same order, with the same total weight; told of the same drops')
})
