/** A symmetric key for signing access tokens (D3). */
export interface SigningKey {
  /** Key id, written into each token's `kid` header. */
  readonly kid: string
  /** At least 32 random bytes, base64url. */
  readonly secret: string
  /** Epoch milliseconds. The newest key signs; all of them verify. */
  readonly created_at: number
}

/**
 * Where the standalone server keeps the keys it generated itself, so that a restart does not log
 * everybody out (D3). Unused when the embedding application passes its own keys.
 */
export interface SigningKeyStore {
  /** Every key, oldest first. */
  list(): Promise<readonly SigningKey[]>
  /** Adds a key; a key with an existing `kid` is ignored (two processes may race at start). */
  insert(key: SigningKey): Promise<void>
}
