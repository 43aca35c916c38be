import { sql } from 'kysely'
import type { RevokedToken } from '../../../core/ports/session-store.js'
import {
  TOKENS_PURGED_PER_REVOKE,
  type SessionTokens,
} from '../../relational/relational-session-store.js'
import type { SqlStatement } from '../threads/sqlite-writer-protocol.js'
import type { SqliteDataVersion } from '../sqlite-data-version.js'
import { queryBuilder, slot } from '../sqlite-query.js'
import type { SqliteAuthStatements } from './sqlite-auth-statements.js'

/** Triples remembered at most; past it the memo starts over (a miss only costs the full lookup). */
const MAX_REMEMBERED = 100_000

/**
 * The revocation of sessions and the check of tokens on SQLite. A revocation is three statements
 * in one transaction. A check is one statement with three unique-index lookups, and the
 * (session, token id, client) triples found active are remembered, so that the check every
 * authenticated request makes costs a set lookup instead.
 *
 * Revocation still wins: a commit by any other connection (the CLI revoking a client, another
 * server process logging a session out) changes `data_version`, read once per turn of the event
 * loop (`SqliteDataVersion`), which empties the memo; revocations through this connection empty
 * it themselves (`forget`). So another process's revocation applies from the next turn,
 * milliseconds later, to requests read after it.
 */
export class SqliteSessionTokens implements SessionTokens {
  readonly #statements: SqliteAuthStatements
  readonly #dataVersion: SqliteDataVersion
  readonly #active = new Set<string>()
  readonly #check: (values: { sid: string; jti: string; sub: string }) => unknown[][]
  readonly #revokeSession: (values: { id: string; at: number }) => SqlStatement
  readonly #purgeTokens: (values: { forgetBefore: number }) => SqlStatement
  readonly #revokeToken: (values: { jti: string; expires_at: number }) => SqlStatement
  #version = -1

  /**
   * @param statements Where the statements run (the revocation on the writer thread, if any).
   * @param dataVersion Tells when another connection committed.
   */
  constructor(statements: SqliteAuthStatements, dataVersion: SqliteDataVersion) {
    this.#statements = statements
    this.#dataVersion = dataVersion
    this.#revokeSession = statements.bound(
      queryBuilder
        .updateTable('sessions')
        .set({ revoked_at: slot<number>('at') })
        .where('id', '=', slot('id'))
        .where('revoked_at', 'is', null),
    )
    this.#purgeTokens = statements.bound(
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
    this.#revokeToken = statements.bound(
      queryBuilder
        .insertInto('revoked_tokens')
        .values({ jti: slot<string>('jti'), expires_at: slot<number>('expires_at') })
        .onConflict((oc) =>
          oc.column('jti').doUpdateSet((eb) => ({
            expires_at: sql<number>`max(${eb.ref('revoked_tokens.expires_at')}, ${eb.ref('excluded.expires_at')})`,
          })),
        ),
    )
    this.#check = statements.read(
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
  }

  async revoke(
    sessionId: string,
    at: number,
    token: RevokedToken | undefined,
    forgetBefore: number,
  ): Promise<void> {
    const statements = [this.#revokeSession({ id: sessionId, at })]
    if (token !== undefined) {
      statements.push(
        this.#purgeTokens({ forgetBefore }),
        this.#revokeToken({ jti: token.jti, expires_at: token.expiresAt }),
      )
    }
    await this.#statements.transaction(statements)
    this.forget()
  }

  /** Whether the triple was remembered, or else the database finds it active. */
  isActive(sessionId: string, jti: string, clientId: string): boolean {
    const key = `${sessionId} ${jti} ${clientId}`
    const version = this.#dataVersion.current()
    if (version !== this.#version) {
      this.#version = version
      this.#active.clear()
    } else if (this.#active.has(key)) return true
    const active = this.#check({ sid: sessionId, jti, sub: clientId }).length > 0
    if (active) {
      if (this.#active.size >= MAX_REMEMBERED) this.#active.clear()
      this.#active.add(key)
    }
    return active
  }

  /** Forgets every triple: called by every revocation made through this connection. */
  forget(): void {
    this.#active.clear()
  }
}
