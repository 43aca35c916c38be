import { type Kysely, type Migration, sql } from 'kysely'

// A deep page sorted by name started at the first two letters of its bucket's names, so OFFSET
// passed up to a whole bucket (150,000 index entries for `ro` at a million records). The name
// counters now end a bucket at every sort key, raw name and block of 32,768 ids, the order of the
// name indexes. The counter log, one generation per write of the counters, tells a connection
// what changed since its copy of them (`SqliteCounterMirror`) was made.
export const nameKeyCounters: Migration = {
  async up(db: Kysely<unknown>): Promise<void> {
    await db.schema
      .createTable('beneficiary_name_key_counts')
      .addColumn('name', 'text', (col) => col.notNull().check(sql`name IN ('first', 'last')`))
      .addColumn('status', 'text', (col) => col.notNull())
      .addColumn('sort_key', 'text', (col) => col.notNull())
      .addColumn('raw_name', 'text', (col) => col.notNull())
      .addColumn('block', 'integer', (col) => col.notNull())
      .addColumn('n', 'integer', (col) => col.notNull())
      // The block first: the creates of a group, with ids that follow each other, add to a few
      // neighbouring rows (a few pages of the WAL per commit) rather than one page per name.
      .addPrimaryKeyConstraint('beneficiary_name_key_counts_key', [
        'name',
        'block',
        'status',
        'sort_key',
        'raw_name',
      ])
      .modifyEnd(sql`WITHOUT ROWID`)
      .execute()
    await sql`INSERT INTO beneficiary_name_key_counts (name, status, sort_key, raw_name, block, n)
      SELECT 'first', status, sort_first, first_name, id >> 15, count(*)
        FROM beneficiaries GROUP BY 2, 3, 4, 5
      UNION ALL
      SELECT 'last', status, sort_last, last_name, id >> 15, count(*)
        FROM beneficiaries GROUP BY 2, 3, 4, 5`.execute(db)
    await db.schema.dropTable('beneficiary_name_counts').execute()
    // The total of a status is now the sum of its blocks, which every listing has in memory.
    await db.schema.dropTable('beneficiary_status_counts').execute()
    // `changes`: a JSON array of `CounterChange`; the last generation is the counters' version.
    await db.schema
      .createTable('beneficiary_counter_log')
      .addColumn('generation', 'integer', (col) => col.primaryKey())
      .addColumn('changes', 'text', (col) => col.notNull())
      .execute()
  },
}
