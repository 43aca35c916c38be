import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { SqliteTextColumn } from '../../adapters/sqlite/sqlite-text-column.js'
import { Random } from '../support/random.js'

describe('SqliteTextColumn', () => {
  it('gives back every text set, null and empty ones too, while texts are replaced past compaction', () => {
    const random = new Random(21)
    const column = new SqliteTextColumn()
    const held = new Map<number, string | null>()
    const texts = ['', 'a', 'ü@example.org', '𝒜lice', '+39 06 1234 5678']
    let capacity = 0
    // 60,000 texts of up to 80 bytes: a few MB written, most of it replaced, so it compacts.
    for (let step = 0; step < 60_000; step++) {
      if (step % 10_000 === 0) {
        capacity += 700
        column.grow(capacity)
      }
      const id = random.between(0, capacity - 1)
      if (random.next() < 0.1) {
        column.delete(id)
        held.delete(id)
      } else {
        const text = random.next() < 0.1 ? null : random.pick(texts).repeat(random.between(1, 16))
        column.set(id, text)
        held.set(id, text)
      }
      if (step % 997 === 0) {
        for (let other = 0; other < capacity; other++) {
          assert.equal(column.get(other), held.get(other) ?? null, `id ${other} at step ${step}`)
        }
      }
    }
    // Replaced texts' bytes are compacted away: what is held stays within twice the live bytes.
    let live = 0
    for (const text of held.values()) live += text === null ? 0 : Buffer.byteLength(text)
    assert.ok(column.bytes <= 2 * live + 1024, `${column.bytes} bytes held for ${live} live`)
  })
})

describe('SqliteTextColumn of two fields', () => {
  it('gives back both texts of every id, each null or not, while they are replaced past compaction', () => {
    const random = new Random(22)
    const column = new SqliteTextColumn(2)
    const held = new Map<number, [string | null, string | null]>()
    const texts = ['', 'a', 'ü@example.org', '𝒜lice', '+39 06 1234 5678']
    const draw = () =>
      random.next() < 0.2 ? null : random.pick(texts).repeat(random.between(1, 16))
    column.grow(6_000)
    for (let step = 0; step < 120_000; step++) {
      const id = random.between(0, 5_999)
      if (random.next() < 0.1) {
        column.delete(id)
        held.delete(id)
      } else {
        const pair: [string | null, string | null] = [draw(), draw()]
        column.set(id, ...pair)
        held.set(id, pair)
      }
      if (step % 4_999 === 0) {
        for (let other = 0; other < 6_000; other++) {
          const [first, second] = held.get(other) ?? [null, null]
          assert.deepEqual(
            [column.get(other, 0), column.get(other, 1)],
            [first, second],
            `id ${other}`,
          )
        }
      }
    }
    let live = 0
    for (const pair of held.values()) {
      for (const text of pair) live += text === null ? 0 : Buffer.byteLength(text)
    }
    assert.ok(column.bytes <= 2 * live + 1024, `${column.bytes} bytes held for ${live} live`)
  })
})
