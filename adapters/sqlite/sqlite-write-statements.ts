import type BetterSqlite3 from 'better-sqlite3'
import type { BeneficiaryRecord } from '../../core/beneficiary.js'
import type { NewBeneficiary } from '../../core/ports/beneficiary-store.js'
import { nameSortKey } from '../../core/search-terms.js'
import { queryBuilder, slot, SqliteQuery } from './sqlite-query.js'
import type { BeneficiaryRow } from './sqlite-schema.js'

/** The statements that insert a beneficiary and its search words. */
export interface WriteStatements {
  /** Binds {@link toColumns}. */
  readonly insert: SqliteQuery<never>
  /** Binds `id`, `words` ({@link NameKeys}) and `status`. */
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

/** A slot for every column but `id`, named like the column. */
export function beneficiarySlots(): { [K in keyof Omit<BeneficiaryRow, 'id'>]: never } {
  return {
    first_name: slot('first_name'),
    last_name: slot('last_name'),
    email: slot('email'),
    phone: slot('phone'),
    date_of_birth: slot('date_of_birth'),
    fiscal_code: slot('fiscal_code'),
    address_street: slot('address_street'),
    address_city: slot('address_city'),
    address_postal_code: slot('address_postal_code'),
    address_country: slot('address_country'),
    metadata: slot('metadata'),
    status: slot('status'),
    created_at: slot('created_at'),
    updated_at: slot('updated_at'),
    version: slot('version'),
    sort_first: slot('sort_first'),
    sort_last: slot('sort_last'),
  }
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
  const first = nameSortKey(record.first_name)
  const last = nameSortKey(record.last_name)
  const words = first.length > 0 && last.length > 0 ? `${first} ${last}` : first + last
  return { words, sort_first: first, sort_last: last }
}

/** The column values of a record, for the slots of {@link beneficiarySlots}. */
export function toColumns(
  record: NewBeneficiary,
  version: number,
  keys: Pick<NameKeys, 'sort_first' | 'sort_last'>,
): Record<keyof Omit<BeneficiaryRow, 'id'>, string | number | null> {
  const address = record.address
  return {
    first_name: record.first_name,
    last_name: record.last_name,
    email: record.email,
    phone: record.phone,
    date_of_birth: record.date_of_birth,
    fiscal_code: record.fiscal_code,
    address_street: address === null ? null : address.street,
    address_city: address === null ? null : address.city,
    address_postal_code: address === null ? null : address.postal_code,
    address_country: address === null ? null : address.country,
    metadata: JSON.stringify(record.metadata),
    status: record.status,
    created_at: record.created_at,
    updated_at: record.updated_at,
    version,
    sort_first: keys.sort_first,
    sort_last: keys.sort_last,
  }
}
