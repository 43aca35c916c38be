import { sql, type RawBuilder } from 'kysely'
import type { CreateOutcome, IdempotencyClaim } from '../../core/ports/beneficiary-store.js'
import {
  CLAIM_COLUMNS,
  claimedOutcome,
  ClaimPurges,
  CLAIMS_PURGED,
} from '../relational/relational-idempotency-claims.js'
import { table } from './postgres-counters.js'
import { PostgresQuery, slot, type Queryable } from './postgres-query.js'

/** The slot values of a claim, for {@link claimKey}. */
export function claimValues(claim: IdempotencyClaim): Record<string, unknown> {
  return {
    claim_client_id: claim.clientId,
    claim_key: claim.key,
    claim_fingerprint: claim.fingerprint,
    claim_expires_at: claim.expiresAt,
    claim_now: claim.now,
  }
}

/**
 * An INSERT that claims the key (D22) for a record created at `created_at`, giving it its id
 * from the sequence, and returns that id as `beneficiary_id`; or returns nothing when a live
 * claim of the same client and key exists. A concurrent create with the same key waits on the
 * unique index until the other transaction ends: if it committed, its claim is live and this
 * one returns nothing; if it rolled back (a taken fiscal code), this one claims the key. An
 * expired claim is replaced in place.
 */
export function claimKey(schema: string): RawBuilder<unknown> {
  const claims = table(schema, 'idempotency_keys')
  return sql`INSERT INTO ${claims} AS k
      (client_id, key, fingerprint, beneficiary_id, created_at, expires_at)
    VALUES (${slot('claim_client_id')}, ${slot('claim_key')}, ${slot('claim_fingerprint')},
      nextval(${sql.lit(`"${schema}".beneficiary_ids`)}::regclass), ${slot('created_at')},
      ${slot('claim_expires_at')})
    ON CONFLICT ON CONSTRAINT idempotency_keys_client_key DO UPDATE SET
      fingerprint = excluded.fingerprint,
      beneficiary_id = excluded.beneficiary_id,
      created_at = excluded.created_at,
      expires_at = excluded.expires_at
    WHERE k.expires_at <= ${slot('claim_now')}
    RETURNING beneficiary_id`
}

/**
 * The Idempotency-Key claims (D22) of `PostgresBeneficiaryStore`, in `idempotency_keys`, beside
 * {@link claimKey}, which the create statement runs: the claim that made a create a replay, and
 * the purge of expired claims.
 */
export class PostgresIdempotencyClaims {
  readonly #select: PostgresQuery
  readonly #purge: PostgresQuery
  readonly #purges = new ClaimPurges()

  constructor(schema: string) {
    const claims = table(schema, 'idempotency_keys')
    this.#select = new PostgresQuery(sql`
      SELECT ${sql.raw(CLAIM_COLUMNS.join(', '))} FROM ${claims}
      WHERE client_id = ${slot('client_id')} AND key = ${slot('key')}`)
    // Rows another purge is deleting are skipped rather than waited for. The ORDER BY makes the
    // plan walk the expires_at index from its start and stop at the first live claim: without
    // it, the plan made for any value scanned the whole table, every 32 creates.
    this.#purge = new PostgresQuery(sql`
      DELETE FROM ${claims} WHERE id IN (
        SELECT id FROM ${claims} WHERE expires_at <= ${slot('now')} ORDER BY expires_at
        LIMIT ${sql.lit(CLAIMS_PURGED)} FOR UPDATE SKIP LOCKED)`)
  }

  /**
   * The `claimed` outcome of the live claim of the same client and key that kept a create from
   * writing, read after it; `undefined` when there is none (it expired in between).
   */
  async held(db: Queryable, claim: IdempotencyClaim): Promise<CreateOutcome | undefined> {
    const rows = await this.#select.arrays(db, { client_id: claim.clientId, key: claim.key })
    return claimedOutcome(rows[0], claim)
  }

  /** Whether this create with a claim should purge expired claims afterwards. */
  purgeDue(): boolean {
    return this.#purges.due()
  }

  /** Deletes up to `CLAIMS_PURGED` claims expired at `now`. */
  async purge(db: Queryable, now: number): Promise<void> {
    await this.#purge.run(db, { now })
  }
}
