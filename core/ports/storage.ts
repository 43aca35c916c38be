import type { BeneficiaryStore } from './beneficiary-store.js'
import type { BulkStore } from './bulk-store.js'
import type { ImportJobStore } from './import-job-store.js'
import type { ClientStore } from './client-store.js'
import type { SessionStore } from './session-store.js'
import type { SigningKeyStore } from './signing-key-store.js'

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
  /** Resolves when the storage can answer queries (the server's readiness probe); rejects otherwise. */
  ping(): Promise<void>
  /** Releases connections. The storage is unusable afterwards. */
  close(): Promise<void>
  /** Exports (D39): every record of one snapshot, a page at a time. Optional for a host's own storage. */
  readonly bulk?: BulkStore
  /** Import jobs (D39), kept so that they survive a restart. Optional for a host's own storage. */
  readonly imports?: ImportJobStore
}
