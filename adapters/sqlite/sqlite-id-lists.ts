import { insertInOrder, removeInOrder } from './sqlite-word-index.js'

/** The smallest room a list is given. */
const MIN_ROOM = 4

/**
 * Many lists of ascending ids in one typed array: each list a run of it with room to grow, moved
 * to the end when it outgrows its run, and every run packed again once the runs left behind take
 * a third of the array.
 *
 * One array rather than one `Postings` a list because every typed array holds its own
 * `ArrayBuffer`, and each full garbage collection sweeps every `ArrayBuffer` alive: with the
 * 17,352 classes of the benchmark's million records one array each (`NameClasses`), that sweep
 * took 1–5 ms of each full collection's pause on the server's core, about 0.2 ms without them;
 * every request in flight waits out that pause.
 */
export class IdLists {
  #ids = new Int32Array(1024)
  /** Where each list's run starts, how many ids it holds, and how many it has room for. */
  #starts = new Int32Array(64)
  #lengths = new Int32Array(64)
  #rooms = new Int32Array(64)
  #count = 0
  /** The end of the last run. */
  #end = 0
  /** Words of `#ids` before `#end` no list's run holds: runs left behind. */
  #abandoned = 0

  /** How many lists there are. */
  get size(): number {
    return this.#count
  }

  /** Makes a new, empty list and returns its number. */
  create(): number {
    const list = this.#count++
    if (list === this.#starts.length) {
      this.#starts = grown(this.#starts, this.#count)
      this.#lengths = grown(this.#lengths, this.#count)
      this.#rooms = grown(this.#rooms, this.#count)
    }
    this.#starts[list] = this.#end
    return list
  }

  /** How many ids the lists have room for in all, runs left behind included. */
  get room(): number {
    return this.#ids.length
  }

  /**
   * How many ids each list holds, by list number, in an array that is only good until the next
   * `create`: read it, do not change it.
   */
  get lengths(): Int32Array {
    return this.#lengths
  }

  /**
   * The ids of list `list`, ascending, as a view that is only good until the next `add` to any
   * list (which may move the runs): read it, do not keep or change it.
   */
  ids(list: number): Int32Array {
    const start = this.#starts[list]!
    return this.#ids.subarray(start, start + this.#lengths[list]!)
  }

  /** Adds `id` to list `list` (nothing when it holds it already). */
  add(list: number, id: number): void {
    const length = this.#lengths[list]!
    if (length === this.#rooms[list]) this.#grow(list)
    if (insertInOrder(this.#ids, this.#starts[list]!, length, id)) this.#lengths[list] = length + 1
  }

  /** Takes `id` out of list `list` (nothing when it does not hold it). */
  remove(list: number, id: number): void {
    const length = this.#lengths[list]!
    if (removeInOrder(this.#ids, this.#starts[list]!, length, id)) this.#lengths[list] = length - 1
  }

  /** Gives list `list` twice its room: in place when its run is the last, else at the end. */
  #grow(list: number): void {
    const [start, room] = [this.#starts[list]!, this.#rooms[list]!]
    const wanted = Math.max(MIN_ROOM, room * 2)
    const last = start + room === this.#end
    if (!last && 3 * (this.#abandoned + room) > this.#end) this.#pack()
    const from = this.#starts[list]!
    const atEnd = from + room === this.#end
    const to = atEnd ? from : this.#end
    const end = to + wanted
    if (end > this.#ids.length) {
      const larger = new Int32Array(Math.max(end, this.#ids.length * 2))
      larger.set(this.#ids.subarray(0, this.#end))
      this.#ids = larger
    }
    if (!atEnd) {
      this.#ids.copyWithin(to, from, from + this.#lengths[list]!)
      this.#abandoned += room
      this.#starts[list] = to
    }
    this.#rooms[list] = wanted
    this.#end = end
  }

  /** Packs the runs, in list order, each with the room it had, leaving none behind. */
  #pack(): void {
    let needed = 0
    for (let list = 0; list < this.#count; list++) needed += this.#rooms[list]!
    const packed = new Int32Array(Math.max(1024, needed + (needed >> 1)))
    let at = 0
    for (let list = 0; list < this.#count; list++) {
      const start = this.#starts[list]!
      packed.set(this.#ids.subarray(start, start + this.#lengths[list]!), at)
      this.#starts[list] = at
      at += this.#rooms[list]!
    }
    this.#ids = packed
    this.#end = at
    this.#abandoned = 0
  }
}

/** A copy of `array` in one twice as long, or `least` long if that is more. */
export function grown(array: Int32Array, least = 0): Int32Array<ArrayBuffer> {
  const larger = new Int32Array(Math.max(least, array.length * 2))
  larger.set(array)
  return larger
}
