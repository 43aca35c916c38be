import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { selectByGroup } from '../../adapters/sqlite/sqlite-page-selection.js'
import {
  UpdateOrder,
  type GridSizes,
  type UpdateChange,
  type UpdateKeys,
} from '../../adapters/sqlite/sqlite-update-order.js'
import { Random } from '../support/random.js'

/** Ids the order is told to expect; the copy's arrays hold more. */
const ID_LIMIT = 40_000
const SIZE = 50_000
const T = 1_800_000_000_000

/** The records' copy as far as the order reads it, with the writes the copy passes on. */
class Records {
  readonly order: UpdateOrder
  keys: UpdateKeys = { status: new Uint8Array(SIZE + 1), updated: new Float64Array(SIZE + 1) }
  readonly ids = new Set<number>()

  constructor(sizes?: GridSizes) {
    this.order = new UpdateOrder(sizes)
    this.order.reset(ID_LIMIT)
    this.order.prepare(this.keys)
  }

  /** Arrays of `size` ids, as the copy grows its own. */
  grow(size: number): void {
    const status = new Uint8Array(size + 1)
    const updated = new Float64Array(size + 1)
    status.set(this.keys.status)
    updated.set(this.keys.updated)
    this.keys = { status, updated }
  }

  write(id: number, code: number, time: number): void {
    const { status, updated } = this.keys
    const [before, moved] = [status[id]!, status[id] === 0 || updated[id] !== time]
    status[id] = code
    updated[id] = time
    if (code === 0) this.ids.delete(id)
    else this.ids.add(id)
    this.order.change(id, before, code, moved, this.keys)
  }

  /**
   * Writes applied to the keys at once, then passed on together in id order, as the copy reads
   * them again after writes it did not see (each `[id, code, time]`, one write an id).
   */
  writeAll(writes: readonly (readonly [number, number, number])[]): void {
    const { status, updated } = this.keys
    const changes: UpdateChange[] = []
    for (const [id, code, time] of [...writes].sort((a, b) => a[0] - b[0])) {
      changes.push({ id, before: status[id]!, after: code, moved: updated[id] !== time })
      status[id] = code
      updated[id] = time
      if (code === 0) this.ids.delete(id)
      else this.ids.add(id)
    }
    this.order.changeAll(changes, this.keys)
  }

  /** What the order must answer: every record of the range sorted in full. */
  expected(first: number, last: number, code: number, start: number, end: number): number[] {
    const { status, updated } = this.keys
    return [...this.ids]
      .filter((id) => id >= first && id <= last && (code === 0 || status[id] === code))
      .sort((a, b) => updated[a]! - updated[b]! || a - b)
      .slice(start, end)
  }

  check(random: Random, queries: number): void {
    for (let query = 0; query < queries; query++) {
      const size = this.keys.status.length - 1
      const first = random.between(0, size)
      const last = random.next() < 0.3 ? size : random.between(first, size)
      const code = random.between(0, 3)
      let places: [number, number] = [0, 0]
      const page = this.order.page(
        first,
        last,
        code,
        (total) => {
          const start = random.between(0, total + 1)
          places = [start, Math.min(total, start + random.between(0, 150))]
          return places
        },
        this.keys,
      )
      assert.deepEqual(page, this.expected(first, last, code, ...places), `query ${query}`)
      // Any set of records (a search's matches), paged by update through the order's groups.
      const share = random.next()
      const ids = Int32Array.from([...this.ids].filter(() => random.next() < share)).sort()
      const start = random.between(0, ids.length)
      const end = start + random.between(0, 150)
      const { updated } = this.keys
      const sorted = Array.from(ids).sort((a, b) => updated[a]! - updated[b]! || a - b)
      assert.deepEqual(
        selectByGroup(ids, this.order.groups(this.keys), start, end),
        sorted.slice(start, end),
        `matches of query ${query}`,
      )
    }
  }
}

/**
 * Creates 30,000 records in id order (several in one millisecond), checks, then 20,000 writes:
 * deletes, status changes without a new time, updates (ties, and times set back), and checks.
 */
