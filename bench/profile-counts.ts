import type { BeneficiaryStatus } from '../core/beneficiary.js'
import { searchTerms } from '../core/search-terms.js'
import { BENEFICIARY_STATUSES } from '../core/beneficiary-fields.js'
import type { DataProfile } from './data-profile.js'

/** The filters of a list request, as its query string carries them. */
export interface ListFilter {
  readonly search?: string | undefined
  readonly status?: BeneficiaryStatus | undefined
  /** `YYYY-MM-DD`, inclusive. */
  readonly createdFrom?: string | undefined
  /** `YYYY-MM-DD`, inclusive. */
  readonly createdTo?: string | undefined
}

const STATUS_COUNT = BENEFICIARY_STATUSES.length
/** Index of the column that counts every status together. */
const ALL = STATUS_COUNT

/**
 * How many rows of a profiled data set a list request matches, so that its pages can be drawn
 * over the whole of its result. Exact for a search alone, filters alone, and a search with a
 * status; a search with dates is estimated as the search's share of the rows created in those
 * days, since the seeded names do not depend on when a row was created.
 *
 * Search matches as the service does (D16): every word of the query is a prefix of a word of
 * the first or last name, after `searchTerms` has folded case and accents.
 */
export class ProfileCounts {
  readonly rows: number
  /** First and last day a row was created on, `YYYY-MM-DD`. */
  readonly firstDay: string
  readonly lastDay: string
  /** Words of each distinct first and last name pair. */
  readonly #pairWords: readonly (readonly string[])[]
  /** Rows of each pair by status, then all of them (`ALL`): `STATUS_COUNT + 1` per pair. */
  readonly #pairCounts: Float64Array
  readonly #statusTotals: readonly number[]
  readonly #days: readonly string[]
  /** Rows created up to each day (inclusive), by status then all: `STATUS_COUNT + 1` per day. */
  readonly #dayCumulative: Float64Array
  readonly #termPairs = new Map<string, Int32Array>()

  constructor(profile: DataProfile) {
    this.rows = profile.rows
    const pairIndex = new Map<string, number>()
    const words: string[][] = []
    const counts: number[] = []
    const totals = new Array<number>(STATUS_COUNT + 1).fill(0)
    for (const name of profile.names) {
      const key = `${name.first}\u0000${name.last}`
      let index = pairIndex.get(key)
      if (index === undefined) {
        index = words.length
        pairIndex.set(key, index)
        words.push(searchTerms(`${name.first} ${name.last}`))
        counts.push(...new Array<number>(STATUS_COUNT + 1).fill(0))
      }
      const status = BENEFICIARY_STATUSES.indexOf(name.status)
      counts[index * (STATUS_COUNT + 1) + status]! += name.count
      counts[index * (STATUS_COUNT + 1) + ALL]! += name.count
      totals[status]! += name.count
      totals[ALL]! += name.count
    }
    this.#pairWords = words
    this.#pairCounts = Float64Array.from(counts)
    this.#statusTotals = totals

    const days = [...new Set(profile.days.map((d) => d.day))].sort()
    if (days.length === 0) throw new TypeError('the profile holds no rows')
    const dayIndex = new Map(days.map((day, i) => [day, i]))
    const cumulative = new Float64Array(days.length * (STATUS_COUNT + 1))
    for (const { day, status, count } of profile.days) {
      const base = dayIndex.get(day)! * (STATUS_COUNT + 1)
      cumulative[base + BENEFICIARY_STATUSES.indexOf(status)]! += count
      cumulative[base + ALL]! += count
    }
    for (let i = STATUS_COUNT + 1; i < cumulative.length; i++) {
      cumulative[i]! += cumulative[i - (STATUS_COUNT + 1)]!
    }
    this.#days = days
    this.#dayCumulative = cumulative
    this.firstDay = days[0]!
    this.lastDay = days[days.length - 1]!
  }

  /** Rows the filter matches (see the class for when it is an estimate). */
  count(filter: ListFilter): number {
    const column = filter.status === undefined ? ALL : BENEFICIARY_STATUSES.indexOf(filter.status)
    const terms = filter.search === undefined ? [] : searchTerms(filter.search.normalize('NFC'))
    const dated = filter.createdFrom !== undefined || filter.createdTo !== undefined
    const inDays = dated
      ? this.#createdBetween(column, filter.createdFrom, filter.createdTo)
      : this.#statusTotals[column]!
    // A search with no letter or digit matches nothing, as in the service; a blank one is none.
    if (terms.length === 0) return filter.search?.trim() ? 0 : inDays
    const searched = this.#searchCount(terms, column)
    if (!dated) return searched
    const base = this.#statusTotals[column]!
    return base === 0 ? 0 : Math.round((searched * inDays) / base)
  }

  /** Whether some name of the data holds a word starting with `term` (folded as search folds it). */
  hasWordStartingWith(term: string): boolean {
    return searchTerms(term).every((word) => this.#pairsOf(word).length > 0)
  }

  #searchCount(terms: readonly string[], column: number): number {
    let pairs = this.#pairsOf(terms[0]!)
    for (const term of terms.slice(1)) pairs = intersect(pairs, this.#pairsOf(term))
    let sum = 0
    for (const pair of pairs) sum += this.#pairCounts[pair * (STATUS_COUNT + 1) + column]!
    return sum
  }

  /** Indexes of the name pairs with a word starting with `term`, in order. */
  #pairsOf(term: string): Int32Array {
    let pairs = this.#termPairs.get(term)
    if (pairs === undefined) {
      const found: number[] = []
      this.#pairWords.forEach((words, index) => {
        if (words.some((word) => word.startsWith(term))) found.push(index)
      })
      pairs = Int32Array.from(found)
      this.#termPairs.set(term, pairs)
    }
    return pairs
  }

  #createdBetween(column: number, from: string | undefined, to: string | undefined): number {
    // Index of the last day before `from`, and of the last day up to `to`.
    const before = from === undefined ? -1 : this.#lastDayBefore(from, false)
    const upTo = to === undefined ? this.#days.length - 1 : this.#lastDayBefore(to, true)
    if (upTo <= before) return 0
    const at = (i: number) => (i < 0 ? 0 : this.#dayCumulative[i * (STATUS_COUNT + 1) + column]!)
    return at(upTo) - at(before)
  }

  /** Index of the last day `< day` (or `<= day` when `inclusive`); -1 when there is none. */
  #lastDayBefore(day: string, inclusive: boolean): number {
    let low = 0
    let high = this.#days.length
    while (low < high) {
      const middle = (low + high) >> 1
      const d = this.#days[middle]!
      if (d < day || (inclusive && d === day)) low = middle + 1
      else high = middle
    }
    return low - 1
  }
}

function intersect(a: Int32Array, b: Int32Array): Int32Array {
  const out: number[] = []
  let i = 0
  let j = 0
  while (i < a.length && j < b.length) {
    if (a[i]! < b[j]!) i++
    else if (a[i]! > b[j]!) j++
    else {
      out.push(a[i]!)
      i++
      j++
    }
  }
  return Int32Array.from(out)
}
