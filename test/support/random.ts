/**
 * A small seeded generator (mulberry32): a failing run can be replayed with the same numbers,
 * from `TEST_SEED` when no seed is given.
 */
export class Random {
  readonly seed: number
  #state: number

  constructor(seed = Number(process.env['TEST_SEED'] ?? Math.floor(Math.random() * 2 ** 31))) {
    this.seed = seed
    this.#state = seed >>> 0
  }

  /** A number in [0, 1). */
  next(): number {
    this.#state = (this.#state + 0x6d2b79f5) >>> 0
    let t = this.#state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }

  /** A whole number in [min, max]. */
  between(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1))
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!
  }
}
