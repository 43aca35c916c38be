import type { ColumnType, Generated } from 'kysely'
import type { RelationalBeneficiaryRow } from '../relational/relational-beneficiary-columns.js'
import type { RelationalSchema } from '../relational/relational-schema.js'

/** A row of `beneficiaries`. Timestamps are epoch milliseconds; `metadata` is JSON text. */
export interface BeneficiaryRow extends Omit<RelationalBeneficiaryRow, 'id'> {
  id: Generated<number>
}

/** The FTS5 table over the search words of both names (D16); `rowid` is the beneficiary id. */
export interface SearchRow {
  rowid: number
  words: string
  status: string
  /** The hidden column named like the table, the left operand of `MATCH`. */
  beneficiary_search: ColumnType<string, never, never>
}

/** Records per status and UTC day of `created_at`, kept by `SqliteCounters`. */
export interface DayCountRow {
  status: string
  day: number
  n: number
  /** Lower bound of the ids counted in the row (not raised by deletes). */
  min_id: number
  /** Upper bound of the ids counted in the row (not lowered by deletes). */
  max_id: number
}

/** Records per status and block of 1024 ids (`id >> 10`), kept by `SqliteCounters`. */
export interface BlockCountRow {
  status: string
  block: number
  n: number
}

/** Records per status and UTC day of `updated_at`, kept by `SqliteCounters`. */
export interface UpdatedCountRow {
  status: string
  day: number
  n: number
}

/**
 * Records per name sort, status, sort key, raw name and block of 32,768 ids (`id >> 15`): the
 * buckets of the name indexes' order (sort key, raw name, id), kept by `SqliteCounters`.
 */
export interface NameKeyCountRow {
  /** `first` or `last`. */
  name: string
  status: string
  sort_key: string
  raw_name: string
  block: number
  n: number
}

/** A write of the counters: its generation and its `CounterChange`s as JSON. */
export interface CounterLogRow {
  generation: Generated<number>
  changes: string
}

/** Every table of the latest schema, as Kysely sees it: the shared ones and these. */
export interface SqliteSchema extends RelationalSchema {
  beneficiaries: BeneficiaryRow
  beneficiary_search: SearchRow
  beneficiary_day_counts: DayCountRow
  beneficiary_block_counts: BlockCountRow
  beneficiary_updated_counts: UpdatedCountRow
  beneficiary_name_key_counts: NameKeyCountRow
  beneficiary_counter_log: CounterLogRow
}
