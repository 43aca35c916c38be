import type { Migration } from 'kysely'

// The write log fed an in-memory copy of every record that listings no longer keep: they read
// SQLite's indexes alone, and nothing follows the log any more.
export const writeLogDropped: Migration = {
  async up(db) {
    await db.schema.dropTable('beneficiary_write_log').execute()
  },
}
