import type { Storage } from '../../core/ports/storage.js'
import { MemoryBeneficiaryStore } from './memory-beneficiary-store.js'
import { MemoryClientStore } from './memory-client-store.js'
import { MemorySessionStore } from './memory-session-store.js'
import { MemorySigningKeyStore } from './memory-signing-key-store.js'
import { MemoryBulkStore } from './memory-bulk-store.js'
import { MemoryImportJobStore } from './memory-import-job-store.js'

/**
 * Storage that lives in the process's memory and is gone when the object is: the reference
 * implementation of the storage ports, and the storage for a host application's unit tests.
 *
 * Every call does its work synchronously, so each is atomic, and records go in and come out as
 * frozen copies. Listing scans every record, which is fine at test sizes; use the SQLite
 * adapter for data that must survive a restart or grow large.
 *
 * @example
 * const storage = new MemoryStorage()
 * await storage.clients.insert(client)
 * // … pass `storage` to the core, then:
 * await storage.close()
 */
export class MemoryStorage implements Storage {
  readonly beneficiaries: MemoryBeneficiaryStore
  readonly clients: MemoryClientStore
  readonly sessions: MemorySessionStore
  readonly signingKeys: MemorySigningKeyStore
  readonly bulk: MemoryBulkStore
  readonly imports: MemoryImportJobStore
  #closed = false

  constructor() {
    const assertOpen = (): void => this.#assertOpen()
    this.beneficiaries = new MemoryBeneficiaryStore(assertOpen)
    this.clients = new MemoryClientStore(assertOpen)
    this.sessions = new MemorySessionStore(assertOpen, (clientId) => this.clients.isLive(clientId))
    this.signingKeys = new MemorySigningKeyStore(assertOpen)
    this.bulk = new MemoryBulkStore(this.beneficiaries)
    this.imports = new MemoryImportJobStore(assertOpen)
  }

  /**
   * Resolves while the storage is open.
   * @throws Error once `close` has been called.
   */
  async ping(): Promise<void> {
    this.#assertOpen()
  }

  /** Closes the storage: every later call, `ping` included, rejects. Closing twice is harmless. */
  async close(): Promise<void> {
    this.#closed = true
  }

  #assertOpen(): void {
    if (this.#closed) throw new Error('storage is closed')
  }
}
