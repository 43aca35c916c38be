import { type Kysely, type Migration, sql } from 'kysely'

// A total with no date filter summed every day row (a few thousand at three years of data, a
// quarter of a millisecond); one row per status answers it at once.
export const statusTotals: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('beneficiary_status_counts')
      .addColumn('status', 'text', (col) => col.primaryKey())
      .addColumn('n', 'integer', (col) => col.notNull())
      .modifyEnd(sql`WITHOUT ROWID`)
      .execute()
    await sql`INSERT INTO beneficiary_status_counts (status, n)
      SELECT status, count(*) FROM beneficiaries GROUP BY 1`.execute(db)
  },
}
