/** Where an offset falls among counted keys: the bucket's index and the rows counted before it. */
export interface FoundBucket {
  readonly index: number
  /** Rows in the buckets passed on the way, in the direction counted. */
  readonly before: number
}

/**
 * Counts per key, kept in key order, with the id bounds of each key's rows and the running sums
 * that say in which key the row at an offset falls: a binary search instead of summing every
 * bucket (a thousand blocks of ids took SQLite 0.8 ms a page). The running sums are made again
 * on the first read after a change, in one pass over the keys.
 */
export class CountedKeys<K> {
  readonly #compare: (a: K, b: K) => number
  readonly #keys: K[] = []
  readonly #counts: number[] = []
  readonly #minIds: number[] = []
  readonly #maxIds: number[] = []
  /** `#through[i]`: the rows counted in keys 0 to i - 1; stale when `undefined`. */
  #through: Float64Array | undefined

  constructor(compare: (a: K, b: K) => number) {
    this.#compare = compare
  }

  get size(): number {
    return this.#keys.length
  }

  key(index: number): K {
    return this.#keys[index]!
  }

  count(index: number): number {
    return this.#counts[index]!
  }

  minId(index: number): number {
    return this.#minIds[index]!
  }

  maxId(index: number): number {
    return this.#maxIds[index]!
  }

  /** Adds `n` (negative to take away) to the count of `key`, widening its id bounds. */
  add(key: K, n: number, minId = Infinity, maxId = -Infinity): void {
    const keys = this.#keys
    const last = keys.length - 1
    const index = last >= 0 && this.#compare(keys[last]!, key) < 0 ? last + 1 : this.lowerBound(key)
    if (index === keys.length || this.#compare(keys[index]!, key) !== 0) {
      keys.splice(index, 0, key)
      this.#counts.splice(index, 0, 0)
      this.#minIds.splice(index, 0, Infinity)
      this.#maxIds.splice(index, 0, -Infinity)
    }
    this.#counts[index] = this.#counts[index]! + n
    if (minId < this.#minIds[index]!) this.#minIds[index] = minId
    if (maxId > this.#maxIds[index]!) this.#maxIds[index] = maxId
    this.#through = undefined
  }

  /** The index of the first key at or after `key` (`size` when none). */
  lowerBound(key: K): number {
    let low = 0
    let high = this.#keys.length
    while (low < high) {
      const middle = (low + high) >>> 1
      if (this.#compare(this.#keys[middle]!, key) < 0) low = middle + 1
      else high = middle
    }
    return low
  }

  /** The rows counted in the keys at indexes [from, to). */
  sum(from: number, to: number): number {
    const through = this.#sums()
    return through[to]! - through[from]!
  }

  /**
   * The key among indexes [from, to) holding the row at `offset` (from 0), counting upwards, or
   * from `to` downwards when `descending`; `undefined` past the last row.
   */
  find(offset: number, from: number, to: number, descending: boolean): FoundBucket | undefined {
    const through = this.#sums()
    if (offset < 0 || offset >= through[to]! - through[from]!) return undefined
    if (!descending) {
      // The first index i with through[i + 1] > through[from] + offset.
      const target = through[from]! + offset
      let low = from
      let high = to - 1
      while (low < high) {
        const middle = (low + high) >>> 1
        if (through[middle + 1]! > target) high = middle
        else low = middle + 1
      }
      return { index: low, before: through[low]! - through[from]! }
    }
    // The last index i with through[i] < through[to] - offset.
    const target = through[to]! - offset
    let low = from
    let high = to - 1
    while (low < high) {
      const middle = (low + high + 1) >>> 1
      if (through[middle]! < target) low = middle
      else high = middle - 1
    }
    return { index: low, before: through[to]! - through[low + 1]! }
  }

  #sums(): Float64Array {
    let through = this.#through
    if (through === undefined) {
      const counts = this.#counts
      through = new Float64Array(counts.length + 1)
      for (let i = 0; i < counts.length; i++) through[i + 1] = through[i]! + counts[i]!
      this.#through = through
    }
    return through
  }
}

/** Numbers in ascending order. */
export const byNumber = (a: number, b: number): number => a - b

/**
 * Strings in the order of SQLite's BINARY collation, which compares UTF-8 bytes, that is code
 * points: JavaScript's `<` compares UTF-16 units, which puts a character past U+FFFF (a
 * surrogate pair, from U+D800) before one in U+E000–U+FFFF.
 */
export function byCodePoint(a: string, b: string): number {
  const length = Math.min(a.length, b.length)
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i)
    const y = b.charCodeAt(i)
    if (x !== y) {
      const surrogateX = x >= 0xd800 && x <= 0xdfff
      const surrogateY = y >= 0xd800 && y <= 0xdfff
      if (surrogateX !== surrogateY && (x >= 0xe000 || y >= 0xe000)) return surrogateX ? 1 : -1
      return x - y
    }
  }
  return a.length - b.length
}
