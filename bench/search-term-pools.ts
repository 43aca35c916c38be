import type { DataProfile } from './data-profile.js'
import { WeightedPool, type SeededRandom } from './seeded-random.js'

/** A word of a name as the data holds it (`D'Angelo`, `Nguyễn`), with the rows that hold it. */
interface NameWord {
  readonly text: string
  readonly rows: number
}

/** Share of name occurrences held by the rarest words, which the rare terms come from. */
const RARE_SHARE = 0.1
/** A plain word is lower-case ASCII letters once lower-cased; others have accents, apostrophes… */
const PLAIN = /^[a-z]+$/
const ATTEMPTS = 100

/**
 * Search terms drawn from the names of the data, weighted by how many rows hold each name, so
 * that common names are searched as often as they occur and rare ones still are. Names are cut
 * into words at spaces only (`De Luca` gives `De` and `Luca`, `D'Angelo` stays whole), and a
 * term is a prefix of a word in lower case, accents and apostrophes kept as the data holds them.
 */
export class SearchTermPools {
  /** Every word of a first or last name, weighted by its rows. */
  readonly #common: WeightedPool<NameWord>
  /** The rarest words, together holding `RARE_SHARE` of the occurrences, weighted likewise. */
  readonly #rare: WeightedPool<NameWord>
  /** Words with a letter outside a–z or an apostrophe once lower-cased. */
  readonly #accented: WeightedPool<NameWord>
  /** First and last name pairs, weighted by their rows. */
  readonly #pairs: WeightedPool<readonly [string, string]>

  constructor(profile: DataProfile) {
    const words = new Map<string, number>()
    const pairs = new Map<string, { first: string; last: string; rows: number }>()
    for (const name of profile.names) {
      for (const text of new Set([...wordsOf(name.first), ...wordsOf(name.last)])) {
        words.set(text, (words.get(text) ?? 0) + name.count)
      }
      const key = `${name.first}\u0000${name.last}`
      const pair = pairs.get(key)
      if (pair === undefined)
        pairs.set(key, { first: name.first, last: name.last, rows: name.count })
      else pair.rows += name.count
    }
    const all = [...words].map(([text, rows]) => ({ text, rows }))
    this.#common = new WeightedPool(all.map((word) => [word, word.rows] as const))
    const total = all.reduce((sum, word) => sum + word.rows, 0)
    const rare: NameWord[] = []
    let held = 0
    for (const word of [...all].sort((a, b) => a.rows - b.rows || (a.text < b.text ? -1 : 1))) {
      if (rare.length > 0 && held + word.rows > total * RARE_SHARE) break
      rare.push(word)
      held += word.rows
    }
    this.#rare = new WeightedPool(rare.map((word) => [word, word.rows] as const))
    this.#accented = new WeightedPool(
      all.filter((word) => !PLAIN.test(word.text.toLowerCase())).map((w) => [w, w.rows] as const),
    )
    this.#pairs = new WeightedPool(
      [...pairs.values()].map(({ first, last, rows }) => [[first, last] as const, rows] as const),
    )
  }

  /** Every word the terms are cut from, as the data holds it. */
  get words(): readonly string[] {
    return this.#common.items.map((word) => word.text)
  }

  /** A prefix of 1–3 letters of a word, drawn by frequency. */
  short(random: SeededRandom): string {
    return this.#prefix(random, this.#common, 1, 3)
  }

  /** A prefix of 4–8 letters of a word of at least 4, drawn by frequency. */
  long(random: SeededRandom): string {
    return this.#prefix(random, this.#common, 4, 8)
  }

  /** A prefix of 3–8 letters of one of the rarest words. */
  rare(random: SeededRandom): string {
    return this.#prefix(random, this.#rare, 3, 8)
  }

  /**
   * A prefix of a first name's word then one of a last name's (`mario ros`), of one pair of the
   * data drawn by frequency; one in four the other way round (`rossi mar`).
   */
  twoWords(random: SeededRandom): string {
    const [first, last] = this.#pairs.draw(random)
    const firstPart = cut(random.pick(wordsOf(first)), random, 2, 8)
    const lastPart = cut(random.pick(wordsOf(last)), random, 1, 8)
    return random.chance(0.25) ? `${lastPart} ${firstPart}` : `${firstPart} ${lastPart}`
  }

  /**
   * A prefix of a word with an accent or an apostrophe that keeps it and a letter after an
   * apostrophe (`nguyễ`, `d'ang`, `zoë`), half of them capitalised as the data writes them.
   */
  accented(random: SeededRandom): string {
    const word = this.#accented.draw(random).text
    const letters = Array.from(word)
    const special = letters.findIndex((c) => !PLAIN.test(c.toLowerCase()))
    const shortest = Math.min(letters.length, special + (letters[special] === "'" ? 2 : 1))
    const prefix = letters.slice(0, random.int(shortest, letters.length)).join('')
    return random.chance(0.5) ? prefix : prefix.toLowerCase()
  }

  /** One of the kinds above, each as likely: the search of the sorted and filtered classes. */
  any(random: SeededRandom): string {
    switch (random.int(0, 4)) {
      case 0:
        return this.short(random)
      case 1:
        return this.long(random)
      case 2:
        return this.rare(random)
      case 3:
        return this.twoWords(random)
      default:
        return this.accented(random)
    }
  }

  #prefix(random: SeededRandom, pool: WeightedPool<NameWord>, min: number, max: number): string {
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const word = pool.draw(random).text
      if (Array.from(word).length >= min) return cut(word, random, min, max)
    }
    throw new Error(`no word of the data has ${min} letters or more`)
  }
}

/** A prefix of `word` in lower case, of `min` to `max` letters (fewer if the word is shorter). */
function cut(word: string, random: SeededRandom, min: number, max: number): string {
  const letters = Array.from(word.toLowerCase())
  const length = random.int(Math.min(min, letters.length), Math.min(max, letters.length))
  return letters.slice(0, length).join('')
}

/** The words of a name, cut at spaces only. */
export function wordsOf(name: string): string[] {
  return name.split(/\s+/).filter((word) => word.length > 0)
}
