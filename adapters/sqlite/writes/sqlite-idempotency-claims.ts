import type BetterSqlite3 from 'better-sqlite3'
import type { CreateOutcome, IdempotencyClaim } from '../../../core/ports/beneficiary-store.js'
import {
  CLAIM_COLUMNS,
  claimedOutcome,
  ClaimPurges,
  CLAIMS_PURGED,
} from '../../relational/relational-idempotency-claims.js'
import { queryBuilder, slot, SqliteQuery } from '../sqlite-query.js'

/**
 * The Idempotency-Key claims (D22) of `SqliteBeneficiaryStore`, in `idempotency_keys`: read and
 * written inside the transaction of the create they belong to.
 */
export class SqliteIdempotencyClaims {
  readonly #select: SqliteQuery<never>
  readonly #insert: SqliteQuery<never>
  readonly #purge: SqliteQuery<never>
  readonly #purges = new ClaimPurges()

  constructor(db: BetterSqlite3.Database) {
    this.#select = new SqliteQuery(
      db,
      queryBuilder
        .selectFrom('idempotency_keys')
        .select(CLAIM_COLUMNS)
        .where('client_id', '=', slot('client_id'))
        .where('key', '=', slot('key')),
    )
    // An expired claim of the same key is replaced in place.
    this.#insert = new SqliteQuery(
      db,
      queryBuilder
        .insertInto('idempotency_keys')
        .values({
          client_id: slot<string>('client_id'),
          key: slot<string>('key'),
          fingerprint: slot<string>('fingerprint'),
          beneficiary_id: slot<number>('beneficiary_id'),
          created_at: slot<number>('created_at'),
          expires_at: slot<number>('expires_at'),
        })
        .onConflict((oc) =>
          oc.columns(['client_id', 'key']).doUpdateSet((eb) => ({
            fingerprint: eb.ref('excluded.fingerprint'),
            beneficiary_id: eb.ref('excluded.beneficiary_id'),
            created_at: eb.ref('excluded.created_at'),
            expires_at: eb.ref('excluded.expires_at'),
          })),
        ),
    )
    this.#purge = new SqliteQuery(
      db,
      queryBuilder
        .deleteFrom('idempotency_keys')
        .where('id', 'in', (eb) =>
          eb
            .selectFrom('idempotency_keys')
            .select('id')
            .where('expires_at', '<=', slot('now'))
            .limit(CLAIMS_PURGED),
        ),
    )
  }

  /** The `claimed` outcome of a live claim of the same client and key, or `undefined`. */
  held(claim: IdempotencyClaim): CreateOutcome | undefined {
    return claimedOutcome(
      this.#select.getValues({ client_id: claim.clientId, key: claim.key }),
      claim,
    )
  }

  /** Stores `claim` for the record it created, purging expired claims now and then. */
  add(claim: IdempotencyClaim, beneficiaryId: number, createdAt: number): void {
    if (this.#purges.due()) this.#purge.run({ now: claim.now })
    this.#insert.run({
      client_id: claim.clientId,
      key: claim.key,
      fingerprint: claim.fingerprint,
      beneficiary_id: beneficiaryId,
      created_at: createdAt,
      expires_at: claim.expiresAt,
    })
  }
}
