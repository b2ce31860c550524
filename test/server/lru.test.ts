import t from 'tap'
import fc from 'fast-check'
import { Lru } from '../../server/src/lru.ts'

// The server's caches are all this one bounded map: what it holds must stay within its
// bound, and what it drops must be what was used longest ago, up to one relaxation: a hit
// on an entry with at least half the map older than it does not move it.

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

t.test('a hit moves only an entry placed before the newer half', async (t) => {
  const c = new Lru<string, number>(4)
  for (const k of ['a', 'b', 'c', 'd']) c.set(k, k.charCodeAt(0))
  c.get('d') // the newest: stays last
  c.get('c') // one entry placed after it, of four: in the newer half, stays
  c.get('a') // three placed after it: moves to the end
  c.set('e', 101) // over the bound: b, now the first, goes
  t.same([...c.values()], [99, 100, 97, 101], 'c, d, a, e')
  c.get('c') // three placements after it now (a moved, e inserted): moves
  c.set('f', 102)
  t.same([...c.values()], [97, 101, 99, 102], 'd, the first, went; then a, e, c, f')
  c.get('c') // used again with one entry placed after its move: stays
  t.same([...c.values()], [97, 101, 99, 102], 'still a, e, c, f')
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

t.test('matches its model under any sequence of gets, sets and deletes', async (t) => {
  const op = fc.oneof(
    fc.record({ set: fc.integer({ min: 0, max: 9 }), w: fc.integer({ min: 1, max: 2 }) }),
    fc.record({ get: fc.integer({ min: 0, max: 9 }) }),
    fc.record({ del: fc.integer({ min: 0, max: 9 }) }),
  )
  const run = (): void =>
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 15 }), fc.array(op, { maxLength: 100 }), (limit, ops) => {
        const told: number[] = []
        // a value names its key and weight (key * 10 + weight), so an order is one of keys
        const c = new Lru<number, number>(
          limit,
          (v) => v % 10,
          (k) => told.push(k),
        )
        // oldest first: key, weight, when placed at the end
        let model: [number, number, number][] = []
        let placed = 0
        const modelDropped: number[] = []
        for (const o of ops) {
          if ('set' in o) {
            model = model.filter(([k]) => k !== o.set)
            model.push([o.set, o.w, ++placed])
            while (model.length > 1 && model.reduce((s, [, w]) => s + w, 0) > limit)
              modelDropped.push((model.shift() as [number, number, number])[0])
            c.set(o.set, o.set * 10 + o.w)
          } else if ('del' in o) {
            model = model.filter(([k]) => k !== o.del)
            c.delete(o.del)
          } else {
            const i = model.findIndex(([k]) => k === o.get)
            const hit = model[i]
            // moved to the end unless fewer than half the entries were placed after it
            if (hit && placed - hit[2] >= model.length / 2) {
              model.splice(i, 1)
              model.push([hit[0], hit[1], ++placed])
            } else if (hit && model.length - 1 - i >= model.length / 2) return false // left where half is not older
            if (c.get(o.get) !== (hit ? hit[0] * 10 + hit[1] : undefined)) return false
          }
          if ([...c.values()].join() !== model.map(([k, x]) => k * 10 + x).join()) return false
        }
        const w = model.reduce((s, [, x]) => s + x, 0)
        return c.weight === w && c.size === model.length && told.join() === modelDropped.join()
      }),
      { numRuns: 300 },
    )
  t.doesNotThrow(
    run,
    'the same entries in the same order after every step, the same weight and drops; a hit left in place has half the map older',
  )
})
