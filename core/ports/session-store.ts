/**
 * A login session (D4, D5): created by login, holding the session's one refresh token. Refresh
 * tokens are not rotated, so a session has exactly one, stored only as a hash.
 */
export interface SessionRecord {
  /** The `sid` claim of every access token issued in this login session. */
  readonly id: string
  readonly client_id: string
  /** SHA-256 of the refresh token, base64url. */
  readonly refresh_token_hash: string
  /** Scopes granted at login (possibly narrower than the client's). */
  readonly scopes: readonly string[]
  /** Epoch milliseconds. */
  readonly created_at: number
  /** When the refresh token stops working, epoch milliseconds. */
  readonly expires_at: number
  /** Epoch milliseconds, or `null` while the session is live. */
  readonly revoked_at: number | null
}

/** An access token to revoke until it would have expired anyway. */
export interface RevokedToken {
  readonly jti: string
  /** The token's `exp`, epoch milliseconds; the adapter may forget the entry after it. */
  readonly expiresAt: number
}

/** Storage of login sessions, refresh tokens and revoked access-token ids. */
export interface SessionStore {
  /** Adds a session. */
  insert(session: SessionRecord): Promise<void>
  /** The session holding this refresh-token hash, whatever its state, or `undefined`. */
  findByRefreshTokenHash(hash: string): Promise<SessionRecord | undefined>
  /**
   * Revokes the session (and so its refresh token) and, when given, the access token, in one
   * transaction (D5). Revoking an already revoked session changes nothing.
   */
  revoke(sessionId: string, at: number, token?: RevokedToken): Promise<void>
  /**
   * Whether an access token with this `sid`, `jti` and `sub` may still be used: its session
   * exists, belongs to the client `clientId` and is not revoked, that client is not revoked, and
   * the `jti` is not revoked. Called on every authenticated request: adapters answer it with
   * one indexed lookup.
   */
  isTokenActive(sessionId: string, jti: string, clientId: string): Promise<boolean>
}
