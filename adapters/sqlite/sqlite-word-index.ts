import { byCodePoint } from './sqlite-counted-keys.js'

/**
 * Ids of every prefix's matches kept at most (16 MB): a common prefix's union of many words is
 * made once, and kept in step by the writes to its words.
 */
const MAX_KEPT_IDS = 4_000_000
/** Prefixes up to this many UTF-16 units long have their unions kept for good (`#pinned`). */
const PINNED_LENGTH = 2

/** Ascending ids (the records holding a word, or a name), in a typed array that grows. */
export class Postings {
  #ids: Int32Array<ArrayBufferLike>
  #length: number

  /** Holds `ids`, ascending, which it then owns. */
  constructor(ids: Int32Array<ArrayBufferLike> = new Int32Array(0)) {
    this.#ids = ids
    this.#length = ids.length
  }

  get length(): number {
    return this.#length
  }

  get ids(): Int32Array<ArrayBufferLike> {
    return this.#ids.subarray(0, this.#length)
  }

  add(id: number): void {
    if (this.#length === this.#ids.length) {
      const grown = new Int32Array(Math.max(4, this.#ids.length * 2))
      grown.set(this.#ids)
      this.#ids = grown
    }
    if (insertInOrder(this.#ids, 0, this.#length, id)) this.#length++
  }

  remove(id: number): void {
    if (removeInOrder(this.#ids, 0, this.#length, id)) this.#length--
  }
}

/**
 * The search words (D16) of every record, in memory: for each distinct word, the ids of the
 * records holding it, and the words in code point order, so that the words a prefix matches are
 * one run of them. A search's matches are the union of its prefix's words' ids, and the
 * intersection of those of its terms; answered from here, a search's total and any of its pages
 * cost what the matches' union costs once, and nothing a match afterwards, where FTS5 visits every
 * match at every write (35 ns each).
 */
export class WordIndex {
  /** Every word, in code point order (FTS5 compares UTF-8 bytes, the same order). */
  readonly #words: string[] = []
  readonly #postings = new Map<string, Postings>()
  /** The union of the ids of the words of a prefix, ascending, while kept. */
  readonly #kept = new Map<string, Postings>()
  #keptIds = 0
  /**
   * The unions of prefixes of one or two characters, kept for good apart from the others: the
   * commonest and largest (`m`: 281,000 ids), which let go and made again through the LRU cost
   * 1–2 ms each time and a full garbage collection every few hundred milliseconds. Each id is in
   * at most two such unions a word: 20 MB at a million records.
   */
  readonly #pinned = new Map<string, Postings>()

  /** Counts `id` in for each of `words`. */
  add(id: number, words: readonly string[]): void {
    for (const word of words) {
      let postings = this.#postings.get(word)
      if (postings === undefined) {
        postings = new Postings()
        this.#postings.set(word, postings)
        this.#words.splice(this.#placeOf(word), 0, word)
      }
      postings.add(id)
      this.#eachKeptPrefix(word, (union) => union.add(id))
    }
  }

  /**
   * Counts `id` out for each of `words`: all the record's words, since the kept union of a
   * prefix loses it whichever of them starts with the prefix (a changed record is counted out of
   * its old words, then in again for its new ones). A word no record holds any more stays, empty.
   */
  remove(id: number, words: readonly string[]): void {
    for (const word of words) {
      this.#postings.get(word)?.remove(id)
      this.#eachKeptPrefix(word, (union) => union.remove(id))
    }
  }

  /**
   * The ids of the records with a word starting with every term, ascending. The array returned
   * may be kept and returned again: read it, do not change it.
   */
  search(terms: readonly string[]): Int32Array {
    const unions = [...new Set(terms)].map((term) => this.#union(term))
    unions.sort((a, b) => a.length - b.length)
    let ids = unions[0] ?? new Int32Array(0)
    for (const other of unions.slice(1)) ids = intersect(ids, other)
    return ids
  }

  /**
   * How many ids the words starting with `prefix` hold together (a record holding two of them
   * counts twice): what its union would cost, known without making it.
   */
  weight(prefix: string): number {
    const kept = this.#pinned.get(prefix) ?? this.#kept.get(prefix)
    if (kept !== undefined) return kept.length
    let weight = 0
    for (let at = this.#placeOf(prefix); at < this.#words.length; at++) {
      const word = this.#words[at]!
      if (!word.startsWith(prefix)) break
      weight += this.#postings.get(word)!.length
    }
    return weight
  }

  /** The ids of the records with a word starting with `prefix`, ascending (read, do not change). */
  matches(prefix: string): Int32Array {
    return this.#union(prefix)
  }

  #union(prefix: string): Int32Array {
    const pinned = this.#pinned.get(prefix)
    if (pinned !== undefined) return pinned.ids
    const kept = this.#kept.get(prefix)
    if (kept !== undefined) {
      // Most recently used last: the first ones are the first let go.
      this.#kept.delete(prefix)
      this.#kept.set(prefix, kept)
      return kept.ids
    }
    const lists: Int32Array[] = []
    for (let at = this.#placeOf(prefix); at < this.#words.length; at++) {
      const word = this.#words[at]!
      if (!word.startsWith(prefix)) break
      const ids = this.#postings.get(word)!.ids
      if (ids.length > 0) lists.push(ids)
    }
    // A prefix of one word (most of four letters and more) is that word's ids, kept anyway.
    if (lists.length <= 1) return lists[0] ?? new Int32Array(0)
    const union = unionOf(lists)
    if (prefix.length <= PINNED_LENGTH) {
      this.#pinned.set(prefix, new Postings(union))
      return union
    }
    for (const [least, ids] of this.#kept) {
      if (this.#keptIds + union.length <= MAX_KEPT_IDS) break
      this.#kept.delete(least)
      this.#keptIds -= ids.length
    }
    this.#kept.set(prefix, new Postings(union))
    this.#keptIds += union.length
    return union
  }

  /** Calls `change` with the kept (or pinned) union of every prefix of `word`. */
  #eachKeptPrefix(word: string, change: (union: Postings) => void): void {
    for (let length = 1; length <= Math.min(PINNED_LENGTH, word.length); length++) {
      const union = this.#pinned.get(word.slice(0, length))
      if (union !== undefined) change(union)
    }
    if (this.#kept.size === 0) return
    for (let length = PINNED_LENGTH + 1; length <= word.length; length++) {
      const union = this.#kept.get(word.slice(0, length))
      if (union !== undefined) {
        this.#keptIds -= union.length
        change(union)
        this.#keptIds += union.length
      }
    }
  }

  /** The place of the first word at or after `word` in code point order. */
  #placeOf(word: string): number {
    let low = 0
    let high = this.#words.length
    while (low < high) {
      const middle = (low + high) >>> 1
      if (byCodePoint(this.#words[middle]!, word) < 0) low = middle + 1
      else high = middle
    }
    return low
  }
}

/** The first place in `ids[from, length)` holding `id` or more (`length` when none). */
export function lowerBound(ids: Int32Array, length: number, id: number, from = 0): number {
  let low = from
  let high = length
  while (low < high) {
    const middle = (low + high) >>> 1
    if (ids[middle]! < id) low = middle + 1
    else high = middle
  }
  return low
}

/**
 * Puts `id` in its place among the ascending ids of `ids[start, start + length)`, which has room
 * for one more after them; false when it is there already.
 */
export function insertInOrder(ids: Int32Array, start: number, length: number, id: number): boolean {
  // Creates come with the highest id yet: appended.
  let at = start + length
  if (length > 0 && ids[at - 1]! >= id) {
    at = lowerBound(ids, start + length, id, start)
    if (ids[at] === id) return false
    ids.copyWithin(at + 1, at, start + length)
  }
  ids[at] = id
  return true
}

/** Takes `id` out of the ascending ids of `ids[start, start + length)`; false when absent. */
export function removeInOrder(ids: Int32Array, start: number, length: number, id: number): boolean {
  const at = lowerBound(ids, start + length, id, start)
  if (at === start + length || ids[at] !== id) return false
  ids.copyWithin(at, at + 1, start + length)
  return true
}

/**
 * The union of ascending lists of ids, ascending: marked in a bitmap as long as the largest id,
 * then read back in order (a merge of many lists costs a comparison per id per list).
 */
function unionOf(lists: readonly Int32Array[]): Int32Array {
  if (lists.length === 0) return new Int32Array(0)
  let largest = 0
  for (const ids of lists) largest = Math.max(largest, ids[ids.length - 1]!)
  const bits = new Uint32Array((largest >>> 5) + 1)
  for (const ids of lists) {
    for (let i = 0; i < ids.length; i++) bits[ids[i]! >>> 5]! |= 1 << (ids[i]! & 31)
  }
  let count = 0
  for (let i = 0; i < bits.length; i++) count += bitCount(bits[i]!)
  const union = new Int32Array(count)
  let at = 0
  for (let i = 0; i < bits.length; i++) {
    let word = bits[i]!
    while (word !== 0) {
      const low = word & -word
      union[at++] = (i << 5) | (31 - Math.clz32(low))
      word ^= low
    }
  }
  return union
}

function bitCount(word: number): number {
  let n = word - ((word >>> 1) & 0x55555555)
  n = (n & 0x33333333) + ((n >>> 2) & 0x33333333)
  return (((n + (n >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24
}

/**
 * Past this many times longer, the longer list is searched (galloping) rather than walked: a walk
 * costs about 2 ns an element of either list, a search about 4 ns a step of its log.
 */
const GALLOP_RATIO = 8

/** The ids in both ascending lists, ascending; `small` the shorter. */
function intersect(small: Int32Array, large: Int32Array): Int32Array {
  return large.length > small.length * GALLOP_RATIO ? gallop(small, large) : walk(small, large)
}

/**
 * Both lists walked side by side without a branch on which one steps (`Number` of a comparison
 * compiles to 0 or 1; a `? 1 : 0` or an if/else is a branch, mispredicted half the time, and
 * twice as slow).
 */
function walk(a: Int32Array, b: Int32Array): Int32Array {
  // One place more than the shorter list: each step writes, and counts only a match.
  const both = new Int32Array(Math.min(a.length, b.length) + 1)
  let count = 0
  let i = 0
  let j = 0
  while (i < a.length && j < b.length) {
    const x = a[i]!
    const y = b[j]!
    both[count] = x
    count += Number(x === y)
    i += Number(x <= y)
    j += Number(y <= x)
  }
  return both.slice(0, count)
}

/** Each id of `small` searched for in `large`, from the last place found (galloping). */
function gallop(small: Int32Array, large: Int32Array): Int32Array {
  const both = new Int32Array(small.length)
  let count = 0
  let from = 0
  for (let i = 0; i < small.length; i++) {
    const id = small[i]!
    // From the last place found, so that the walk over `large` is one pass at most.
    let step = 1
    let high = from
    while (high < large.length && large[high]! < id) {
      from = high
      high += step
      step *= 2
    }
    let low = from
    high = Math.min(high, large.length)
    while (low < high) {
      const middle = (low + high) >>> 1
      if (large[middle]! < id) low = middle + 1
      else high = middle
    }
    from = low
    if (from < large.length && large[from] === id) both[count++] = id
  }
  return both.slice(0, count)
}
