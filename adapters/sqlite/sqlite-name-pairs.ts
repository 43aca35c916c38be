import { Postings } from './sqlite-word-index.js'

/** Terms a search tests by pair at most: one bit of a mask each. */
export const MAX_PAIR_TERMS = 31

/**
 * The ids of the records of each pair of names (first and last name entries), ascending. A
 * search's terms are tested against names, so the records of one pair match a search of several
 * terms all or none: the matches are the union of the pairs whose names hold every term, found
 * without reading a record. Where names are few against records, as in most registers (the
 * benchmark's million records hold 5,795 pairs), that costs far less than testing each match of
 * the rarest term (`SqliteRowKeys#search` chooses by what each would read).
 */
export class NamePairs {
  /** Each pair's place in the arrays below, by first name entry, then by last. */
  readonly #places: Map<number, number>[] = []
  #firsts = new Int32Array(64)
  #lasts = new Int32Array(64)
  readonly #ids: Postings[] = []
  /** Marks of the union by id, 32 a word, and a mark a word marked, 32 a word: all zero between calls. */
  #marks = new Int32Array(0)
  #marked = new Int32Array(0)

  /** How many pairs records hold, or held: a pair whose records all went stays, empty. */
  get size(): number {
    return this.#ids.length
  }

  add(first: number, last: number, id: number): void {
    const places = (this.#places[first] ??= new Map())
    let place = places.get(last)
    if (place === undefined) {
      place = this.#ids.length
      places.set(last, place)
      if (place === this.#firsts.length) {
        this.#firsts = grown(this.#firsts)
        this.#lasts = grown(this.#lasts)
      }
      this.#firsts[place] = first
      this.#lasts[place] = last
      this.#ids.push(new Postings())
    }
    this.#ids[place]!.add(id)
  }

  remove(first: number, last: number, id: number): void {
    const place = this.#places[first]?.get(last)
    if (place !== undefined) this.#ids[place]!.remove(id)
  }

  /**
   * The ids of the records whose pair holds every term, ascending, into the array `into` gives
   * (as a view of it): `firstTerms[entry]` has bit `t` set where first name `entry` holds term
   * `t`, `lastTerms` the same by last name, and `all` every term's bit. The pairs' ids, disjoint,
   * are marked in a bitmap by id and read back in order, through a second bitmap of the words
   * marked, so that a few matches do not cost a read of every word.
   */
  union(
    firstTerms: Int32Array,
    lastTerms: Int32Array,
    all: number,
    into: (length: number) => Int32Array,
  ): Int32Array {
    const chosen: Int32Array[] = []
    let count = 0
    let largest = 0
    const [firsts, lasts, pairs] = [this.#firsts, this.#lasts, this.#ids]
    for (let pair = 0; pair < pairs.length; pair++) {
      if ((firstTerms[firsts[pair]!]! | lastTerms[lasts[pair]!]!) !== all) continue
      const postings = pairs[pair]!
      if (postings.length === 0) continue
      const ids = postings.ids
      chosen.push(ids)
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

function grown(array: Int32Array): Int32Array<ArrayBuffer> {
  const larger = new Int32Array(array.length * 2)
  larger.set(array)
  return larger
}
