import { SqliteMatchStore } from './sqlite-match-keys.js'
import { closeSync, fchmodSync, openSync } from 'node:fs'
import { SqliteEventLog } from './events/sqlite-event-log.js'
import { SqliteWebhookStore } from './webhooks/sqlite-webhook-store.js'
import Database from 'better-sqlite3'
import { BufferedAccessLog } from '../../core/buffered-access-log.js'
import { StorageUnavailableError } from '../../core/errors.js'
import type { Storage } from '../../core/ports/storage.js'
import { SqliteBeneficiaryStore } from './writes/sqlite-beneficiary-store.js'
import type { HistoryPurge } from '../../core/ports/history-purge.js'
import { SqliteAccessLogTable, sqliteHistoryPurge } from './sqlite-access-log.js'
import { SqliteDataVersion } from './sqlite-data-version.js'
import { RelationalClientStore } from '../relational/relational-client-store.js'
import { RelationalSessionStore } from '../relational/relational-session-store.js'
import { RelationalSigningKeyStore } from '../relational/relational-signing-key-store.js'
import { SqliteAuthStatements } from './auth/sqlite-auth-statements.js'
import { SqliteSessionTokens } from './auth/sqlite-session-tokens.js'
import { SqliteCheckpointer } from './threads/sqlite-checkpointer.js'
import { SqliteGroupCommit } from './writes/sqlite-group-commit.js'
import type { SqliteConfig } from './sqlite-config.js'
import {
  migrateSqlite,
  pendingMigrations,
  unknownMigrations,
} from './migrations/sqlite-migrations.js'
import { applySqlitePragmas, cacheSizeKibOf, dropStat4Samples } from './sqlite-pragmas.js'
import { translateStorageFailure } from './sqlite-query.js'
import type { WriterSettings } from './threads/sqlite-writer-protocol.js'
import { SqliteWriterThread } from './threads/sqlite-writer-thread.js'
import { SqliteBulkStore } from './bulk/sqlite-bulk-store.js'
import { SqliteImportJobStore } from './bulk/sqlite-import-job-store.js'

/** Options of the {@link SqliteStorage} constructor. */
export interface SqliteStorageOptions {
  /**
   * Whether `close()` also closes the connection. Default false: the caller owns a connection
   * it passed in. `openSqliteStorage` sets it, since it opened the connection itself.
   */
  readonly closeDatabase?: boolean
  /**
   * `background` checkpoints the WAL from a thread of the storage's own (`SqliteCheckpointer`),
   * stopped by `close()`; default `inline`, SQLite's automatic checkpoints. Ignored for an
   * in-memory database.
   */
  readonly checkpoint?: 'inline' | 'background'
  /**
   * `thread` runs every write on a thread of the storage's own with its own connection
   * (`SqliteWriterThread`), stopped by `close()`, so that reads on the calling thread never wait
   * for a write or its fsync; default `inline`, on the calling thread and this connection.
   * Ignored for an in-memory database, which another connection cannot open.
   */
  readonly writer?: 'inline' | 'thread'
  /** What `migrationsApplied` reports: the migrations the opener applied (default none). */
  readonly migrationsApplied?: readonly string[]
}

/**
 * Every storage port on one better-sqlite3 connection to a SQLite file: the durable storage of
 * the standalone server and of host applications.
 *
 * `openSqliteStorage(config)` opens a file, sets the pragmas and migrates it; the constructor
 * takes a connection you opened, configured (`applySqlitePragmas`) and migrated
 * (`migrateSqlite`) yourself. Several processes may open the same file: writes are
 * `BEGIN IMMEDIATE` transactions that wait for each other up to the busy timeout. Each call
 * runs synchronously on the calling thread, as better-sqlite3 does, and has committed when its
 * promise resolves.
 *
 * @example
 * const storage = await openSqliteStorage({ path: 'data.db' })
 * // … pass `storage` to the core, then:
 * await storage.close()
 *
 * @example
 * const db = new Database('data.db')
 * applySqlitePragmas(db)
 * await migrateSqlite(db)
 * const storage = new SqliteStorage(db) // close() leaves `db` open
 */
