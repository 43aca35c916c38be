import type { Selectable } from 'kysely'
import type { BeneficiaryRecord } from '../../core/beneficiary.js'
import type { NewBeneficiary } from '../../core/ports/beneficiary-store.js'
import { nameSortKey } from '../../core/search-terms.js'
import {
  writtenValues,
  type RelationalBeneficiaryRow,
  type SortKeyColumn,
  type WrittenColumn,
  type WrittenValues,
} from '../relational/relational-beneficiary-columns.js'
import type { BeneficiaryRow } from './postgres-schema.js'

export {
  RECORD_COLUMNS,
  recordOf,
  SUMMARY_COLUMNS,
  summaryReader,
  WRITTEN_COLUMNS,
  type WrittenColumn,
} from '../relational/relational-beneficiary-columns.js'

type Row = Selectable<BeneficiaryRow>

/**
 * The values of the written columns. The table must hold every column of the shared map in its
 * types (else `Pick` does not compile), and a column of the table that is neither in the map,
 * nor `id` (from the sequence), nor `words` (generated) is `never` here: no value fits, and
 * `toColumns` does not compile until the map has it.
 */
export type ColumnValues = WrittenValues & {
  readonly [C in Exclude<keyof Row, WrittenColumn | 'id' | 'words'>]: never
} & (Pick<Row, keyof RelationalBeneficiaryRow> extends RelationalBeneficiaryRow ? unknown : never)

/** The name sort keys of a record (D15); the search words follow from them in the database. */
export function sortKeys(
  record: Pick<BeneficiaryRecord, 'first_name' | 'last_name'>,
): Pick<Row, SortKeyColumn> {
  return { sort_first: nameSortKey(record.first_name), sort_last: nameSortKey(record.last_name) }
}

/** The column values of a record with this version and these sort keys. */
export function toColumns(
  record: NewBeneficiary,
  version: number,
  keys: Pick<Row, SortKeyColumn>,
): ColumnValues {
  return writtenValues(record, version, keys)
}
