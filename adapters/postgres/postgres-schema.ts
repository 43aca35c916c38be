import type { ColumnType, Generated } from 'kysely'
import type { RelationalBeneficiaryRow } from '../relational/relational-beneficiary-columns.js'
import type { RelationalSchema } from '../relational/relational-schema.js'

/**
 * A row of `beneficiaries`. Timestamps are epoch milliseconds (`bigint`); `metadata` is `json`
 * (text that keeps the client's key order); names and sort keys compare by code point
 * (`COLLATE "C"`).
 */
export interface BeneficiaryRow extends Omit<RelationalBeneficiaryRow, 'id'> {
  id: Generated<number>
  /** Generated from the sort keys: the search words of both names (D16), as a tsvector. */
  words: ColumnType<string, never, never>
}

/**
 * A row of `beneficiary_counts`: how many records with `id % 16 = shard - 1` (shard 0 holds
 * bulk loads) have this status and this key of one kind (see `postgres-counters.ts`).
 */
export interface CountRow {
  kind: string
  status: string
  key: number
  prefix: string
  shard: number
  n: number
  /** Lower bound of the ids counted in the row (not raised by deletes). */
  min_id: number
  /** Upper bound of the ids counted in the row (not lowered by deletes). */
  max_id: number
}

/** A row of `bulk_loads`: how far a named load of `seedPostgres` is. */
export interface BulkLoadRow {
  name: string
  /** When the load first started, epoch ms. */
  started_at: number
  /** Records committed. */
  done: number
  first_id: number | null
  last_id: number | null
  /** When the last record was committed and the tables analysed; `null` until then. */
  finished_at: number | null
}

/** Every table of the latest schema, as Kysely sees it: the shared ones and these. */
export interface PostgresSchema extends RelationalSchema {
  beneficiaries: BeneficiaryRow
  beneficiary_counts: CountRow
  bulk_loads: BulkLoadRow
}
