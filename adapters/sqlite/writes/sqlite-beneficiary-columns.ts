import type BetterSqlite3 from 'better-sqlite3'
import type { Selectable } from 'kysely'
import type { BeneficiaryRecord } from '../../../core/beneficiary.js'
import type { NewBeneficiary } from '../../../core/ports/beneficiary-store.js'
import {
  sortKeys,
  summaryReader,
  WRITTEN_COLUMNS,
  writtenValues,
  type ColumnValues as RelationalColumnValues,
  type SortKeyColumn,
  type WrittenColumn,
} from '../../relational/relational-beneficiary-columns.js'
import { queryBuilder, slot, SqliteQuery } from '../sqlite-query.js'
import type { BeneficiaryRow } from '../sqlite-schema.js'

export {
  RECORD_COLUMNS,
  recordOf,
  SUMMARY_COLUMNS,
  toRecordFrom,
} from '../../relational/relational-beneficiary-columns.js'

/** The values of the written columns, for the slots of {@link beneficiarySlots}. */
export type ColumnValues = RelationalColumnValues<Selectable<BeneficiaryRow>>

/** A summary from the values of `SUMMARY_COLUMNS`, selected first. */
export const summaryOf = summaryReader(0)

/** A slot for every written column, named like the column. */
export function beneficiarySlots(): { readonly [C in WrittenColumn]: never } {
  return Object.fromEntries(WRITTEN_COLUMNS.map((column) => [column, slot(column)])) as {
    readonly [C in WrittenColumn]: never
  }
}

/** The column values of a record with this version and these sort keys. */
export function toColumns(
  record: NewBeneficiary,
  version: number,
  keys: Pick<NameKeys, SortKeyColumn>,
): ColumnValues {
  return writtenValues(record, version, keys)
}

/** What search and the name sorts compare, derived from the two names. */
export interface NameKeys {
  /** The search words of both names, as `searchTerms()` splits them (D16). */
  readonly words: string
  /** The primary keys of the name sorts (D15), compared by SQLite's BINARY collation. */
  readonly sort_first: string
  readonly sort_last: string
}

/** The {@link NameKeys} of a record. */
export function nameKeys(record: Pick<BeneficiaryRecord, 'first_name' | 'last_name'>): NameKeys {
  const { sort_first: first, sort_last: last } = sortKeys(record)
  const words = first.length > 0 && last.length > 0 ? `${first} ${last}` : first + last
  return { words, sort_first: first, sort_last: last }
}

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
