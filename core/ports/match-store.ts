import type { BeneficiaryRecord } from '../beneficiary.js'

/**
 * What a match looks up (D38): the candidate's match keys, as `matchKeysOf` makes them. Every
 * key is optional; a store looks each given one up through an index of its own and never reads
 * the whole table.
 */
export interface MatchQuery {
  /** Exact fiscal code, upper case. */
  readonly fiscalCode?: string
  /** The e-mail address lower-cased (`emailMatchKey`). */
  readonly email?: string
  /** The phone number in E.164 (`phoneMatchKey`). */
  readonly phone?: string
  /** The folded full name (`nameMatchKey`): lower-case, accent-free words joined by spaces. */
  readonly name?: string
  /**
   * Also the records whose folded names are nearest `name` (trigram similarity), whatever else
   * they hold. The core asks for them only when a name alike is enough for a match under its
   * rules; otherwise a record can only match through another key.
   */
  readonly nearestNames?: boolean
  /**
   * Dates of birth (`YYYY-MM-DD`) to look up together with the name: records born on one of
   * them whose folded name shares trigrams with `name` (the date as given and with day and
   * month swapped). Ignored without `name`.
   */
  readonly datesOfBirth?: readonly string[]
  /** A record never to return (the record whose matches are asked for). */
  readonly excludeId?: number
  /** At most this many records for each kind of key (the name's included). */
  readonly limit: number
}

/**
 * Retrieval of the records that may be the same person as a candidate (D38): the union of the
 * records sharing one of the query's keys, unordered, each at most once. The core scores them
 * (`scoreMatch`); the store only finds them, through indexes kept in step with every create,
 * update and delete (a deleted record's keys go with it).
 */
export interface MatchStore {
  candidates(query: MatchQuery): Promise<readonly BeneficiaryRecord[]>
}
