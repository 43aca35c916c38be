import type { SortGroups } from './sqlite-page-selection.js'

/**
 * How the grid divides the order and the ids: blocks of at least 2^`minBlockBits` places, buckets
 * of at least `minBucket` ids, larger for more than `maxBlocks` blocks or `maxBuckets` buckets.
 * The grid's size is their product (by status), so both grow with the records (at a million, 245
 * blocks of 4,096 places by 1,954 buckets of 2,048 ids: 6 MB; at ten million, as many blocks of
 * 65,536 by 1,221 buckets of 32,768), and a page reads two buckets' ids and a block's places.
 * Past four times `maxBlocks` (records created since the last sort), the order is sorted anew
 * with larger blocks. Smaller figures are for tests.
 */
export interface GridSizes {
  readonly minBlockBits: number
  readonly minBucket: number
  readonly maxBlocks: number
  readonly maxBuckets: number
}

const GRID_SIZES: GridSizes = {
  minBlockBits: 12,
  minBucket: 2048,
  maxBlocks: 256,
  maxBuckets: 2048,
}

/**
 * A record updated to a time before this many others of the order (a clock set back) marks the
 * order for a rebuild rather than shifting them all.
 */
const MAX_SHIFT = 1024
/** Holes left by updates and deletes at which the order is compacted (and half its places). */
const MIN_HOLES = 65_536

/**
 * A write the order follows: record `id` held status `before` (0: no record), now `after` (0:
 * deleted), and its update time changed (`moved`) or not.
 */
export interface UpdateChange {
  readonly id: number
  readonly before: number
  readonly after: number
  readonly moved: boolean
}

/** What the order reads of the records' copy, by id: the arrays it holds at the time. */
export interface UpdateKeys {
  /** Status code by id; 0 for no record. */
  readonly status: Uint8Array
  /** Update time by id. */
  readonly updated: Float64Array
}

/**
 * Every record's id in the order of a sort by update, (`updated_at`, id), kept as writes come,
 * and counts of its places by block of the order, by status and by bucket of ids: the page of
 * any range of ids (a date range, when records were created in id order) and status sorted by
 * update is found from the counts of each block, then read from one or two blocks, at about the
 * same cost wherever it lies; reading every record of the range, then selecting the page, cost
 * 2.5–8 ms for a range of half a million ids.
 *
 * An update moves its record to the end of the order (its time is the latest, or one of those
 * tied with it, placed by id), leaving a hole where it was; the holes are compacted once they
 * are as many as the records, and a time far back (a clock set back) has the order sorted anew
 * before its next use.
 */
export class UpdateOrder {
  /** Ids by (update time, id); 0 for a hole. */
  #order = new Int32Array(0)
  #length = 0
  #holes = 0
  /** Place + 1 in the order by id; 0 for none. */
  #place = new Int32Array(0)
  /**
   * The block of each id's place, in 16 bits (while blocks are fewer than 65,536): what a page
   * sorted by update reads by match, half the memory of the places, so missing the caches less.
   */
  #blockOf = new Uint16Array(0)
  /** Buckets of ids per row of the grid, and ids per bucket. */
  #buckets = 0
  #bucket: number
  /** Places per block (a power of two), and its bits. */
  #blockBits: number
  #block: number
  readonly #sizes: GridSizes

  /** By status code, a row per block of the order: its records by bucket of ids (`GridRows`). */
  #grid: GridRows[] = []
  /** Blocks the grid's rows have room for. */
  #blocks = 0
  /** `page`'s counts by block. */
  #counts = new Int32Array(0)
  /** Whether the order must be sorted anew before it is used. */
  #stale = true
  #sorts = 0

  /** Ids the grid counts: a larger one has the order sorted anew with room for it. */
  #idLimit = 0

  constructor(sizes: GridSizes = GRID_SIZES) {
    this.#sizes = sizes
    this.#bucket = sizes.minBucket
    this.#blockBits = sizes.minBlockBits
    this.#block = 1 << sizes.minBlockBits
  }

