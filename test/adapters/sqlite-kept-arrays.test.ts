import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { KeptArrays } from '../../adapters/sqlite/sqlite-kept-arrays.js'
import { MAX_KEPT_MATCH_IDS } from '../../adapters/sqlite/sqlite-list-search.js'
import { Random } from '../support/random.js'

describe('KeptArrays', () => {
  it('gives back what it kept until it is full, then forgets all and keeps on; too many ids are not kept', () => {
    const random = new Random(3)
    const kept = new KeptArrays(MAX_KEPT_MATCH_IDS)
    const lengths = new Map<string, number>()
    const idsOf = (round: number, length: number) =>
      Int32Array.from({ length }, (_, i) => (round * 7_919 + i * 31) | 0)
    // A scratch array the caller overwrites after each call, as `search` and `filter` do.
    const scratch = new Int32Array(1_200_000)
    let since = 0
    for (let round = 0; round < 300; round++) {
      const length =
        random.next() < 0.1 ? random.between(100_000, 1_200_000) : random.between(0, 5_000)
      scratch.set(idsOf(round, length))
      const view = kept.keep(`k${round}`, scratch.subarray(0, length))
      scratch.fill(0, 0, length)
      assert.deepEqual(view, idsOf(round, length))
      // Every key still kept gives back its own ids; all are forgotten at once, when full.
      const before = lengths.size
      for (const [key, known] of lengths) {
        const again = kept.get(key)
        if (again === undefined) lengths.delete(key)
        else if (random.next() < 0.05) assert.deepEqual(again, idsOf(Number(key.slice(1)), known))
      }
      since += length
      if (lengths.size < before) {
        assert.equal(lengths.size, 0, 'forgotten all at once')
        assert.ok(since > 1_000_000, 'only when many ids were kept')
        since = length
      }
      lengths.set(`k${round}`, length)
    }
    assert.ok(lengths.size < 300, 'filling up forgot some')
    const tooMany = new Int32Array(MAX_KEPT_MATCH_IDS + 1).fill(7)
    assert.equal(kept.keep('many', tooMany), tooMany)
    assert.equal(kept.get('many'), undefined)
    kept.clear()
    assert.equal(kept.get('k299'), undefined)
  })

  it('keeps an array the second time its key is asked for, and forgets all once it holds its most keys', () => {
    const kept = new KeptArrays(1_000, 3)
    const values = Int32Array.of(4, 8, 15)
    assert.equal(kept.keepIfAskedAgain('a', values), values)
    assert.equal(kept.get('a'), undefined)
    assert.deepEqual(kept.keepIfAskedAgain('a', values), values)
    assert.notEqual(kept.get('a'), undefined)
    kept.keep('b', values)
    kept.keep('c', values)
    assert.deepEqual(kept.get('c'), values)
    // A fourth key: the three kept are forgotten first.
    kept.keep('d', values)
    assert.equal(kept.get('a'), undefined)
    assert.equal(kept.get('c'), undefined)
    assert.deepEqual(kept.get('d'), values)
  })
})
