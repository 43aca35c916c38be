import type { RevokedToken, SessionRecord, SessionStore } from '../../core/ports/session-store.js'
import { frozenCopy } from './memory-frozen-copy.js'

/**
 * Login sessions, indexed by id and by refresh-token hash, and the set of revoked access-token
 * ids. Revoked ids are kept for the life of the storage, not only until they expire.
 *
 * Get one from `MemoryStorage`; it is not constructed on its own.
 */
export class MemorySessionStore implements SessionStore {
  readonly #assertOpen: () => void
  readonly #isClientLive: (clientId: string) => boolean
  readonly #sessions = new Map<string, SessionRecord>()
  readonly #idsByRefreshTokenHash = new Map<string, string>()
  readonly #revokedTokenIds = new Set<string>()

  /**
   * @param assertOpen Throws when the owning storage is closed; called first by every method.
   * @param isClientLive Whether a client exists and is not revoked.
   */
  constructor(assertOpen: () => void, isClientLive: (clientId: string) => boolean) {
    this.#assertOpen = assertOpen
    this.#isClientLive = isClientLive
  }

  /**
   * Adds a copy of the session.
   * @throws Error when the session id or the refresh-token hash is already stored.
   */
  async insert(session: SessionRecord): Promise<void> {
    this.#assertOpen()
    if (this.#sessions.has(session.id)) throw new Error('a session with this id already exists')
    if (this.#idsByRefreshTokenHash.has(session.refresh_token_hash)) {
      throw new Error('a session with this refresh-token hash already exists')
    }
    this.#sessions.set(
      session.id,
      frozenCopy<SessionRecord>({
        id: session.id,
        client_id: session.client_id,
        refresh_token_hash: session.refresh_token_hash,
        scopes: session.scopes,
        created_at: session.created_at,
        expires_at: session.expires_at,
        revoked_at: session.revoked_at,
      }),
    )
    this.#idsByRefreshTokenHash.set(session.refresh_token_hash, session.id)
  }

  /** The session holding this refresh-token hash, whatever its state, or `undefined`. */
  async findByRefreshTokenHash(hash: string): Promise<SessionRecord | undefined> {
    this.#assertOpen()
    const id = this.#idsByRefreshTokenHash.get(hash)
    return id === undefined ? undefined : this.#sessions.get(id)
  }

  /** Sets the session's `revoked_at` unless already set, and revokes `token.jti` when given. */
  async revoke(sessionId: string, at: number, token?: RevokedToken): Promise<void> {
    this.#assertOpen()
    const session = this.#sessions.get(sessionId)
    if (session !== undefined && session.revoked_at === null) {
      this.#sessions.set(sessionId, frozenCopy({ ...session, revoked_at: at }))
    }
    if (token !== undefined) this.#revokedTokenIds.add(token.jti)
  }

  /**
   * False when the session is unknown, another client's or revoked, its client unknown or
   * revoked, or `jti` revoked.
   */
  async isTokenActive(sessionId: string, jti: string, clientId: string): Promise<boolean> {
    this.#assertOpen()
    const session = this.#sessions.get(sessionId)
    return (
      session !== undefined &&
      session.client_id === clientId &&
      session.revoked_at === null &&
      this.#isClientLive(session.client_id) &&
      !this.#revokedTokenIds.has(jti)
    )
  }
}
