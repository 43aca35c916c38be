/**
 * A small seedable pseudo-random generator (mulberry32) with the draws the path generator needs:
 * the same seed gives the same sequence on every machine and Node.js version.
 */
export class SeededRandom {
  #state: number

  /** `seed` is any integer; a string seeds through its FNV-1a hash (`SeededRandom.of`). */
  constructor(seed: number) {
    this.#state = seed >>> 0
  }

  /** A generator seeded by a text (a run's seed and the name of what it draws, say). */
  static of(text: string): SeededRandom {
    let hash = 0x811c9dc5
    for (let i = 0; i < text.length; i++) {
      hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193)
    }
    return new SeededRandom(hash)
  }

  /** A number in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0
    let t = this.#state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296
  }

  /** A whole number from `min` to `max`, both included, uniformly. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1))
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.next() < p
  }

  /** One of `items`, uniformly. */
  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new TypeError('nothing to pick from')
    return items[Math.floor(this.next() * items.length)]!
  }
}

/** Items with weights, drawn in proportion to their weight (a cumulative table, binary search). */
export class WeightedPool<T> {
  readonly items: readonly T[]
  readonly #cumulative: readonly number[]

  constructor(entries: readonly (readonly [T, number])[]) {
    const kept = entries.filter(([, weight]) => weight > 0)
    if (kept.length === 0) throw new TypeError('a weighted pool needs an item of positive weight')
    let total = 0
    this.items = kept.map(([item]) => item)
    this.#cumulative = kept.map(([, weight]) => (total += weight))
  }

  /** One item, with probability proportional to its weight. */
  draw(random: SeededRandom): T {
    const target = random.next() * this.#cumulative[this.#cumulative.length - 1]!
    let low = 0
    let high = this.#cumulative.length - 1
    while (low < high) {
      const middle = (low + high) >> 1
      if (this.#cumulative[middle]! > target) high = middle
      else low = middle + 1
    }
    return this.items[low]!
  }
}
