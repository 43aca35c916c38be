import { grown, IdLists } from './sqlite-id-lists.js'

/** Terms a search tests by class at most: one bit of a mask each. */
export const MAX_CLASS_TERMS = 31

/** Status codes are below this. */
const CODES = 256

/** Which name a sort goes by: the first (0) or the last (1). */
export type NameSide = 0 | 1

/**
 * What a search asks of a class: `firstTerms[entry]` has bit `t` set where first name `entry`
 * holds term `t`, `lastTerms` the same by last name, `all` every term's bit, and `code` the
 * status code (0: any).
 */
export interface ClassTest {
  readonly firstTerms: Int32Array
  readonly lastTerms: Int32Array
  readonly all: number
  readonly code: number
}

/**
 * The ids of the records of each class, ascending: a pair of names (first and last name entries)
 * with a status. A search's terms are tested against names, so the records of one class match a
 * search, with or without a status, all or none: its matches are the union of the classes whose
 * names hold every term, found without reading a record, and so are their number and their
 * counts by name. Where names are few against records, as in most registers (the benchmark's
 * million records hold 5,795 pairs of names, 17,352 classes), that costs far less than a pass
 * over the matches of the rarest term (`SqliteRowKeys` chooses by what each would read).
 */
export class NameClasses {
  /** Each class's place in the arrays below, by first name entry, then by last and status. */
  readonly #places: Map<number, number>[] = []
  #firsts = new Int32Array(64)
  #lasts = new Int32Array(64)
  #codes = new Int32Array(64)
  /** The ids of each class's records, by place. */
  readonly #ids = new IdLists()
  /** The places of the classes of each name, by side, then by entry. */
  readonly #byName: [number[][], number[][]] = [[], []]
  /** `#taken`'s places. */
  #takenPlaces = new Int32Array(0)
  /** Marks of a union by id, 32 a word, and a mark a word marked: all zero between calls. */
  #marks = new Int32Array(0)
  #marked = new Int32Array(0)

  /** How many classes records hold, or held: a class whose records all went stays, empty. */
  get size(): number {
    return this.#ids.size
  }

