/**
 * In-memory storage: the reference implementation of the storage ports, for tests and trials.
 *
 * @example
 * import { MemoryStorage } from 'beneficiary-service/memory'
 * const storage = new MemoryStorage()
 */
export { MemoryStorage } from './memory-storage.js'
// Beyond the port: `retainedHistory`, for audits and a host's tests.
export type { MemoryBeneficiaryStore } from './memory-beneficiary-store.js'