  /**
   * Forgets every record, for ids up to `idLimit`: the order is sorted anew from the copy's keys
   * at `prepare` or its first use.
   */
  reset(idLimit: number): void {
    this.#idLimit = idLimit
    this.#stale = true
    this.#order = new Int32Array(0)
    this.#place = new Int32Array(0)
    this.#blockOf = new Uint16Array(0)
    this.#grid = []
    this.#length = 0
    this.#holes = 0
  }

  /**
   * Follows a write of record `id`: it held status `before` (0: no record), now `after` (0:
   * deleted), and its update time changed (`moved`) or not; `keys` hold its new values.
   */
  change(id: number, before: number, after: number, moved: boolean, keys: UpdateKeys): void {
    if (this.#stale) return
    const place = id < this.#place.length ? this.#place[id]! - 1 : -1
    if (before !== 0 && place >= 0) {
      if (!moved && after !== 0) {
        if (after !== before) {
          this.#count(place, before, id, -1)
          this.#count(place, after, id, 1)
        }
        return
      }
      this.#count(place, before, id, -1)
      this.#order[place] = 0
      this.#place[id] = 0
      this.#holes++
    }
    if (after !== 0) this.#insert(id, after, keys)
    if (this.#holes >= MIN_HOLES && this.#holes * 2 >= this.#length) this.#compact(keys)
  }

  /**
   * Follows the writes of a catch-up, taken in the order of their new update times, then ids,
   * rather than as given: the copy reads the rows written since its last look in id order, and
   * there a record updated before the thousand others after it in `changes` would have had the
   * order sorted anew (110 ms at a million records, on the event loop, whenever reads resumed
   * after a second of writes without them). In that order each one goes to the end.
   */
  changeAll(changes: UpdateChange[], keys: UpdateKeys): void {
    if (this.#stale) return
    const updated = keys.updated
    changes.sort((a, b) => updated[a.id]! - updated[b.id]! || a.id - b.id)
    for (const { id, before, after, moved } of changes) this.change(id, before, after, moved, keys)
  }

  /** How many times the records were sorted: once a load, and again after a clock set back. */
  get sorts(): number {
    return this.#sorts
  }

  /**
   * The ids at places [start, end) of the records with ids in [first, last] and status `code`
   * (0: any), in (update time, id) order, `places` telling them from how many such records
   * there are; the caller's range must hold only records of its dates.
   */
  page(
    first: number,
    last: number,
    code: number,
    places: (total: number) => [number, number],
    keys: UpdateKeys,
  ): number[] {
    this.prepare(keys)
    const blocks = Math.ceil(this.#length / this.#block)
    // Kept from call to call: a buffer made and let go at every page is one more for V8 to sweep.
    if (this.#counts.length < blocks) this.#counts = new Int32Array(blocks + (blocks >> 2))
    const counts = this.#counts
    counts.fill(0, 0, blocks)
    const status = keys.status
    // The two buckets the range starts and ends within, record by record.
    const lowBucket = Math.floor(first / this.#bucket)
    const highBucket = Math.floor(last / this.#bucket)
    const edge = (from: number, to: number) => {
      for (let id = from; id <= to && id < this.#place.length; id++) {
        const held = status[id]!
        if (held !== 0 && (code === 0 || held === code)) {
          counts[((this.#place[id]! - 1) / this.#block) | 0]!++
        }
      }
    }
    edge(first, Math.min(last, (lowBucket + 1) * this.#bucket - 1))
    if (highBucket > lowBucket) edge(highBucket * this.#bucket, last)
    // The buckets between, from the grid.
    let total = 0
    for (let block = 0; block < blocks; block++) {
      if (highBucket > lowBucket + 1) {
        for (const grid of code === 0 ? this.#grid : [this.#grid[code]]) {
          if (grid !== undefined)
            counts[block]! += grid.before(block, highBucket) - grid.before(block, lowBucket + 1)
        }
      }
      total += counts[block]!
    }
    const [start, end] = places(total)
    const page: number[] = []
    let passed = 0
    let block = 0
    while (block < blocks && passed + counts[block]! <= start) passed += counts[block++]!
    const order = this.#order
    for (let at = block * this.#block; at < this.#length && passed < end; at++) {
      const id = order[at]!
      if (id < first || id > last) continue
      const held = status[id]!
      if (held === 0 || (code !== 0 && held !== code)) continue
      if (passed >= start) page.push(id)
      passed++
    }
    return page
  }

  /**
   * The records in the order by update as groups of a sort (`selectByGroup`): blocks of places,
   * each id ordered within its block by its place.
   */
  groups(keys: UpdateKeys): SortGroups {
    this.prepare(keys)
    const groups = (this.#length >> this.#blockBits) + 1
    return groups <= 0x10000
      ? { via: this.#blockOf, shift: 0, groups, within: this.#place }
      : { via: this.#place, shift: this.#blockBits, groups, within: this.#place }
  }

  /**
   * What reading a page of `limit` from the order costs against reading the `span` ids of its
   * range, in ids read: the two edge buckets, the blocks' counts, and the order's places between
   * the page's first and last.
   */
  cheaperThanRange(span: number, limit: number): boolean {
    const length = Math.max(this.#length, 1)
    const cost =
      2 * this.#bucket + length / this.#block + this.#block + (limit * length) / Math.max(span, 1)
    return cost < span
  }

  /** The grid's counts, all statuses together: what it holds in memory, 4 bytes each. */
  get gridCounts(): number {
    return this.#grid.reduce((sum, grid) => sum + (grid?.length ?? 0), 0)
  }

  /** Sorts the order now if it must be (at load, rather than at the first page asked for). */
  prepare(keys: UpdateKeys): void {
    if (this.#stale) this.#build(keys)
  }

  /** Sorts the records anew: by update time (a radix sort, stable), their ids ascending. */
  #build(keys: UpdateKeys): void {
    const { status, updated } = keys
    this.#sorts++
    let live = 0
    let least = Infinity
    let most = -Infinity
    for (let id = 0; id < status.length; id++) {
      if (status[id] === 0) continue
      live++
      least = Math.min(least, updated[id]!)
      most = Math.max(most, updated[id]!)
    }
    const ids = new Int32Array(live)
    let at = 0
    for (let id = 0; id < status.length; id++) if (status[id] !== 0) ids[at++] = id
    // Blocks and buckets sized for these records and ids (`GridSizes`).
    const { minBlockBits, minBucket, maxBlocks, maxBuckets } = this.#sizes
    const idCount = Math.max(this.#idLimit, status.length) + 1
    const blockBits = Math.ceil(Math.log2(Math.max(1, live) / maxBlocks))
    this.#blockBits = Math.max(minBlockBits, blockBits)
    this.#block = 1 << this.#blockBits
    this.#bucket = Math.max(minBucket, 2 ** Math.ceil(Math.log2(idCount / maxBuckets)))
    this.#order = new Int32Array(Math.max(this.#block, live + (live >> 3)))
    this.#order.set(live > 0 ? sortByKey(ids, updated, least, most) : ids)
    this.#length = live
    this.#holes = 0
    this.#place = new Int32Array(status.length)
    this.#blockOf = new Uint16Array(status.length)
    this.#buckets = Math.ceil(idCount / this.#bucket)
    this.#stale = false
    this.#regrid(keys)
  }

  /** The holes taken out, the records' order kept. */
  #compact(keys: UpdateKeys): void {
    let kept = 0
    for (let at = 0; at < this.#length; at++) {
      const id = this.#order[at]!
      if (id !== 0) this.#order[kept++] = id
    }
    this.#order.fill(0, kept, this.#length)
    this.#length = kept
    this.#holes = 0
    this.#regrid(keys)
  }

  /** The places and the grid made again from the order. */
  #regrid({ status }: UpdateKeys): void {
    if (this.#place.length < status.length) {
      this.#place = new Int32Array(status.length)
      this.#blockOf = new Uint16Array(status.length)
    }
    this.#place.fill(0)
    this.#blocks = Math.max(1, Math.ceil(this.#order.length / this.#block))
    const width = this.#buckets + 1
    // Each status's records by block and bucket, then those counts made into the grid's rows.
    const tallies: Int32Array[] = []
    for (let at = 0; at < this.#length; at++) {
      const id = this.#order[at]!
      if (id === 0) continue
      this.#place[id] = at + 1
      this.#blockOf[id] = at >> this.#blockBits
      const tally = (tallies[status[id]!] ??= new Int32Array(this.#blocks * width))
      tally[((at / this.#block) | 0) * width + ((id / this.#bucket) | 0)]!++
    }
    this.#grid = tallies.map((tally) => GridRows.of(tally, this.#blocks, width))
  }

  /** Places `id` by its update time: at the end, or shifting the few later ones. */
  #insert(id: number, code: number, { status, updated }: UpdateKeys): void {
    if (id >= this.#buckets * this.#bucket) {
      this.#stale = true
      return
    }
    const time = updated[id]!
    let at = this.#length
    while (at > 0) {
      const other = this.#order[at - 1]!
      if (other !== 0 && (updated[other]! < time || (updated[other] === time && other < id))) break
      if (this.#length - at >= MAX_SHIFT) {
        this.#stale = true
        return
      }
      at--
    }
    if (this.#length === this.#order.length) this.#grow()
    for (let from = this.#length - 1; from >= at; from--) {
      const moving = this.#order[from]!
      this.#order[from + 1] = moving
      if (moving === 0) continue
      this.#place[moving] = from + 2
      this.#blockOf[moving] = (from + 1) >> this.#blockBits
      if ((from + 1) % this.#block === 0) {
        const held = status[moving]!
        this.#count(from, held, moving, -1)
        this.#count(from + 1, held, moving, 1)
      }
    }
    this.#length++
    this.#order[at] = id
    if (id >= this.#place.length) this.#growPlaces(id)
    this.#place[id] = at + 1
    this.#blockOf[id] = at >> this.#blockBits
    this.#count(at, code, id, 1)
  }

  /** Adds `delta` to the count of `id` (of status `code`) at place `at`. */
  #count(at: number, code: number, id: number, delta: number): void {
    const width = this.#buckets + 1
    const block = (at / this.#block) | 0
    if (block >= this.#blocks) {
      // Blocks far past those the order was sized for: sorted anew, with larger ones.
      if (block >= 4 * this.#sizes.maxBlocks) {
        this.#stale = true
        return
      }
      this.#growGrid(block + 1)
    }
    const grid = (this.#grid[code] ??= new GridRows(this.#blocks, width))
    grid.add(block, (id / this.#bucket) | 0, delta)
  }

  #grow(): void {
    const grown = new Int32Array(Math.max(this.#block, this.#order.length * 2))
    grown.set(this.#order)
    this.#order = grown
  }

  #growPlaces(id: number): void {
    const length = Math.max(id + 1, this.#place.length * 2)
    const grown = new Int32Array(length)
    grown.set(this.#place)
    this.#place = grown
    const blocks = new Uint16Array(length)
    blocks.set(this.#blockOf)
    this.#blockOf = blocks
  }

  #growGrid(blocks: number): void {
    const to = Math.max(blocks, this.#blocks * 2)
    this.#grid = this.#grid.map((grid) => grid.grown(to))
    this.#blocks = to
  }
}

/** Bucket boundaries per section of a row of {@link GridRows}, as a power of two. */
const SECTION_BITS = 6
const SECTION_MASK = (1 << SECTION_BITS) - 1

/**
 * One status's records by block of the order (a row each) and bucket of ids, read as the records
 * of the buckets before a boundary `j` of a row (`before`, 0 ≤ j ≤ buckets): the boundaries go
 * by sections of 64, and a row holds, for each boundary, the records since its section's start,
 * and for each section, those before it. A change of one bucket's count rewrites at most 63 of
 * the first and one of the second a section, where counts cumulative over the whole row rewrote
 * every boundary after the bucket (up to 1,954 at a million records, twice an update); a read is
 * two numbers instead of one.
 */
class GridRows {
  readonly #width: number
  readonly #sectionsWidth: number
  /** By row and boundary: the records of the buckets from its section's start to it. */
  readonly #within: Int32Array
  /** By row and section: the records of the buckets before the section. */
  readonly #sections: Int32Array

  /** Empty rows for `blocks` blocks of `width - 1` buckets. */
  constructor(blocks: number, width: number) {
    this.#width = width
    this.#sectionsWidth = ((width - 1) >> SECTION_BITS) + 1
    this.#within = new Int32Array(blocks * width)
    this.#sections = new Int32Array(blocks * this.#sectionsWidth)
  }

  /** The rows of `counts`, the records by block (row of `width`) and bucket. */
  static of(counts: Int32Array, blocks: number, width: number): GridRows {
    const rows = new GridRows(blocks, width)
    for (let block = 0; block < blocks; block++) {
      const [row, sectionRow] = [block * width, block * rows.#sectionsWidth]
      let total = 0
      for (let j = 0; j < width; j++) {
        if ((j & SECTION_MASK) === 0) rows.#sections[sectionRow + (j >> SECTION_BITS)] = total
        else rows.#within[row + j] = rows.#within[row + j - 1]! + counts[row + j - 1]!
        if (j < width - 1) total += counts[row + j]!
      }
    }
    return rows
  }

  /** Numbers held, 4 bytes each. */
  get length(): number {
    return this.#within.length + this.#sections.length
  }

  /** The records of row `block` in the buckets before boundary `j`. */
  before(block: number, j: number): number {
    return (
      this.#sections[block * this.#sectionsWidth + (j >> SECTION_BITS)]! +
      this.#within[block * this.#width + j]!
    )
  }

  /** Adds `delta` to the records of row `block` in `bucket`. */
  add(block: number, bucket: number, delta: number): void {
    const section = bucket >> SECTION_BITS
    const row = block * this.#width
    const end = Math.min(this.#width, (section + 1) << SECTION_BITS)
    for (let j = bucket + 1; j < end; j++) this.#within[row + j]! += delta
    const sectionRow = block * this.#sectionsWidth
    for (let s = section + 1; s < this.#sectionsWidth; s++) this.#sections[sectionRow + s]! += delta
  }

  /** The same rows with room for `blocks` rows. */
  grown(blocks: number): GridRows {
    const grown = new GridRows(blocks, this.#width)
    grown.#within.set(this.#within)
    grown.#sections.set(this.#sections)
    return grown
  }
}

/**
 * `ids` (ascending) by `keys[id]`, ties kept in id order: a radix sort of 16 bits a pass over
 * the keys' offsets from `least`, when they are whole numbers (milliseconds); a comparison sort
 * otherwise.
 */
function sortByKey(
  ids: Int32Array,
  keys: Float64Array,
  least: number,
  most: number,
): Int32Array<ArrayBufferLike> {
  const range = most - least
  let whole = Number.isSafeInteger(range)
  for (let i = 0; whole && i < ids.length; i++) whole = Number.isInteger(keys[ids[i]!]!)
  if (!whole) return ids.sort((a, b) => keys[a]! - keys[b]! || a - b)
  let from: Int32Array<ArrayBufferLike> = ids
  let to: Int32Array<ArrayBufferLike> = new Int32Array(ids.length)
  const counts = new Int32Array(65_537)
  for (let shift = 1; shift <= range; shift *= 65_536) {
    counts.fill(0)
    for (let i = 0; i < from.length; i++) {
      counts[(Math.floor((keys[from[i]!]! - least) / shift) & 0xffff) + 1]!++
    }
    for (let digit = 1; digit < counts.length; digit++) counts[digit]! += counts[digit - 1]!
    for (let i = 0; i < from.length; i++) {
      const id = from[i]!
      to[counts[Math.floor((keys[id]! - least) / shift) & 0xffff]!++] = id
    }
    ;[from, to] = [to, from]
  }
  return from
}
