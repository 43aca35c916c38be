import { BufferedAccessLog } from '../../core/buffered-access-log.js'
import type { HistoryPurge } from '../../core/ports/history-purge.js'
import type { MatchStore } from '../../core/ports/match-store.js'
import type { Storage } from '../../core/ports/storage.js'
import { MemoryAccessLogTable } from './memory-access-log.js'
import { MemoryBeneficiaryStore } from './memory-beneficiary-store.js'
import { MemoryClientStore } from './memory-client-store.js'
import { MemoryEventLog } from './memory-event-log.js'
import { MemoryWebhookStore } from './memory-webhook-store.js'
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
  /** The access log (D35), batched as on the other storages. */
  readonly accessLog: BufferedAccessLog
  /** Retention of the history (D37). */
  readonly historyRetention: HistoryPurge
  /** The change feed (D33), appended by `beneficiaries` with each history entry. */
  readonly events: MemoryEventLog
  /** Webhook endpoints and their deliveries (D34). */
  readonly webhooks: MemoryWebhookStore
  readonly matches: MatchStore
  readonly bulk: MemoryBulkStore
  readonly imports: MemoryImportJobStore
  #closed = false

  constructor() {
    const assertOpen = (): void => this.#assertOpen()
    this.events = new MemoryEventLog(assertOpen)
    this.webhooks = new MemoryWebhookStore(assertOpen)
    this.beneficiaries = new MemoryBeneficiaryStore(assertOpen, this.events)
    this.clients = new MemoryClientStore(assertOpen)
    this.sessions = new MemorySessionStore(assertOpen, (clientId) => this.clients.isLive(clientId))
    this.signingKeys = new MemorySigningKeyStore(assertOpen)
    this.accessLog = new BufferedAccessLog(new MemoryAccessLogTable(assertOpen))
    this.historyRetention = {
      purge: (before, limit) => this.beneficiaries.purgeHistory(before, limit),
    }
    const index = this.beneficiaries.matchIndex
    this.matches = {
      candidates: async (query) => {
        assertOpen()
        return index.candidates(query)
      },
    }
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
    if (!this.#closed) await this.accessLog.close()
    this.#closed = true
  }

  #assertOpen(): void {
    if (this.#closed) throw new Error('storage is closed')
  }
}
