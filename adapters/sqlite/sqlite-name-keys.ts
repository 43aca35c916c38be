import type { BeneficiaryRecord } from '../../core/beneficiary.js'
import { nameSortKey } from '../../core/search-terms.js'

/** What search and the name sorts compare, derived from the two names. */
export interface NameKeys {
  /** The search words of both names, as `searchTerms()` splits them (D16). */
  readonly words: string
  /** The primary keys of the name sorts (D15), compared by SQLite's BINARY collation. */
  readonly sort_first: string
  readonly sort_last: string
}

/** The {@link NameKeys} of a record. */
export function nameKeys(record: Pick<BeneficiaryRecord, 'first_name' | 'last_name'>): NameKeys {
  const first = nameSortKey(record.first_name)
  const last = nameSortKey(record.last_name)
  const words = first.length > 0 && last.length > 0 ? `${first} ${last}` : first + last
  return { words, sort_first: first, sort_last: last }
}
