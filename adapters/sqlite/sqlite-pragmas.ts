import type BetterSqlite3 from 'better-sqlite3'
import type { SqliteConfig } from './sqlite-config.js'

/**
 * The connection settings of {@link SqliteConfig}: everything but the path, whether to create
 * and migrate it, the checkpoints and the writer.
 */
export type SqlitePragmaOptions = Omit<
  SqliteConfig,
  'path' | 'create' | 'migrate' | 'checkpoint' | 'writer'
>

const DEFAULT_BUSY_TIMEOUT_MS = 5_000
const DEFAULT_CACHE_SIZE_KIB = 65_536

/**
 * Sets the connection up the way the adapter relies on: `busy_timeout` (default 5000 ms), WAL
 * (file databases), `synchronous=FULL` unless `NORMAL` is asked for, `foreign_keys=ON`, a page
 * cache of `cacheSizeKib`, temporary sorts in memory, and `secure_delete=ON`, so that what a
 * delete or an update removes is overwritten with zeros rather than left in free space (D27).
 * `openSqliteStorage` calls it; call it yourself on a connection you open and pass to
 * `new SqliteStorage(db)`.
 *
 * @throws TypeError for a negative or fractional `busyTimeoutMs` or `cacheSizeKib`.
 * @throws Error when the file cannot switch to WAL (e.g. a read-only directory).
 */
export function applySqlitePragmas(
  db: BetterSqlite3.Database,
  options: SqlitePragmaOptions = {},
): void {
  const busyTimeoutMs = wholeNumber('busyTimeoutMs', options.busyTimeoutMs, DEFAULT_BUSY_TIMEOUT_MS)
  const cacheSizeKib = wholeNumber('cacheSizeKib', options.cacheSizeKib, DEFAULT_CACHE_SIZE_KIB)
  const synchronous = options.synchronous ?? 'FULL'
  if (synchronous !== 'FULL' && synchronous !== 'NORMAL') {
    throw new TypeError("synchronous must be 'FULL' or 'NORMAL'")
  }
  // First, so that switching to WAL also waits for a connection that holds a lock.
  db.pragma(`busy_timeout = ${busyTimeoutMs}`)
  if (!db.memory) {
    const mode = db.pragma('journal_mode = WAL', { simple: true })
    if (mode !== 'wal') throw new Error(`SQLite refused WAL mode (journal_mode is ${String(mode)})`)
  }
  db.pragma(`synchronous = ${synchronous}`)
  db.pragma('foreign_keys = ON')
  db.pragma(`cache_size = -${cacheSizeKib}`)
  db.pragma('temp_store = MEMORY')
  // A connection's own setting, not the file's: every connection that writes sets it.
  db.pragma('secure_delete = ON')
}

/** The page cache of `db` in KiB, whichever way it was set (negative: KiB; positive: pages). */
export function cacheSizeKibOf(db: BetterSqlite3.Database): number {
  const size = Number(db.pragma('cache_size', { simple: true }))
  return size < 0 ? -size : (size * Number(db.pragma('page_size', { simple: true }))) / 1024
}

function wholeNumber(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new TypeError(`${name} must be a whole number of at least 0`)
  }
  return value
}

/**
 * Deletes the samples `ANALYZE` keeps in `sqlite_stat4` (better-sqlite3 builds SQLite with STAT4)
 * and reloads the statistics. With samples, SQLite prepares again, at every run, each statement
 * whose bound values it could compare with them: the status and date filters and the search,
 * 10–20 µs of a list request each time. The list queries choose their plans themselves (see
 * `SqliteBeneficiaryList`) and the row counts of `sqlite_stat1` stay, so nothing is lost.
 */
export function dropStat4Samples(db: BetterSqlite3.Database): void {
  const hasTable = db.prepare("SELECT 1 FROM sqlite_schema WHERE name = 'sqlite_stat4'").get()
  if (hasTable === undefined || db.prepare('SELECT 1 FROM sqlite_stat4').get() === undefined) return
  db.exec('DELETE FROM sqlite_stat4')
  // Documented: ANALYZE of sqlite_schema reloads the statistics into this connection.
  db.exec('ANALYZE sqlite_schema')
}
