import type Database from 'better-sqlite3'

/**
 * Deletes the samples `ANALYZE` keeps in `sqlite_stat4` (better-sqlite3 builds SQLite with STAT4)
 * and reloads the statistics. With samples, SQLite prepares again, at every run, each statement
 * whose bound values it could compare with them: the status and date filters and the search,
 * 10–20 µs of a list request each time. The list queries choose their plans themselves (see
 * `SqliteBeneficiaryList`) and the row counts of `sqlite_stat1` stay, so nothing is lost.
 */
export function dropStat4Samples(db: Database.Database): void {
  const hasTable = db.prepare("SELECT 1 FROM sqlite_schema WHERE name = 'sqlite_stat4'").get()
  if (hasTable === undefined || db.prepare('SELECT 1 FROM sqlite_stat4').get() === undefined) return
  db.exec('DELETE FROM sqlite_stat4')
  // Documented: ANALYZE of sqlite_schema reloads the statistics into this connection.
  db.exec('ANALYZE sqlite_schema')
}
