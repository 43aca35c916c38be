import type { ColumnType, Generated } from 'kysely'
import type { RelationalBeneficiaryRow } from '../relational/relational-beneficiary-columns.js'

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

/** A row of `beneficiary_history` (D27); `changes` is a JSON array. */
export interface HistoryRow {
  id: Generated<number>
  beneficiary_id: number
  at: number
  action: string
  client_id: string
  request_id: string
  changes: string
}

/** A row of `idempotency_keys` (D22). */
export interface IdempotencyRow {
  id: Generated<number>
  client_id: string
  key: string
  fingerprint: string
  beneficiary_id: number
  created_at: number
  expires_at: number
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

/** A row of `clients` (D1); `scopes` is a JSON array. */
export interface ClientRow {
  seq: Generated<number>
  id: string
  name: string
  secret_hash: string
  scopes: string
  created_at: number
  revoked_at: number | null
}

/** A row of `sessions` (D4, D5); `scopes` is a JSON array. */
export interface SessionRow {
  seq: Generated<number>
  id: string
  client_id: string
  refresh_token_hash: string
  scopes: string
  created_at: number
  expires_at: number
  revoked_at: number | null
}

/** A row of `revoked_tokens` (D5). */
export interface RevokedTokenRow {
  jti: string
  expires_at: number
}

/** A row of `signing_keys` (D3). */
export interface SigningKeyRow {
  seq: Generated<number>
  kid: string
  secret: string
  created_at: number
}

/** Every table of the latest schema, as Kysely sees it. */
export interface PostgresSchema {
  beneficiaries: BeneficiaryRow
  beneficiary_history: HistoryRow
  idempotency_keys: IdempotencyRow
  beneficiary_counts: CountRow
  bulk_loads: BulkLoadRow
  clients: ClientRow
  sessions: SessionRow
  revoked_tokens: RevokedTokenRow
  signing_keys: SigningKeyRow
}
