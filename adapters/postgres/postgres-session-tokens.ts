import { sql, type RawBuilder } from 'kysely'
import type { TokenIdentity } from '../../core/ports/beneficiary-store.js'
import type { RevokedToken } from '../../core/ports/session-store.js'
import {
  TOKENS_PURGED_PER_REVOKE,
  type SessionTokens,
} from '../relational/relational-session-store.js'
import { PostgresBatcher, type Batching } from './postgres-batcher.js'
import { table } from './postgres-counters.js'
import type { PostgresPool } from './postgres-driver.js'
import { PostgresQuery, slot } from './postgres-query.js'

/**
 * The revocation of sessions and the check of tokens on PostgreSQL. Nothing is remembered
 * between requests: the database decides every check, so a revocation by any instance holds
 * for every request that starts after it (D30).
 */
export class PostgresSessionTokens implements SessionTokens {
  readonly #pool: PostgresPool
  readonly #revoke: PostgresQuery
  readonly #active: PostgresQuery
  readonly #activeMany: PostgresQuery
  readonly #checks: PostgresBatcher<TokenIdentity, boolean>

  /**
   * @param pool Where every statement runs.
   * @param schema The schema of the tables, migrated.
   * @param batching How checks of tokens that arrive together are sent as one statement.
   */
  constructor(pool: PostgresPool, schema: string, batching: Batching) {
    this.#pool = pool
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

  async revoke(
    sessionId: string,
    at: number,
    token: RevokedToken | undefined,
    forgetBefore: number,
  ): Promise<void> {
    await this.#revoke.run(this.#pool, {
      id: sessionId,
      at,
      jti: token?.jti ?? null,
      expires_at: token?.expiresAt ?? null,
      forget_before: forgetBefore,
    })
  }

  /** One prepared statement, shared with the checks that arrive at the same time. */
  isActive(sessionId: string, jti: string, clientId: string): Promise<boolean> {
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
