import { sql, type RawBuilder } from 'kysely'
import type { TokenIdentity } from '../../core/ports/beneficiary-store.js'
import type { RevokedToken, SessionRecord, SessionStore } from '../../core/ports/session-store.js'
import { PostgresBatcher, type Batching } from './postgres-batcher.js'
import { table } from './postgres-counters.js'
import type { PostgresPool } from './postgres-driver.js'
import { builderFor, PostgresQuery, slot } from './postgres-query.js'

/** How many expired revoked-token ids a revocation deletes on its way, to keep the table small. */
const TOKENS_PURGED_PER_REVOKE = 16
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
 * Login sessions (D4, D5) in `sessions`, and revoked access-token ids in `revoked_tokens`. A
 * revoked id is forgotten ten minutes after its token expired, when a later revocation passes
 * by. Nothing is remembered between requests: the database decides every `isTokenActive`, so
 * a revocation by any instance holds for every request that starts after it (D30).
 *
 * Get one from `PostgresStorage`; it is not constructed on its own.
 */
export class PostgresSessionStore implements SessionStore {
  readonly #pool: PostgresPool
  readonly #assertOpen: () => void
  readonly #insert: PostgresQuery
  readonly #selectByHash: PostgresQuery
  readonly #revoke: PostgresQuery
  readonly #active: PostgresQuery
  readonly #activeMany: PostgresQuery
  readonly #checks: PostgresBatcher<TokenIdentity, boolean>

  /**
   * @param pool Where every statement runs.
   * @param schema The schema of the tables, migrated.
   * @param assertOpen Throws when the owning storage is closed; called first by every method.
   * @param batching How checks of tokens that arrive together are sent as one statement.
   */
  constructor(pool: PostgresPool, schema: string, assertOpen: () => void, batching: Batching) {
    this.#pool = pool
    this.#assertOpen = assertOpen
    const db = builderFor(schema)
    this.#insert = new PostgresQuery(
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
    this.#selectByHash = new PostgresQuery(
      db
        .selectFrom('sessions')
        .select(SESSION_COLUMNS)
        .where('refresh_token_hash', '=', slot('hash')),
    )
    // One statement, so one transaction: the session, the token, and a purge of a few expired
    // token ids (never the one revoked now, which the same statement writes), oldest first
    // along the expires_at index, never a scan of the table.
    const tokens = table(schema, 'revoked_tokens')
    this.#revoke = new PostgresQuery(sql`
      WITH session AS (
        UPDATE ${table(schema, 'sessions')} SET revoked_at = ${slot('at')}::bigint
        WHERE id = ${slot('id')}::text AND revoked_at IS NULL),
      purged AS (
        DELETE FROM ${tokens} WHERE jti IN (
          SELECT jti FROM ${tokens}
          WHERE expires_at < ${slot('forget_before')}::bigint AND jti <> ${slot('jti')}::text
          ORDER BY expires_at LIMIT ${sql.lit(TOKENS_PURGED_PER_REVOKE)}
          FOR UPDATE SKIP LOCKED)),
      token AS (
        INSERT INTO ${tokens} AS t (jti, expires_at)
        SELECT ${slot('jti')}::text, ${slot('expires_at')}::bigint
        WHERE ${slot('jti')}::text IS NOT NULL
        ON CONFLICT (jti) DO UPDATE SET expires_at = greatest(t.expires_at, excluded.expires_at))
      SELECT 1`)
    this.#active = new PostgresQuery(sql`SELECT ${tokenActive(schema)}`)
    this.#activeMany = new PostgresQuery(sql`
      SELECT ${tokenActive(schema, sql`q.sid`, sql`q.jti`, sql`q.sub`)}
      FROM unnest(${slot('sids')}::text[], ${slot('jtis')}::text[], ${slot('subs')}::text[])
        WITH ORDINALITY AS q(sid, jti, sub, n)
      ORDER BY q.n`)
    this.#checks = new PostgresBatcher((tokens) => this.#checkAll(tokens), batching.limits, {
      onSend: (size) => batching.observe('check', size),
    })
  }

  /**
   * Adds the session.
   * @throws Error (the driver's unique violation, `23505`) when the session id or the
   * refresh-token hash is already stored.
   */
  async insert(session: SessionRecord): Promise<void> {
    this.#assertOpen()
    await this.#insert.run(this.#pool, {
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
    const row = (await this.#selectByHash.arrays(this.#pool, { hash }))[0]
    return row === undefined ? undefined : toSession(row)
  }

  /**
   * Sets the session's `revoked_at` unless already set, and revokes `token.jti` when given,
   * in one statement (D5).
   */
  async revoke(sessionId: string, at: number, token?: RevokedToken): Promise<void> {
    this.#assertOpen()
    await this.#revoke.run(this.#pool, {
      id: sessionId,
      at,
      jti: token?.jti ?? null,
      expires_at: token?.expiresAt ?? null,
      forget_before: at - REVOKED_TOKEN_GRACE_MS,
    })
  }

  /**
   * False when the session is unknown, another client's or revoked, its client unknown or
   * revoked, or `jti` revoked: one prepared statement, shared with the checks that arrive at
   * the same time.
   */
  async isTokenActive(sessionId: string, jti: string, clientId: string): Promise<boolean> {
    this.#assertOpen()
    return this.#checks.submit({ sessionId, jti, clientId })
  }

  /** The checks of one batch: one statement for one, another for many. */
  async #checkAll(tokens: readonly TokenIdentity[]): Promise<boolean[]> {
    if (tokens.length === 1) {
      const { sessionId: sid, jti, clientId: sub } = tokens[0]!
      return [(await this.#active.arrays(this.#pool, { sid, jti, sub }))[0]![0] === true]
    }
    const rows = await this.#activeMany.arrays(this.#pool, {
      sids: tokens.map((token) => token.sessionId),
      jtis: tokens.map((token) => token.jti),
      subs: tokens.map((token) => token.clientId),
    })
    return rows.map((row) => row[0] === true)
  }
}

/**
 * Whether the token of `sid`, `jti` and `sub` (by default the slots of those names) is active,
 * as a boolean SQL expression: three unique-index lookups (session, client, revoked `jti`), the
 * session bound to the client `sub`. `isTokenActive` asks it alone; the beneficiary store asks
 * it with the read of a record (`getForToken`).
 */
export function tokenActive(
  schema: string,
  sid: RawBuilder<unknown> = sql`${slot('sid')}::text`,
  jti: RawBuilder<unknown> = sql`${slot('jti')}::text`,
  sub: RawBuilder<unknown> = sql`${slot('sub')}::text`,
): RawBuilder<boolean> {
  return sql<boolean>`EXISTS (
    SELECT 1 FROM ${table(schema, 'sessions')} s
    JOIN ${table(schema, 'clients')} c ON c.id = s.client_id
    WHERE s.id = ${sid} AND s.client_id = ${sub} AND s.revoked_at IS NULL
      AND c.revoked_at IS NULL
      AND NOT EXISTS (
        SELECT 1 FROM ${table(schema, 'revoked_tokens')} r WHERE r.jti = ${jti}))`
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
