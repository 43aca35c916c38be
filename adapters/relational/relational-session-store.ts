import type { RevokedToken, SessionRecord, SessionStore } from '../../core/ports/session-store.js'
import { slot } from './relational-slots.js'
import type {
  RelationalRead,
  RelationalStatements,
  RelationalWrite,
} from './relational-statements.js'

/** How many expired revoked-token ids a revocation deletes on its way, to keep the table small. */
export const TOKENS_PURGED_PER_REVOKE = 16
/** Kept this long past `exp`, well beyond the verifier's clock-skew allowance (D3). */
const REVOKED_TOKEN_GRACE_MS = 10 * 60_000

const SESSION_COLUMNS = [
  'id',
  'client_id',
  'refresh_token_hash',
  'scopes',
  'created_at',
  'expires_at',
  'revoked_at',
] as const

/**
 * What each adapter does its own way for the sessions: the revocation, one transaction of
 * several statements on SQLite and one statement on PostgreSQL, and the check of a token, which
 * SQLite remembers and PostgreSQL sends in batches.
 */
export interface SessionTokens {
  /**
   * Sets the session's `revoked_at` unless already set and, when `token` is given, revokes its
   * `jti` and deletes up to {@link TOKENS_PURGED_PER_REVOKE} revoked ids that expired before
   * `forgetBefore` (`token.jti` stays revoked), in one transaction (D5).
   */
  revoke(
    sessionId: string,
    at: number,
    token: RevokedToken | undefined,
    forgetBefore: number,
  ): Promise<void>
  /** As `SessionStore.isTokenActive`. */
  isActive(sessionId: string, jti: string, clientId: string): boolean | Promise<boolean>
}

/**
 * Login sessions (D4, D5) in `sessions`, and revoked access-token ids in `revoked_tokens`. A
 * revoked id is forgotten ten minutes after its token expired, when a later revocation passes by.
 *
 * Get one from the adapter's storage (`SqliteStorage`, `PostgresStorage`); it is not
 * constructed on its own.
 */
export class RelationalSessionStore implements SessionStore {
  readonly #assertOpen: () => void
  readonly #tokens: SessionTokens
  readonly #insert: RelationalWrite
  readonly #selectByHash: RelationalRead

  /**
   * @param statements How the adapter runs the statements; its schema migrated.
   * @param assertOpen Throws when the owning storage is closed; called first by every method.
   * @param tokens The adapter's revocation and check of tokens.
   */
  constructor(statements: RelationalStatements, assertOpen: () => void, tokens: SessionTokens) {
    this.#assertOpen = assertOpen
    this.#tokens = tokens
    const db = statements.builder
    this.#insert = statements.write(
      db.insertInto('sessions').values({
        id: slot<string>('id'),
        client_id: slot<string>('client_id'),
        refresh_token_hash: slot<string>('refresh_token_hash'),
        scopes: slot<string>('scopes'),
        created_at: slot<number>('created_at'),
        expires_at: slot<number>('expires_at'),
        revoked_at: slot<number | null>('revoked_at'),
      }),
    )
    this.#selectByHash = statements.read(
      db
        .selectFrom('sessions')
        .select(SESSION_COLUMNS)
        .where('refresh_token_hash', '=', slot('hash')),
    )
  }

  /**
   * Adds the session.
   * @throws Error (the driver's unique violation: SQLite's `SQLITE_CONSTRAINT_UNIQUE`,
   * PostgreSQL's `23505`) when the session id or the refresh-token hash is already stored.
   */
  async insert(session: SessionRecord): Promise<void> {
    this.#assertOpen()
    await this.#insert({
      id: session.id,
      client_id: session.client_id,
      refresh_token_hash: session.refresh_token_hash,
      scopes: JSON.stringify(session.scopes),
      created_at: session.created_at,
      expires_at: session.expires_at,
      revoked_at: session.revoked_at,
    })
  }

  /** The session holding this refresh-token hash, whatever its state, or `undefined`. */
  async findByRefreshTokenHash(hash: string): Promise<SessionRecord | undefined> {
    this.#assertOpen()
    const row = (await this.#selectByHash({ hash }))[0]
    return row === undefined ? undefined : toSession(row)
  }

  /**
   * Sets the session's `revoked_at` unless already set, and revokes `token.jti` when given,
   * in one transaction (D5).
   */
  async revoke(sessionId: string, at: number, token?: RevokedToken): Promise<void> {
    this.#assertOpen()
    await this.#tokens.revoke(sessionId, at, token, at - REVOKED_TOKEN_GRACE_MS)
  }

  /**
   * False when the session is unknown, another client's or revoked, its client unknown or
   * revoked, or `jti` revoked.
   */
  async isTokenActive(sessionId: string, jti: string, clientId: string): Promise<boolean> {
    this.#assertOpen()
    return this.#tokens.isActive(sessionId, jti, clientId)
  }
}

function toSession(row: readonly unknown[]): SessionRecord {
  return {
    id: row[0] as string,
    client_id: row[1] as string,
    refresh_token_hash: row[2] as string,
    scopes: JSON.parse(row[3] as string) as string[],
    created_at: row[4] as number,
    expires_at: row[5] as number,
    revoked_at: row[6] as number | null,
  }
}
