import { type Migration } from 'kysely'

// The ids each write changed, by generation, apart from the counter log: a delete empties the
// counter log (it holds names, D27) but not this one, which holds only ids. From it, each
// connection's in-memory copy of the records followed every writer (dropped since: 0008).
export const writeLog: Migration = {
  async up(db) {
    await db.schema
      .createTable('beneficiary_write_log')
      // Never reused, even once every row is gone: a copy that holds a generation never takes
      // a later one for it.
      .addColumn('generation', 'integer', (col) => col.primaryKey().autoIncrement())
      .addColumn('ids', 'text', (col) => col.notNull())
      .execute()
  },
}
