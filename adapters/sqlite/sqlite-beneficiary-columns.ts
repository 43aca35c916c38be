import type { Selectable } from 'kysely'
import type { NewBeneficiary } from '../../core/ports/beneficiary-store.js'
import {
  summaryReader,
  WRITTEN_COLUMNS,
  writtenValues,
  type RelationalBeneficiaryRow,
  type SortKeyColumn,
  type WrittenColumn,
  type WrittenValues,
} from '../relational/relational-beneficiary-columns.js'
import type { NameKeys } from './sqlite-name-keys.js'
import { slot } from './sqlite-query.js'
import type { BeneficiaryRow } from './sqlite-schema.js'

export {
  RECORD_COLUMNS,
  recordOf,
  SUMMARY_COLUMNS,
} from '../relational/relational-beneficiary-columns.js'

type Row = Selectable<BeneficiaryRow>

/**
 * The values of the written columns, for the slots of {@link beneficiarySlots}. The table must
 * hold every column of the shared map in its types (else `Pick` does not compile), and a column
 * of the table outside the map is `never` here: no value fits, and `toColumns` does not compile
 * until the map has it.
 */
export type ColumnValues = WrittenValues & {
  readonly [C in Exclude<keyof Row, WrittenColumn | 'id'>]: never
} & (Pick<Row, keyof RelationalBeneficiaryRow> extends RelationalBeneficiaryRow ? unknown : never)

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
