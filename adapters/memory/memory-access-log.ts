import type {
  AccessLogEntry,
  AccessLogScan,
  AccessLogTable,
  StoredAccessLogEntry,
} from '../../core/ports/access-log-store.js'
import type { Page } from '../../core/ports/beneficiary-store.js'

/**
 * The access log's table in memory (D35): entries in an array in `(at, id)` order, scanned for
 * every read. The reference implementation; fine at test sizes.
 */
export class MemoryAccessLogTable implements AccessLogTable {
  readonly #assertOpen: () => void
  #entries: StoredAccessLogEntry[] = []
  #nextId = 1

  constructor(assertOpen: () => void) {
    this.#assertOpen = assertOpen
  }

  async append(entries: readonly AccessLogEntry[]): Promise<void> {
    this.#assertOpen()
    for (const entry of entries) {
      const stored = Object.freeze({
        ...entry,
        beneficiary_ids: Object.freeze([...entry.beneficiary_ids]),
        id: this.#nextId++,
      })
      let at = this.#entries.length
      // Entries arrive nearly in order: walk back from the end to the first older one.
      while (at > 0 && this.#entries[at - 1]!.at > stored.at) at--
      this.#entries.splice(at, 0, stored)
    }
  }

  async forBeneficiary(
    beneficiaryId: number,
    offset: number,
    limit: number,
  ): Promise<Page<StoredAccessLogEntry>> {
    this.#assertOpen()
    const all = this.#entries.filter((entry) => entry.beneficiary_ids.includes(beneficiaryId))
    return { items: all.slice(offset, offset + limit), total: all.length }
  }

  async scan(query: AccessLogScan): Promise<readonly StoredAccessLogEntry[]> {
    this.#assertOpen()
    const { after } = query
    const found: StoredAccessLogEntry[] = []
    for (const entry of this.#entries) {
      if (found.length >= query.limit) break
      if (
        after !== undefined &&
        (entry.at < after.at || (entry.at === after.at && entry.id <= after.id))
      )
        continue
      if (query.from !== undefined && entry.at < query.from) continue
      if (query.before !== undefined && entry.at >= query.before) continue
      if (query.clientId !== undefined && entry.client_id !== query.clientId) continue
      if (query.beneficiaryId !== undefined && !entry.beneficiary_ids.includes(query.beneficiaryId))
        continue
      found.push(entry)
    }
    return found
  }

  async purge(before: number, limit: number): Promise<number> {
    this.#assertOpen()
    let count = 0
    while (count < limit && count < this.#entries.length && this.#entries[count]!.at < before)
      count++
    this.#entries.splice(0, count)
    return count
  }
}
