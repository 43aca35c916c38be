import { sql, type Migration } from 'kysely'

// The access log (D35): one row per answer that carried personal data, ids only, and one row
// per record named in it, keyed to read one person's log in order. `beneficiary_ids` is the
// JSON array of the answer's ids, for an operator's scan. No foreign key to `beneficiaries`:
// the log of a deleted record outlives it until its retention. The index on the history's
// `at` lets retention (D37) find expired history entries without reading the table.
export const accessLog: Migration = {
  async up(db) {
    await sql`CREATE TABLE access_log (
      id INTEGER PRIMARY KEY,
      at INTEGER NOT NULL,
      client_id TEXT NOT NULL,
      request_id TEXT NOT NULL,
      operation TEXT NOT NULL,
      purpose TEXT,
      beneficiary_ids TEXT NOT NULL
    )`.execute(db)
    await sql`CREATE INDEX access_log_at ON access_log (at, id)`.execute(db)
    await sql`CREATE INDEX access_log_client ON access_log (client_id, at, id)`.execute(db)
    await sql`CREATE TABLE access_log_records (
      beneficiary_id INTEGER NOT NULL,
      at INTEGER NOT NULL,
      entry_id INTEGER NOT NULL,
      PRIMARY KEY (beneficiary_id, at, entry_id)
    ) WITHOUT ROWID`.execute(db)
    await sql`CREATE INDEX access_log_records_entry ON access_log_records (entry_id)`.execute(db)
    await sql`CREATE INDEX beneficiary_history_at ON beneficiary_history (at)`.execute(db)
  },
}
