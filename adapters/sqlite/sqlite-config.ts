import type { PeerPackage } from '../../core/missing-peer-dependency-error.js'
import { KYSELY_PEER } from '../relational/relational-peers.js'

/**
 * How `openSqliteStorage` opens a database file. Plain data with no driver types, so a host
 * application can build it from its own configuration without importing better-sqlite3.
 *
 * @example
 * const config: SqliteConfig = { path: '/var/lib/beneficiaries/data.db', busyTimeoutMs: 10_000 }
 */
export interface SqliteConfig {
  /** The database file, created when missing; `':memory:'` for a private in-memory database. */
  readonly path: string
  /**
   * Whether a missing file is created (default true). When false, opening a file that does
   * not exist fails instead: for tools that only read, so that a mistyped path is an error
   * rather than a new, empty database.
   */
  readonly create?: boolean
  /**
   * Whether opening runs the pending migrations (default true). When false, opening fails
   * unless the schema is up to date: migrate with `migrateSqlite` first.
   */
  readonly migrate?: boolean
  /**
   * `FULL` (the default) makes every acknowledged write survive a power loss or OS crash.
   * `NORMAL` is faster and still survives a crash of the process, but in WAL mode the last
   * transactions before a power loss may roll back.
   */
  readonly synchronous?: 'FULL' | 'NORMAL'
  /**
   * How long a write waits for another connection's write transaction to end before it fails
   * with `SQLITE_BUSY`, in milliseconds. Default 5000. The wait blocks the calling thread, as
   * every better-sqlite3 call does.
   */
  readonly busyTimeoutMs?: number
  /**
   * Page cache per connection, in KiB. Default 65536 (64 MiB): a million records fit mostly.
   * With `writer: 'thread'`, the connections keep 4 MiB at most: the writer's commits empty the
   * reading connection's cache, whose size then only slows the emptying (`openSqliteStorage`).
   */
  readonly cacheSizeKib?: number
  /**
   * Who copies the WAL into the database file. `inline` (the default): SQLite's own automatic
   * checkpoint, run by the write that takes the WAL past 1000 pages, on the calling thread.
   * `background`: a thread of the storage's own, so that writes never wait for a checkpoint's
   * fsync (see `SqliteCheckpointer`); the standalone server uses it. Ignored for `:memory:`.
   */
  readonly checkpoint?: 'inline' | 'background'
  /**
   * Who runs the writes. `inline` (the default): the calling thread, on the storage's one
   * connection; a commit's fsync blocks the event loop. `thread`: a thread of the storage's own
   * with a second connection that runs every write, its group commits and their fsyncs, so that
   * reads on the calling thread never wait for a write (see `SqliteWriterThread`); the
   * standalone server uses it. Ignored for `:memory:`, which another connection cannot share.
   */
  readonly writer?: 'inline' | 'thread'
}

/**
 * What the SQLite adapter needs the host to install, with its `peerDependencies` ranges in
 * `package.json` (a test holds the two equal).
 */
export const SQLITE_PEERS: readonly PeerPackage[] = Object.freeze([
  Object.freeze({ name: 'better-sqlite3', range: '^12.9.0' }),
  KYSELY_PEER,
])