  add(first: number, last: number, code: number, id: number): void {
    const places = (this.#places[first] ??= new Map())
    const key = last * CODES + code
    let place = places.get(key)
    if (place === undefined) {
      place = this.#ids.create()
      places.set(key, place)
      if (place === this.#firsts.length) {
        this.#firsts = grown(this.#firsts)
        this.#lasts = grown(this.#lasts)
        this.#codes = grown(this.#codes)
      }
      this.#firsts[place] = first
      this.#lasts[place] = last
      this.#codes[place] = code
      ;(this.#byName[0][first] ??= []).push(place)
      ;(this.#byName[1][last] ??= []).push(place)
    }
    this.#ids.add(place, id)
  }

  remove(first: number, last: number, code: number, id: number): void {
    const place = this.#places[first]?.get(last * CODES + code)
    if (place === undefined) return
    this.#ids.remove(place, id)
  }

  /**
   * The ids of the records of the classes `test` takes, ascending, into the array `into` gives
   * (as a view of it).
   */
  union(test: ClassTest, into: (length: number) => Int32Array): Int32Array {
    const taken = this.#taken(test)
    const chosen: Int32Array[] = []
    for (let i = 0; i < taken.length; i++) chosen.push(this.#ids.ids(taken[i]!))
    return this.#unite(chosen, into)
  }

  /**
   * How many records of the classes `test` takes each name of `side` holds, added into
   * `counts` by name entry.
   */
  countByName(test: ClassTest, side: NameSide, counts: Int32Array): void {
    const [names, sizes, taken] = [
      side === 0 ? this.#firsts : this.#lasts,
      this.#ids.lengths,
      this.#taken(test),
    ]
    for (let i = 0; i < taken.length; i++) counts[names[taken[i]!]!]! += sizes[taken[i]!]!
  }

  /**
   * The ids of the records of the classes `test` takes among those of name `entry` of `side`,
   * ascending, into the array `into` gives.
   */
  unionOfName(
    test: ClassTest,
    side: NameSide,
    entry: number,
    into: (length: number) => Int32Array,
  ): Int32Array {
    const { firstTerms, lastTerms, all, code } = test
    const [firsts, lasts, codes, sizes] = [
      this.#firsts,
      this.#lasts,
      this.#codes,
      this.#ids.lengths,
    ]
    const chosen: Int32Array[] = []
    for (const place of this.#byName[side][entry] ?? []) {
      const held = (firstTerms[firsts[place]!]! | lastTerms[lasts[place]!]!) === all
      if (held && (code === 0 || codes[place] === code) && sizes[place]! > 0) {
        chosen.push(this.#ids.ids(place))
      }
    }
    return this.#unite(chosen, into)
  }

  /**
   * The places of the classes `test` takes that hold records, in a work array reused by the next
   * call. Every such class holds the first term (bit 0: the caller puts the rarest first) by its
   * first name or its last, so only the classes of the names holding it are tested: a few
   * hundred for a term of three letters or more, where there are thousands of classes.
   */
  #taken({ firstTerms, lastTerms, all, code }: ClassTest): Int32Array {
    if (this.#takenPlaces.length < this.#ids.size) {
      this.#takenPlaces = new Int32Array(this.#firsts.length)
    }
    const [taken, firsts, lasts, codes, sizes] = [
      this.#takenPlaces,
      this.#firsts,
      this.#lasts,
      this.#codes,
      this.#ids.lengths,
    ]
    let count = 0
    for (const side of [0, 1] as const) {
      const [terms, classes] = [side === 0 ? firstTerms : lastTerms, this.#byName[side]]
      for (let entry = 0; entry < classes.length; entry++) {
        if ((terms[entry]! & 1) === 0) continue
        for (const place of classes[entry] ?? []) {
          // A class whose first name holds the first term is taken from that side alone.
          if (side === 1 && (firstTerms[firsts[place]!]! & 1) !== 0) continue
          const held = (firstTerms[firsts[place]!]! | lastTerms[lasts[place]!]!) === all
          if (held && (code === 0 || codes[place] === code) && sizes[place]! > 0) {
            taken[count++] = place
          }
        }
      }
    }
    return taken.subarray(0, count)
  }

  /**
   * The ids of disjoint ascending lists, ascending: marked in a bitmap by id and read back in
   * order, through a second bitmap of the words marked, so that a few ids do not cost a read of
   * every word.
   */
  #unite(chosen: readonly Int32Array[], into: (length: number) => Int32Array): Int32Array {
    let count = 0
    let largest = 0
    for (const ids of chosen) {
      count += ids.length
      largest = Math.max(largest, ids[ids.length - 1]!)
    }
    const out = into(count)
    if (chosen.length <= 1) {
      if (count > 0) out.set(chosen[0]!)
      return out.subarray(0, count)
    }
    const words = (largest >>> 5) + 1
    if (this.#marks.length < words) {
      this.#marks = new Int32Array(words + (words >> 2))
      this.#marked = new Int32Array((this.#marks.length >>> 5) + 1)
    }
    const [marks, marked] = [this.#marks, this.#marked]
    for (const ids of chosen) {
      for (let i = 0; i < ids.length; i++) {
        const [id, word] = [ids[i]!, ids[i]! >>> 5]
        marks[word]! |= 1 << (id & 31)
        marked[word >>> 5]! |= 1 << (word & 31)
      }
    }
    let at = 0
    for (let group = 0; group <= words >>> 5; group++) {
      let wordBits = marked[group]!
      if (wordBits === 0) continue
      marked[group] = 0
      while (wordBits !== 0) {
        const lowestWord = wordBits & -wordBits
        wordBits ^= lowestWord
        const word = (group << 5) | (31 - Math.clz32(lowestWord))
        let bits = marks[word]!
        marks[word] = 0
        while (bits !== 0) {
          const lowest = bits & -bits
          out[at++] = (word << 5) | (31 - Math.clz32(lowest))
          bits ^= lowest
        }
      }
    }
    return out.subarray(0, at)
  }
}
