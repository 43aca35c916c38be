import type { AccessLogStore } from './access-log-store.js'
import type { BeneficiaryStore } from './beneficiary-store.js'
import type { BulkStore } from './bulk-store.js'
import type { ImportJobStore } from './import-job-store.js'
import type { ClientStore } from './client-store.js'
import type { HistoryPurge } from './history-purge.js'
import type { EventStore } from './event-store.js'
import type { MatchStore } from './match-store.js'
import type { SessionStore } from './session-store.js'
import type { SigningKeyStore } from './signing-key-store.js'
import type { WebhookStore } from './webhook-store.js'

/**
 * Everything the core persists, as one object the caller builds and passes in (the caller owns
 * the connection). `MemoryStorage` and `SqliteStorage` implement it. An adapter reports a
 * storage fault (a lock held too long, a full disk, a read-only or failing file) as
 * `StorageUnavailableError`, having written nothing of the failed call.
 */
export interface Storage {
  readonly beneficiaries: BeneficiaryStore
  readonly clients: ClientStore
  readonly sessions: SessionStore
  readonly signingKeys: SigningKeyStore
  /**
   * The access log (D35). Optional for storages written before it: without one, nothing is
   * recorded and the access-log and export operations answer 503 `service_unavailable`.
   */
  readonly accessLog?: AccessLogStore
  /** Deletes expired history entries, when the operator sets a maximum age (D37). */
  readonly historyRetention?: HistoryPurge
  /**
   * Retrieval of possible duplicates by their match keys (D38); every adapter of this package
   * has it. Without it, matching is refused.
   */
  readonly matches?: MatchStore
  /** Resolves when the storage can answer queries (the server's readiness probe); rejects otherwise. */
  ping(): Promise<void>
  /** Releases connections. The storage is unusable afterwards. */
  close(): Promise<void>
  /**
   * The change feed (D33), when the storage keeps one: the three adapters of this package do.
   * Its events are written by `beneficiaries`, in the transactions of the changes.
   */
  readonly events?: EventStore
  /** Webhook endpoints and their deliveries (D34), when the storage keeps them. */
  readonly webhooks?: WebhookStore
  /** Exports (D39): every record of one snapshot, a page at a time. Optional for a host's own storage. */
  readonly bulk?: BulkStore
  /** Import jobs (D39), kept so that they survive a restart. Optional for a host's own storage. */
  readonly imports?: ImportJobStore
}
