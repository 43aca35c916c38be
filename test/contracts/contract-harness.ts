import { afterEach, beforeEach } from 'node:test'
import type { HistoryEntry } from '../../core/beneficiary.js'
import type { Storage } from '../../core/ports/storage.js'

/** What an adapter's test file passes to `describeStorageContract`. */
export interface StorageContractOptions {
  /** Shown in the test names, e.g. `memory` or `sqlite`. */
  readonly name: string
  /** A new, empty storage; called before every test. */
  readonly create: () => Promise<Storage>
  /** Releases a storage made by `create`; called after every test. */
  readonly destroy: (storage: Storage) => Promise<void>
  /**
   * Every history entry the adapter keeps for `id`, oldest first, including those of a deleted
   * record, read behind the port's back. The port cannot show the history of a deleted record,
   * so the erasure tests (D27) run only for adapters that give this.
   */
  readonly retainedHistory?: (
    storage: Storage,
    id: number,
  ) => Promise<readonly HistoryEntry[] | undefined>
}

/** A getter for the storage of the running test. */
export type CurrentStorage = () => Storage

/** Registers hooks that give each test of the enclosing suite a fresh storage. */
export function useFreshStorage(options: StorageContractOptions): CurrentStorage {
  let current: Storage | undefined
  beforeEach(async () => {
    current = await options.create()
  })
  afterEach(async () => {
    const storage = current
    current = undefined
    if (storage !== undefined) await options.destroy(storage)
  })
  return () => {
    if (current === undefined) throw new Error('the storage exists only while a test runs')
    return current
  }
}
