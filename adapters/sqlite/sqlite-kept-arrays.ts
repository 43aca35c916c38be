import { SecondSight } from './sqlite-second-sight.js'

/**
 * Arrays of numbers kept by key (a search's matches, or their counts by group), copied one after
 * the other into one array, grown to hold `maxValues` at most, and forgotten all at once when it
 * is full, when `maxKeys` are kept, or when the caller says the records changed: one buffer for
 * all of them, where an array each, made and let go at every search of several words or with
 * filters, had V8 sweep tens of thousands of buffers (a full collection every 300 ms, pausing
 * 5–12 ms).
 */
export class KeptArrays {
  readonly #maxValues: number
  readonly #maxKeys: number
  /** Where each key's values start in `#values`, and how many. */
  readonly #places = new Map<string, [start: number, length: number]>()
  #values = new Int32Array(0)
  #used = 0
  /** The keys asked for before, for `keepIfAskedAgain`. */
  readonly #asked = new SecondSight()

  constructor(maxValues: number, maxKeys = Number.POSITIVE_INFINITY) {
    this.#maxValues = maxValues
    this.#maxKeys = maxKeys
  }

  get(key: string): Int32Array | undefined {
    const place = this.#places.get(key)
    return place === undefined ? undefined : this.#values.subarray(place[0], place[0] + place[1])
  }

  /** Keeps a copy of `values` (which may be a scratch array) under `key`, and returns it. */
  keep(key: string, values: Int32Array): Int32Array {
    // Too many for the most kept: returned as they are, for this call alone.
    if (values.length > this.#maxValues) return values
    if (this.#used + values.length > this.#maxValues || this.#places.size >= this.#maxKeys) {
      this.clear()
    }
    const needed = this.#used + values.length
    if (needed > this.#values.length) {
      const grown = new Int32Array(Math.min(this.#maxValues, Math.max(needed, 65_536) * 2))
      grown.set(this.#values.subarray(0, this.#used))
      this.#values = grown
    }
    this.#values.set(values, this.#used)
    this.#places.set(key, [this.#used, values.length])
    this.#used += values.length
    return this.#values.subarray(this.#used - values.length, this.#used)
  }

  /**
   * `keep`, from the second time `key` is asked for (`SecondSight`): the first time, `values` are
   * returned as they are, for this call alone, and a request made once leaves nothing behind.
   */
  keepIfAskedAgain(key: string, values: Int32Array): Int32Array {
    return this.#asked.again(key) ? this.keep(key, values) : values
  }

  clear(): void {
    this.#places.clear()
    this.#used = 0
  }
}
