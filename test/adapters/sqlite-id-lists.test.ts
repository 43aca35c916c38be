import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { IdLists } from '../../adapters/sqlite/sqlite-id-lists.js'
import { Random } from '../support/random.js'

describe('IdLists', () => {
  it('keeps every list ascending and whole while lists grow, move and are packed again', () => {
    const random = new Random(7)
    const lists = new IdLists()
    const held: Set<number>[] = []
    const check = (step: number) => {
      assert.equal(lists.size, held.length)
      for (let list = 0; list < held.length; list++) {
        const expected = [...held[list]!].sort((a, b) => a - b)
        assert.deepEqual([...lists.ids(list)], expected, `list ${list} at step ${step}`)
        assert.equal(lists.lengths[list], expected.length)
      }
    }
    // Lists of very different sizes, ids mostly appended (as creates) and some in the middle,
    // some taken out: runs outgrow their room over and over, so the array is packed again.
    for (let step = 0; step < 40_000; step++) {
      if (held.length === 0 || random.next() < 0.01) {
        assert.equal(lists.create(), held.length)
        held.push(new Set())
      }
      // Skewed: the first lists take most ids.
      const list = Math.floor(held.length * random.next() ** 3)
      const id = random.next() < 0.8 ? step : random.between(0, step)
      if (random.next() < 0.15) {
        lists.remove(list, id)
        held[list]!.delete(id)
      } else {
        lists.add(list, id)
        held[list]!.add(id)
      }
      if (step % 4_999 === 0) check(step)
    }
    check(40_000)
    // Adding an id held, or taking out one not held, changes nothing.
    const [first] = lists.ids(0)
    lists.add(0, first!)
    lists.remove(0, -1)
    check(40_001)
    // Runs left behind are packed away: the room held stays within a few times the ids held.
    const live = held.reduce((sum, ids) => sum + ids.size, 0)
    assert.ok(lists.room <= 3 * live + 1024, `room for ${lists.room} ids, ${live} held`)
  })
})
