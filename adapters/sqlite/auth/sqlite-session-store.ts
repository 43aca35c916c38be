import type BetterSqlite3 from 'better-sqlite3'
import { sql, type Selectable } from 'kysely'
import type {
  RevokedToken,
  SessionRecord,
  SessionStore,
} from '../../../core/ports/session-store.js'
import type { SqliteActiveTokens } from './sqlite-active-tokens.js'
import type { SqliteWrites } from '../threads/sqlite-writer-protocol.js'
import { translateStorageFailure, queryBuilder, slot, SqliteQuery } from '../sqlite-query.js'
import type { SessionRow } from '../../relational/relational-schema.js'

type StoredRow = Selectable<SessionRow>

/** How many expired revoked-token ids a revocation deletes on its way, to keep the table small. */
const TOKENS_PURGED_PER_REVOKE = 16
/** Kept this long past `exp`, well beyond the verifier's clock-skew allowance (D3). */
const REVOKED_TOKEN_GRACE_MS = 10 * 60_000

/**
 * Login sessions (D4, D5) in `sessions`, and revoked access-token ids in `revoked_tokens`. A
 * revoked id is forgotten ten minutes after its token expired, when a later revocation passes by.
 *
 * Get one from `SqliteStorage`; it is not constructed on its own.
 */
export class SqliteSessionStore implements SessionStore {
  readonly #assertOpen: () => void
  readonly #known: SqliteActiveTokens
  readonly #writer: SqliteWrites | undefined
  readonly #insert: SqliteQuery<never>
  readonly #selectByHash: SqliteQuery<StoredRow>
  readonly #revokeSession: SqliteQuery<never>
  readonly #revokeToken: SqliteQuery<never>
  readonly #purgeTokens: SqliteQuery<never>
  readonly #active: SqliteQuery<{ active: number }>
  readonly #revoke: BetterSqlite3.Transaction<
    (sessionId: string, at: number, token: RevokedToken | undefined) => void
  >

  /**
   * @param db An open connection whose schema `migrateSqlite` brought up to date.
   * @param assertOpen Throws when the owning storage is closed; called first by every method.
   * @param known The memo of active tokens, shared with the client store, whose revocations empty it.
   * @param writer Where the writes run when given: the writer thread (`SqliteWriterThread`).
   */
  constructor(
    db: BetterSqlite3.Database,
    assertOpen: () => void,
    known: SqliteActiveTokens,
    writer?: SqliteWrites,
  ) {
    this.#assertOpen = assertOpen
    this.#known = known
    this.#writer = writer
    this.#insert = new SqliteQuery(
      db,
      queryBuilder.insertInto('sessions').values({
        id: slot<string>('id'),
        client_id: slot<string>('client_id'),
        refresh_token_hash: slot<string>('refresh_token_hash'),
        scopes: slot<string>('scopes'),
        created_at: slot<number>('created_at'),
        expires_at: slot<number>('expires_at'),
        revoked_at: slot<number | null>('revoked_at'),
      }),
    )
    this.#selectByHash = new SqliteQuery(
      db,
      queryBuilder
        .selectFrom('sessions')
        .selectAll()
        .where('refresh_token_hash', '=', slot('hash')),
    )
    this.#revokeSession = new SqliteQuery(
      db,
      queryBuilder
        .updateTable('sessions')
        .set({ revoked_at: slot<number>('at') })
        .where('id', '=', slot('id'))
        .where('revoked_at', 'is', null),
    )
    this.#revokeToken = new SqliteQuery(
      db,
      queryBuilder
        .insertInto('revoked_tokens')
        .values({ jti: slot<string>('jti'), expires_at: slot<number>('expires_at') })
        .onConflict((oc) =>
          oc.column('jti').doUpdateSet((eb) => ({
            expires_at: sql<number>`max(${eb.ref('revoked_tokens.expires_at')}, ${eb.ref('excluded.expires_at')})`,
          })),
        ),
    )
    this.#purgeTokens = new SqliteQuery(
      db,
      queryBuilder
        .deleteFrom('revoked_tokens')
        .where('jti', 'in', (eb) =>
          eb
            .selectFrom('revoked_tokens')
            .select('jti')
            .where('expires_at', '<', slot('forgetBefore'))
            .limit(TOKENS_PURGED_PER_REVOKE),
        ),
    )
    // One statement with three unique-index lookups, asked on every authenticated request.
    this.#active = new SqliteQuery(
      db,
      queryBuilder
        .selectFrom('sessions')
        .innerJoin('clients', 'clients.id', 'sessions.client_id')
        .select(sql<number>`1`.as('active'))
        .where('sessions.id', '=', slot('sid'))
        .where('sessions.client_id', '=', slot('sub'))
        .where('sessions.revoked_at', 'is', null)
        .where('clients.revoked_at', 'is', null)
        .where((eb) =>
          eb.not(
            eb.exists(eb.selectFrom('revoked_tokens').select('jti').where('jti', '=', slot('jti'))),
          ),
        ),
    )
    this.#revoke = db.transaction((sessionId, at, token) => {
      this.#revokeSession.run({ id: sessionId, at })
      if (token !== undefined) {
        this.#purgeTokens.run({ forgetBefore: at - REVOKED_TOKEN_GRACE_MS })
        this.#revokeToken.run({ jti: token.jti, expires_at: token.expiresAt })
      }
    })
  }

  /**
   * Adds the session.
   * @throws Error (`SQLITE_CONSTRAINT_UNIQUE`) when the session id or the refresh-token hash is
   * already stored.
   */
  async insert(session: SessionRecord): Promise<void> {
    this.#assertOpen()
    if (this.#writer !== undefined) return this.#writer.insertSession(session)
    this.#insert.run({
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
    const row = this.#selectByHash.get({ hash })
    return row === undefined ? undefined : toSession(row)
  }

  /**
   * Sets the session's `revoked_at` unless already set, and revokes `token.jti` when given,
   * in one transaction (D5).
   */
  async revoke(sessionId: string, at: number, token?: RevokedToken): Promise<void> {
    this.#assertOpen()
    try {
      if (this.#writer !== undefined) await this.#writer.revokeSession(sessionId, at, token)
      else this.#revoke.immediate(sessionId, at, token)
    } catch (error) {
      throw translateStorageFailure(error)
    }
    this.#known.forget()
  }

  /**
   * False when the session is unknown, another client's or revoked, its client unknown or
   * revoked, or `jti` revoked.
   */
  async isTokenActive(sessionId: string, jti: string, clientId: string): Promise<boolean> {
    this.#assertOpen()
    if (this.#known.has(sessionId, jti, clientId)) return true
    const active = this.#active.get({ sid: sessionId, jti, sub: clientId }) !== undefined
    if (active) this.#known.add(sessionId, jti, clientId)
    return active
  }
}

function toSession(row: StoredRow): SessionRecord {
  return {
    id: row.id,
    client_id: row.client_id,
    refresh_token_hash: row.refresh_token_hash,
    scopes: JSON.parse(row.scopes) as string[],
    created_at: row.created_at,
    expires_at: row.expires_at,
    revoked_at: row.revoked_at,
  }
}
