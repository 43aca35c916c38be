import type { BeneficiaryRecord } from '../../core/beneficiary.js'
import type { BulkStore, SnapshotFilter } from '../../core/ports/bulk-store.js'
import type { MemoryBeneficiaryStore } from './memory-beneficiary-store.js'

/**
 * Exports on memory storage: the snapshot is the list of the records (frozen, so never changed
 * in place) taken when the export starts, handed out a page at a time.
 */
export class MemoryBulkStore implements BulkStore {
  readonly #store: MemoryBeneficiaryStore

  constructor(store: MemoryBeneficiaryStore) {
    this.#store = store
  }

  async *snapshot(
    filter: SnapshotFilter,
    pageSize: number,
  ): AsyncGenerator<readonly BeneficiaryRecord[]> {
    const records = this.#store
      .snapshotRecords()
      .filter(
        (record) =>
          (filter.status === undefined || record.status === filter.status) &&
          (filter.createdFrom === undefined || record.created_at >= filter.createdFrom) &&
          (filter.createdBefore === undefined || record.created_at < filter.createdBefore),
      )
    for (let from = 0; from < records.length; from += pageSize) {
      yield records.slice(from, from + pageSize)
    }
  }
}
