import type { BeneficiaryRecord } from '../../core/beneficiary.js'
import {
  nameTrigrams as trigrams,
  storedMatchKeys,
  trigramSimilarity as similarity,
} from '../../core/matching/match-keys.js'
import type { MatchQuery, MatchStore } from '../../core/ports/match-store.js'

/**
 * The match keys of the memory adapter's records (D38), kept in maps in step with every write:
 * by fiscal code, e-mail key, phone key, date of birth, and the trigrams of the folded name
 * (`pg_trgm`'s idea: each word padded with two spaces before and one after). A match reads the
 * maps, never every record.
 */
export class MemoryMatchIndex implements MatchStore {
  readonly #get: (id: number) => BeneficiaryRecord | undefined
  readonly #byFiscalCode = new Map<string, Set<number>>()
  readonly #byEmail = new Map<string, Set<number>>()
  readonly #byPhone = new Map<string, Set<number>>()
  readonly #byBirth = new Map<string, Set<number>>()
  readonly #byTrigram = new Map<string, Set<number>>()

  constructor(get: (id: number) => BeneficiaryRecord | undefined) {
    this.#get = get
  }

  /** Indexes a record just stored. */
  add(record: BeneficiaryRecord): void {
    this.#each(record, (map, key) => {
      let ids = map.get(key)
      if (ids === undefined) map.set(key, (ids = new Set()))
      ids.add(record.id)
    })
  }

  /** Forgets a record just replaced or deleted. */
  remove(record: BeneficiaryRecord): void {
    this.#each(record, (map, key) => {
      const ids = map.get(key)
      ids?.delete(record.id)
      if (ids?.size === 0) map.delete(key)
    })
  }

  async candidates(query: MatchQuery): Promise<readonly BeneficiaryRecord[]> {
    const ids = new Set<number>()
    const take = (found: Iterable<number> | undefined) => {
      let taken = 0
      for (const id of found ?? []) {
        if (taken++ >= query.limit) break
        ids.add(id)
      }
    }
    if (query.fiscalCode !== undefined) take(this.#byFiscalCode.get(query.fiscalCode))
    if (query.email !== undefined) take(this.#byEmail.get(query.email))
    if (query.phone !== undefined) take(this.#byPhone.get(query.phone))
    if (query.name !== undefined) {
      const grams = trigrams(query.name)
      for (const date of query.datesOfBirth ?? []) {
        const born = [...(this.#byBirth.get(date) ?? [])].filter((id) => {
          const record = this.#get(id)
          return (
            record !== undefined &&
            similarity(grams, trigrams(storedMatchKeys(record).name_key)) >= 0.3
          )
        })
        take(born)
      }
      if (query.nearestNames === true) take(this.#nearestNames(grams, query.limit))
    }
    if (query.excludeId !== undefined) ids.delete(query.excludeId)
    return [...ids].flatMap((id) => {
      const record = this.#get(id)
      return record === undefined ? [] : [record]
    })
  }

  /** The ids whose names share the most trigrams with `grams`, at least a third of them. */
  #nearestNames(grams: ReadonlySet<string>, limit: number): number[] {
    const shared = new Map<number, number>()
    for (const gram of grams) {
      for (const id of this.#byTrigram.get(gram) ?? []) shared.set(id, (shared.get(id) ?? 0) + 1)
    }
    const least = Math.ceil(grams.size / 3)
    return [...shared]
      .filter(([, count]) => count >= least)
      .sort((a, b) => b[1] - a[1] || a[0] - b[0])
      .slice(0, limit)
      .map(([id]) => id)
  }

  #each(record: BeneficiaryRecord, visit: (map: Map<string, Set<number>>, key: string) => void) {
    const keys = storedMatchKeys(record)
    if (record.fiscal_code !== null) visit(this.#byFiscalCode, record.fiscal_code)
    visit(this.#byEmail, keys.email_key)
    if (keys.phone_key !== null) visit(this.#byPhone, keys.phone_key)
    if (record.date_of_birth !== null) visit(this.#byBirth, record.date_of_birth)
    for (const gram of trigrams(keys.name_key)) visit(this.#byTrigram, gram)
  }
}
