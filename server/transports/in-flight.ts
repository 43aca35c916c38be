/**
 * What a transport has taken and not yet settled: what a graceful shutdown waits for, then
 * closes. `add` gives a slot; `release` with the same slot and item lets go of it.
 *
 * Slots in an array, reused, rather than a `Set`. A `Set` that takes and lets go of thousands of
 * entries a second keeps rebuilding its hash table, and V8 leaves each replaced table linked to
 * the next, with the entries it held. Once a full collection has moved one table to the old
 * generation, each later table, and every request it held when it was replaced, is kept through
 * the young generation's collections until the next full one. Measured under the benchmark's
 * deep page over uWS: 6–11 MB a second moved to the old generation, and a full collection (a
 * 5–10 ms pause) every 1.5–2.5 s, against nothing moved with these slots. An array slot is
 * overwritten in place and holds nothing once released.
 */
export class InFlight<T extends object> {
  readonly #slots: (T | undefined)[] = []
  readonly #free: number[] = []
  #size = 0

  /** How many items are held. */
  get size(): number {
    return this.#size
  }

  /** Holds `item`; returns its slot, for `release`. */
  add(item: T): number {
    const slot = this.#free.pop() ?? this.#slots.length
    this.#slots[slot] = item
    this.#size++
    return slot
  }

  /**
   * Lets go of `item`. Releasing twice, or a slot already given to another item, changes
   * nothing: a late second settlement cannot drop a request that is still running.
   */
  release(slot: number, item: T): void {
    if (this.#slots[slot] !== item) return
    this.#slots[slot] = undefined
    this.#free.push(slot)
    this.#size--
  }

  /** The items held now, each with its slot, taken before the caller releases any. */
  entries(): [slot: number, item: T][] {
    const held: [number, T][] = []
    this.#slots.forEach((item, slot) => {
      if (item !== undefined) held.push([slot, item])
    })
    return held
  }
}
