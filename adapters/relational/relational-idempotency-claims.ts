import type { CreateOutcome, IdempotencyClaim } from '../../core/ports/beneficiary-store.js'

/**
 * Every this many creates with a claim, one deletes up to {@link CLAIMS_PURGED} expired claims
 * on its way: twice the rate claims are made, so the table stays small, while most creates skip
 * the delete (it cost as much as inserting the record).
 */
const PURGE_EVERY = 32
/** Expired claims one purge deletes at most. */
export const CLAIMS_PURGED = 64

/** What the read of a held claim (D22) selects, in the order {@link claimedOutcome} reads it. */
export const CLAIM_COLUMNS = ['fingerprint', 'beneficiary_id', 'created_at', 'expires_at'] as const

/**
 * The `claimed` outcome of the claim held by the client and key of `claim`, from the values of
 * {@link CLAIM_COLUMNS}; `undefined` when there is none or it expired by `claim.now`.
 */
export function claimedOutcome(
  held: readonly unknown[] | undefined,
  claim: IdempotencyClaim,
): CreateOutcome | undefined {
  if (held === undefined || claim.now >= (held[3] as number)) return undefined
  return {
    kind: 'claimed',
    fingerprint: held[0] as string,
    beneficiaryId: held[1] as number,
    createdAt: held[2] as number,
  }
}

/** Counts the creates with a claim, and says which of them purges expired claims. */
export class ClaimPurges {
  #sincePurge = 0

  /** Whether this create with a claim purges expired claims. */
  due(): boolean {
    if (++this.#sincePurge < PURGE_EVERY) return false
    this.#sincePurge = 0
    return true
  }
}
