/**
 * In-memory storage: the reference implementation of the storage ports, for tests and trials.
 *
 * @example
 * import { MemoryStorage } from 'beneficiary-service/memory'
 * const storage = new MemoryStorage()
 */
export { MemoryStorage } from './memory-storage.js'
export type { MemoryBeneficiaryStore } from './memory-beneficiary-store.js'
export type { MemoryClientStore } from './memory-client-store.js'
export type { MemorySessionStore } from './memory-session-store.js'
export type { MemorySigningKeyStore } from './memory-signing-key-store.js'