function comeChangeAndGo(records: Records, random: Random): void {
  let now = T
  // Created in id order, several in the same millisecond.
  for (let id = 1; id <= 30_000; id++) {
    if (random.next() < 0.5) now++
    records.write(id, random.between(1, 3), now)
  }
  records.check(random, 200)
  for (let round = 0; round < 20_000; round++) {
    const id = random.between(1, 30_000)
    const roll = random.next()
    if (roll < 0.05) records.write(id, 0, now)
    else if (roll < 0.15) {
      // A status changed without a new time, for a record still held.
      if (records.ids.has(id)) records.write(id, random.between(1, 3), records.keys.updated[id]!)
    } else {
      // Ties: an update in the same millisecond as later ones lands before those of higher ids.
      if (random.next() < 0.3) now++
      const back = random.next() < 0.1 ? random.between(0, 50) : 0
      records.write(id, random.between(1, 3), now - back)
    }
  }
  records.check(random, 200)
}

describe('UpdateOrder', () => {
  it('pages any range of ids and status by update time, then id, as records come, change and go', () => {
    comeChangeAndGo(new Records(), new Random(5))
  })

  it('counts by bucket of ids across many sections of buckets as well', () => {
    // Buckets of 64 ids (50,000 ids held): 782 buckets a row, in 13 sections of 64.
    comeChangeAndGo(
      new Records({ minBlockBits: 8, minBucket: 4, maxBlocks: 256, maxBuckets: 1_250 }),
      new Random(7),
    )
  })

  it('divides the order in larger blocks and the ids in larger buckets as records grow', () => {
    const random = new Random(13)
    // Tiny limits: 8 blocks and 16 buckets at most, blocks past 32 sort the order anew.
    const records = new Records({ minBlockBits: 4, minBucket: 16, maxBlocks: 8, maxBuckets: 16 })
    let now = T
    for (let id = 1; id <= 2_000; id++) records.write(id, random.between(1, 3), now++)
    records.check(random, 60)
    // Far more records than the blocks were sized for, updates among them: the grid stays
    // within four times its blocks by its buckets, by status, whatever the records.
    const bound = 4 * 8 * (16 + 1) * 3
    for (let id = 2_001; id <= 30_000; id++) {
      records.write(id, random.between(1, 3), now++)
      if (id % 3 === 0) records.write(random.between(1, id), random.between(1, 3), now++)
      if (id % 5_000 === 0) records.check(random, 20)
      assert.ok(records.order.gridCounts <= bound, `${records.order.gridCounts} counts at ${id}`)
    }
    records.check(random, 60)
  })

  it('follows a catch-up of thousands of writes given in id order without sorting anew', () => {
    const random = new Random(21)
    const records = new Records()
    let now = T
    for (let id = 1; id <= 20_000; id++) records.write(id, random.between(1, 3), now++)
    records.check(random, 20)
    const sorts = records.order.sorts
    for (let batch = 0; batch < 5; batch++) {
      // 3,000 writes over 3 s, in no order of id: updates (ties among them), creates, deletes.
      const writes = new Map<number, readonly [number, number, number]>()
      for (let write = 0; write < 3_000; write++) {
        const id = random.next() < 0.1 ? 20_000 + batch * 1_000 + write : random.between(1, 20_000)
        writes.set(id, [id, random.next() < 0.05 ? 0 : random.between(1, 3), now])
        if (random.next() < 0.7) now++
      }
      records.writeAll([...writes.values()])
      records.check(random, 40)
    }
    assert.equal(records.order.sorts, sorts, 'sorted anew')
  })

  it('is compacted after as many updates as records, and sorted anew after a clock set far back', () => {
    const random = new Random(8)
    const records = new Records()
    let now = T
    for (let id = 1; id <= 5_000; id++) records.write(id, random.between(1, 3), now++)
    // 70,000 moves leave 65,536 holes and more: the order is compacted, its counts made again.
    for (let round = 0; round < 70_000; round++) {
      records.write(random.between(1, 5_000), random.between(1, 3), now++)
    }
    records.check(random, 100)
    // An id past those the counts were made for: sorted anew, with room for it, at its use.
    records.grow(SIZE * 2)
    for (let id = SIZE + 1; id <= SIZE * 2; id += 16) records.write(id, random.between(1, 3), now++)
    records.check(random, 50)
    for (let round = 0; round < 10_000; round++) {
      records.write(random.between(1, 5_000), random.between(1, 3), now++)
    }
    records.check(random, 50)
    // Before every other record: beyond the shift allowed, the order is sorted anew at its use.
    records.write(2_500, 1, T - 1)
    records.write(2_501, 2, T - 1)
    records.check(random, 100)
  })
})
