import type { BeneficiaryRecord, BeneficiaryStatus } from '../beneficiary.js'

/** Which records an export takes: the list's filters that storage can apply (D39). */
export interface SnapshotFilter {
  /** Only this status. */
  readonly status?: BeneficiaryStatus | undefined
  /** Only records created at or after this instant (epoch ms, inclusive). */
  readonly createdFrom?: number | undefined
  /** Only records created before this instant (epoch ms, exclusive). */
  readonly createdBefore?: number | undefined
}

/** The records of an export, a page at a time. */
export interface BulkStore {
  /**
   * Every record matching `filter`, in id order, a page of at most `pageSize` at a time, all
   * from one consistent snapshot of the storage: a write committed after the first page was
   * read is in none of them. Memory holds one page; the snapshot stays open until the iteration
   * ends or is left (`break`, `return`, a throw), which must happen.
   * @throws StorageUnavailableError when the storage fails.
   */
  snapshot(filter: SnapshotFilter, pageSize: number): AsyncIterable<readonly BeneficiaryRecord[]>
}
