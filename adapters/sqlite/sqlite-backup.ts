import { closeSync, fchmodSync, openSync } from 'node:fs'
import type BetterSqlite3 from 'better-sqlite3'
import { SQLITE_FILE_MODE, SqliteStorage } from './sqlite-storage.js'

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
  source: SqliteStorage | BetterSqlite3.Database,
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
