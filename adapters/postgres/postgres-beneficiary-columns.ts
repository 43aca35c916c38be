import type { Selectable } from 'kysely'
import type { NewBeneficiary } from '../../core/ports/beneficiary-store.js'
import {
  writtenValues,
  type ColumnValues as RelationalColumnValues,
  type RelationalBeneficiaryRow,
  type SortKeyColumn,
} from '../relational/relational-beneficiary-columns.js'
import type { BeneficiaryRow } from './postgres-schema.js'

export {
  RECORD_COLUMNS,
  recordOf,
  sortKeys,
  SUMMARY_COLUMNS,
  summaryReader,
  WRITTEN_COLUMNS,
  type WrittenColumn,
} from '../relational/relational-beneficiary-columns.js'

/** The values of the written columns: `words` is generated from the sort keys, `id` a sequence's. */
export type ColumnValues = RelationalColumnValues<Selectable<BeneficiaryRow>, 'words'>

/** The column values of a record with this version and these sort keys. */
export function toColumns(
  record: NewBeneficiary,
  version: number,
  keys: Pick<RelationalBeneficiaryRow, SortKeyColumn>,
): ColumnValues {
  return writtenValues(record, version, keys)
}
