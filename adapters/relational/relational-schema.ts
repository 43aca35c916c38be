import type { Generated } from 'kysely'

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

/**
 * The tables every SQL adapter keeps alike, as Kysely sees them: each adapter's schema extends
 * it with `beneficiaries` and the tables of its own (search, counters).
 */
export interface RelationalSchema {
  beneficiary_history: HistoryRow
  idempotency_keys: IdempotencyRow
  clients: ClientRow
  sessions: SessionRow
  revoked_tokens: RevokedTokenRow
  signing_keys: SigningKeyRow
}
