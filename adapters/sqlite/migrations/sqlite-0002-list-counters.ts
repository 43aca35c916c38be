import { type Kysely, type Migration, sql } from 'kysely'

/** The UTC day of an epoch-millisecond expression, rounded down also before 1970. */
function dayOf(column: string): string {
  return `((${column} - ((${column} % 86400000) + 86400000) % 86400000) / 86400000)`
}

// Counting a million rows, or skipping a million with OFFSET, costs tens of milliseconds; these
// counters answer the totals of the status and date filters and find where a deep page starts
// (see `SqliteBeneficiaryList`). The store updates them in the transaction of each write
// (`SqliteCounters`): triggers did the same at seven times the cost of an insert.
export const listCounters: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('beneficiary_day_counts')
      .addColumn('status', 'text', (col) => col.notNull())
      .addColumn('day', 'integer', (col) => col.notNull())
      .addColumn('n', 'integer', (col) => col.notNull())
      .addColumn('min_id', 'integer', (col) => col.notNull())
      .addColumn('max_id', 'integer', (col) => col.notNull())
      .addPrimaryKeyConstraint('beneficiary_day_counts_key', ['status', 'day'])
      .modifyEnd(sql`WITHOUT ROWID`)
      .execute()
    await db.schema
      .createTable('beneficiary_block_counts')
      .addColumn('status', 'text', (col) => col.notNull())
      .addColumn('block', 'integer', (col) => col.notNull())
      .addColumn('n', 'integer', (col) => col.notNull())
      .addPrimaryKeyConstraint('beneficiary_block_counts_key', ['status', 'block'])
      .modifyEnd(sql`WITHOUT ROWID`)
      .execute()

    await sql
      .raw(
        `INSERT INTO beneficiary_day_counts (status, day, n, min_id, max_id)
          SELECT status, ${dayOf('created_at')}, count(*), min(id), max(id)
          FROM beneficiaries GROUP BY 1, 2`,
      )
      .execute(db)
    await sql`INSERT INTO beneficiary_block_counts (status, block, n)
      SELECT status, id >> 10, count(*) FROM beneficiaries GROUP BY 1, 2`.execute(db)

    await db.schema
      .createTable('beneficiary_updated_counts')
      .addColumn('status', 'text', (col) => col.notNull())
      .addColumn('day', 'integer', (col) => col.notNull())
      .addColumn('n', 'integer', (col) => col.notNull())
      .addPrimaryKeyConstraint('beneficiary_updated_counts_key', ['status', 'day'])
      .modifyEnd(sql`WITHOUT ROWID`)
      .execute()
    // `prefix`: the first two characters (code points) of the name's sort key.
    await db.schema
      .createTable('beneficiary_name_counts')
      .addColumn('name', 'text', (col) => col.notNull().check(sql`name IN ('first', 'last')`))
      .addColumn('status', 'text', (col) => col.notNull())
      .addColumn('prefix', 'text', (col) => col.notNull())
      .addColumn('n', 'integer', (col) => col.notNull())
      .addPrimaryKeyConstraint('beneficiary_name_counts_key', ['name', 'status', 'prefix'])
      .modifyEnd(sql`WITHOUT ROWID`)
      .execute()
    await sql
      .raw(
        `INSERT INTO beneficiary_updated_counts (status, day, n)
          SELECT status, ${dayOf('updated_at')}, count(*) FROM beneficiaries GROUP BY 1, 2`,
      )
      .execute(db)
    await sql`INSERT INTO beneficiary_name_counts (name, status, prefix, n)
      SELECT 'first', status, substr(sort_first, 1, 2), count(*) FROM beneficiaries GROUP BY 2, 3
      UNION ALL
      SELECT 'last', status, substr(sort_last, 1, 2), count(*) FROM beneficiaries GROUP BY 2, 3
    `.execute(db)
  },
}
