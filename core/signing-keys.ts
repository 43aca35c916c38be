import { base64urlByteLength, randomToken } from './crypto.js'
import type { Clock } from './ports/clock.js'
import type { SigningKeyStore } from './ports/signing-key-store.js'

/** A key for signing and verifying access tokens (D3). */
export interface AccessTokenKey {
  /** Key id, written into each token's `kid` header. */
  readonly kid: string
  /** At least 32 random bytes, base64url. */
  readonly secret: string
}

/** The kid of the key a service generates for itself when the storage has none (D3). */
const GENERATED_KID = 'generated-1'

/**
 * The keys kept in the storage, newest first (the first one signs); on a storage with none, one
 * is generated and stored first.
 */
export async function loadSigningKeys(
  store: SigningKeyStore,
  clock: Clock,
): Promise<AccessTokenKey[]> {
  let stored = await store.list()
  if (stored.length === 0) {
    // A fixed kid: two processes starting at once on a new database insert the same kid, the
    // store keeps the first, and both sign with it (a random kid each left one refusing the
    // other's tokens).
    await store.insert({ kid: GENERATED_KID, secret: randomToken(32), created_at: clock.now() })
    // Another process may have won the race: whatever is stored now is the truth.
    stored = await store.list()
  }
  return [...stored].reverse().map(({ kid, secret }) => ({ kid, secret }))
}

/** @throws TypeError when a key has no kid or a secret shorter than 32 bytes. */
export function checkSigningKeys(keys: readonly AccessTokenKey[]): void {
  for (const key of keys) {
    if (key.kid.length === 0 || base64urlByteLength(key.secret) < 32) {
      throw new TypeError('each key needs a kid and a base64url secret of at least 32 bytes')
    }
  }
}
