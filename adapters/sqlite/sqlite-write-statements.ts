import type BetterSqlite3 from 'better-sqlite3'
import { beneficiarySlots } from './sqlite-beneficiary-columns.js'
import { queryBuilder, slot, SqliteQuery } from './sqlite-query.js'

/** The statements that insert a beneficiary and its search words. */
export interface WriteStatements {
  /** Binds `toColumns`. */
  readonly insert: SqliteQuery<never>
  /** Binds `id`, `words` (`NameKeys`) and `status`. */
  readonly insertWords: SqliteQuery<never>
}

/** Prepares the insert statements shared by the store and the bulk seeder. */
export function prepareWriteStatements(db: BetterSqlite3.Database): WriteStatements {
  return {
    insert: new SqliteQuery(
      db,
      queryBuilder.insertInto('beneficiaries').values(beneficiarySlots()),
    ),
    insertWords: new SqliteQuery(
      db,
      queryBuilder.insertInto('beneficiary_search').values({
        rowid: slot<number>('id'),
        words: slot<string>('words'),
        status: slot<string>('status'),
      }),
    ),
  }
}