export class SqliteStorage implements Storage {
  readonly beneficiaries: SqliteBeneficiaryStore
  readonly clients: RelationalClientStore
  readonly sessions: RelationalSessionStore
  readonly signingKeys: RelationalSigningKeyStore
  /** The access log (D35): batches written in one transaction each, on the writer. */
  readonly accessLog: BufferedAccessLog
  /** Retention of the history (D37), on the writer. */
  readonly historyRetention: HistoryPurge
  /** The change feed (D33), which a trigger on the history fills with every change. */
  readonly events: SqliteEventLog
  /** Webhook endpoints and their deliveries (D34). */
  readonly webhooks: SqliteWebhookStore
  readonly matches: SqliteMatchStore
  readonly bulk: SqliteBulkStore
  readonly imports: SqliteImportJobStore
  /** The migrations `openSqliteStorage` applied when it opened the storage, in order. */
  readonly migrationsApplied: readonly string[]
  readonly #db: Database.Database
  readonly #closeDatabase: boolean
  readonly #ping: Database.Statement<[], unknown>
  readonly #writes: SqliteGroupCommit
  readonly #checkpointer: SqliteCheckpointer | undefined
  readonly #writer: SqliteWriterThread | undefined
  #closed = false

  /**
   * @param db An open connection; the storage never changes its pragmas.
   * @throws TypeError when the schema of `db` is not up to date (run `migrateSqlite(db)`), or
   * was migrated by a newer version of the adapter.
   */
  constructor(db: Database.Database, options: SqliteStorageOptions = {}) {
    const pending = pendingMigrations(db)
    if (pending.length > 0) {
      throw new TypeError(
        `The database schema is not up to date (${pending.join(', ')} pending): run migrateSqlite(db) first.`,
      )
    }
    const unknown = unknownMigrations(db)
    if (unknown.length > 0) {
      throw new TypeError(
        `The database was migrated by a newer version (${unknown.join(', ')}): upgrade the adapter.`,
      )
    }
    this.#db = db
    this.#closeDatabase = options.closeDatabase ?? false
    this.migrationsApplied = Object.freeze([...(options.migrationsApplied ?? [])])
    this.#ping = db.prepare('SELECT 1')
    const assertOpen = (): void => this.#assertOpen()
    this.#writes = new SqliteGroupCommit(db)
    const dataVersion = new SqliteDataVersion(db)
    if (options.checkpoint !== undefined && options.checkpoint !== 'inline') {
      if (options.checkpoint !== 'background') {
        throw new TypeError("checkpoint must be 'inline' or 'background'")
      }
      if (!db.memory) {
        // Before the writer, whose connection copies the checkpoint settings it makes.
        this.#checkpointer = new SqliteCheckpointer(db, (name, value) =>
          this.#writer?.pragma(name, value),
        )
      }
    }
    if (options.writer !== undefined && options.writer !== 'inline') {
      if (options.writer !== 'thread') throw new TypeError("writer must be 'inline' or 'thread'")
      if (!db.memory) this.#writer = new SqliteWriterThread(db, () => dataVersion.invalidate())
    }
    const writer = this.#writer
    this.beneficiaries = new SqliteBeneficiaryStore(
      db,
      assertOpen,
      this.#writes,
      dataVersion,
      writer,
    )
    const statements = new SqliteAuthStatements(db, writer)
    const tokens = new SqliteSessionTokens(statements, dataVersion)
    this.clients = new RelationalClientStore(statements, assertOpen, () => tokens.forget())
    this.sessions = new RelationalSessionStore(statements, assertOpen, tokens)
    this.signingKeys = new RelationalSigningKeyStore(statements, assertOpen)
    this.accessLog = new BufferedAccessLog(
      new SqliteAccessLogTable(db, assertOpen, (batch) => statements.transaction(batch)),
    )
    this.historyRetention = sqliteHistoryPurge(assertOpen, (batch) => statements.transaction(batch))
    this.events = new SqliteEventLog(db, assertOpen)
    this.webhooks = new SqliteWebhookStore(db, assertOpen)
    this.matches = new SqliteMatchStore(db, assertOpen)
    this.bulk = new SqliteBulkStore(db, assertOpen)
    this.imports = new SqliteImportJobStore(db, assertOpen)
  }

  /** Whether the writes run on a thread of the storage's own (`writer: 'thread'`), and it runs. */
  get writesInBackground(): boolean {
    return this.#writer?.running ?? false
  }

  /** Whether a background checkpointer thread is running (`checkpoint: 'background'`). */
  get checkpointsInBackground(): boolean {
    return this.#checkpointer?.running ?? false
  }

  /**
   * Has `listener` told, after each group commit (the writes of one turn of the event loop in
   * one transaction, see `SqliteGroupCommit`), how many writes the group held and whether it
   * committed; a group that failed wrote nothing. For metrics: the listener must not throw.
   * A second call replaces the first listener.
   */
  observeGroupCommits(listener: (size: number, committed: boolean) => void): void {
    this.#writes.observe(listener)
    this.#writer?.observe(listener)
  }

  /** The connection, for `backupSqlite`, `seedBeneficiaries` and maintenance. */
  get database(): Database.Database {
    return this.#db
  }

  /**
   * Resolves when the database answers a query, and the writer thread (`writer: 'thread'`) is
   * ready: when it ended, a new one is started and waited for.
   * @throws Error once `close` has been called, or when the connection is unusable;
   * StorageUnavailableError when the writer thread cannot start.
   */
  async ping(): Promise<void> {
    this.#assertOpen()
    this.#ping.get()
    await this.#writer?.ready()
  }

  /**
   * The settings of the writer thread's connection (`writer: 'thread'`), once it is ready;
   * `undefined` when the writes run on this connection.
   */
  async writerSettings(): Promise<WriterSettings | undefined> {
    this.#assertOpen()
    return this.#writer?.ready()
  }

  /**
   * Closes the storage: every later call, `ping` included, rejects. Closes the connection too
   * when the storage opened it (`closeDatabase`), after letting SQLite refresh its query-planner
   * statistics; stops the background checkpointer's thread before. Closing twice is harmless.
   */
  async close(): Promise<void> {
    if (this.#closed) return
    // Before anything stops: the entries still queued are committed.
    await this.accessLog.close().catch(() => undefined)
    this.#closed = true
    // Writes already accepted are committed, not dropped; the writer thread commits and
    // answers its own before it ends.
    if (this.#db.open) this.#writes.flush()
    await this.#writer?.close()
    await this.#checkpointer?.stop()
    if (this.#closeDatabase && this.#db.open) {
      refreshStatistics(this.#db, 'optimize', true)
      this.#db.close()
    }
  }

  #assertOpen(): void {
    if (this.#closed) throw new Error('storage is closed')
  }
}

/** Mode of a database file the adapter creates: its owner's alone (D32). */
export const SQLITE_FILE_MODE = 0o600

/**
 * Creates a missing database file, empty (which SQLite reads as an empty database), with
 * `SQLITE_FILE_MODE` rather than SQLite's 0644 less the umask; SQLite then gives the WAL,
 * shared-memory and journal files it creates beside it the database file's mode. An existing
 * file is left as it is. Best effort: when the file cannot be created, opening it reports why.
 */
function createPrivately(path: string): void {
  try {
    closeSync(openSync(path, 'wx', SQLITE_FILE_MODE))
  } catch {
    // Exists already, or cannot be created: `new Database` says which.
  }
}

/**
 * Opens (creating if needed, unless `create` is false) the SQLite file at `config.path`,
 * applies the pragmas (`applySqlitePragmas`: WAL, `synchronous=FULL` by default, busy timeout,
 * foreign keys) and runs the pending migrations (unless `migrate` is false, in which case the
 * schema must be up to date already); `migrationsApplied` names those it ran. The storage owns
 * the connection: `close()` closes it. A file it creates is readable and writable by its owner
 * only (0600), and so are the side files SQLite creates beside it (D32); an existing file keeps
 * its mode.
 *
 * @throws Error when the file cannot be opened (or does not exist and `create` is false) or a
 * migration fails (the file is left as it was); TypeError for invalid options, or when
 * `migrate` is false and the schema is not up to date.
 *
 * @example
 * const storage = await openSqliteStorage({ path: '/var/lib/beneficiaries/data.db' })
 * const memory = await openSqliteStorage({ path: ':memory:' })
 */
export async function openSqliteStorage(config: SqliteConfig): Promise<SqliteStorage> {
  if (typeof config.path !== 'string' || config.path.length === 0) {
    throw new TypeError('path must be a file path or ":memory:"')
  }
  const create = config.create ?? true
  if (config.path !== ':memory:' && create) createPrivately(config.path)
  const db = new Database(config.path, { fileMustExist: !create })
  try {
    applySqlitePragmas(db, config)
    const applied = config.migrate === false ? [] : await migrateSqlite(db)
    refreshStatistics(db, 'optimize = 0x10002', false)
    if (config.writer === 'thread' && !db.memory) capReadsCache(db)
    const storage = new SqliteStorage(db, {
      closeDatabase: true,
      migrationsApplied: applied,
      ...(config.checkpoint !== undefined && { checkpoint: config.checkpoint }),
      ...(config.writer !== undefined && { writer: config.writer }),
    })
    try {
      // A writer thread that cannot start fails the opening, not the first write.
      await storage.ping()
    } catch (error) {
      await storage.close()
      throw error
    }
    return storage
  } catch (error) {
    db.close()
    throw error
  }
}

/**
 * The page cache of a connection that only reads, in KiB, at most: with a writer thread, every
 * commit of the writer's connection empties the reading connection's cache (SQLite drops it when
 * a read transaction finds the WAL changed), and emptying it walks its whole hash table, which
 * grows with the pages it ever held and never shrinks. In-process at a million records, the first
 * read by id after each commit took 88–97 µs with 64 MiB, 39–44 with 16 and 30–32 with 4, the
 * next ones 16–21 µs with any of them; without commits, random reads by id cost the same with 4
 * MiB as with 64 (15–20 µs), the upper levels of the table and its indexes fitting in either.
 * It is also up to 60 MiB less memory.
 */
const READS_CACHE_KIB = 4_096

/** Caps the cache of `db`, which reads only (the writer thread writes), at {@link READS_CACHE_KIB}. */
function capReadsCache(db: Database.Database): void {
  // After the migrations, whose index builds use the whole cache.
  if (cacheSizeKibOf(db) > READS_CACHE_KIB) db.pragma(`cache_size = -${READS_CACHE_KIB}`)
}

/**
 * Lets SQLite refresh its query-planner statistics where they are stale, so that it keeps
 * picking the indexes the list queries expect, then drops the STAT4 samples (`dropStat4Samples`).
 * Best effort: when another process holds the write lock past the busy timeout, the statistics
 * wait for the next time; when `closing`, so do a full disk and a read-only or failing file,
 * which must not keep the database from closing.
 */
function refreshStatistics(db: Database.Database, pragma: string, closing: boolean): void {
  try {
    db.pragma(pragma)
    dropStat4Samples(db)
  } catch (error) {
    const failure = translateStorageFailure(error)
    if (!(failure instanceof StorageUnavailableError && (closing || failure.reason === 'busy'))) {
      throw error
    }
  }
}

/**
 * Copies the database to `toPath` with SQLite's online backup API, while it stays in use:
 * writes of this and other connections go on during the copy, and the copy is one consistent
 * snapshot. The copy is a complete database file (open it with `openSqliteStorage`); an
 * existing file at `toPath` is replaced. The copy is readable and writable by its owner only
 * (0600, D32), before the first page is written to it.
 *
 * @param source A storage from `openSqliteStorage` or `new SqliteStorage(db)`, or a connection.
 * @returns The number of pages copied.
 * @throws Error when the source is closed or `toPath` cannot be written.
 *
 * @example
 * await backupSqlite(storage, `/backups/beneficiaries-${day}.db`)
 */
export async function backupSqlite(
  source: SqliteStorage | Database.Database,
  toPath: string,
): Promise<number> {
  const db = source instanceof SqliteStorage ? source.database : source
  if (source instanceof SqliteStorage) await source.ping()
  // Created (or narrowed) here, since SQLite would create it 0644 less the umask.
  const fd = openSync(toPath, 'a', SQLITE_FILE_MODE)
  try {
    fchmodSync(fd, SQLITE_FILE_MODE)
  } finally {
    closeSync(fd)
  }
  const progress = await db.backup(toPath)
  return progress.totalPages
}
