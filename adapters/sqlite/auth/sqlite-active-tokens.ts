import type { SqliteDataVersion } from '../sqlite-data-version.js'

/** Triples remembered at most; past it the memo starts over (a miss only costs the full lookup). */
const MAX_REMEMBERED = 100_000

/**
 * Remembers which (session, token id, client) triples were found active, so that the check every
 * authenticated request makes costs a set lookup instead of a lookup in three tables.
 * Revocation still wins: a commit by any other connection (the CLI revoking a client, another
 * server process logging a session out) changes `data_version`, read once per turn of the event
 * loop (`SqliteDataVersion`), which empties the memo; revocations through this connection empty
 * it themselves (`forget`). So another process's revocation applies from the next turn,
 * milliseconds later, to requests read after it.
 */
export class SqliteActiveTokens {
  readonly #dataVersion: SqliteDataVersion
  readonly #active = new Set<string>()
  #version = -1

  constructor(dataVersion: SqliteDataVersion) {
    this.#dataVersion = dataVersion
  }

  /** Whether the triple was found active and nothing that could revoke it has happened since. */
  has(sessionId: string, jti: string, clientId: string): boolean {
    const version = this.#dataVersion.current()
    if (version !== this.#version) {
      this.#version = version
      this.#active.clear()
      return false
    }
    return this.#active.has(`${sessionId} ${jti} ${clientId}`)
  }

  /** Records a triple the database has just found active. */
  add(sessionId: string, jti: string, clientId: string): void {
    if (this.#active.size >= MAX_REMEMBERED) this.#active.clear()
    this.#active.add(`${sessionId} ${jti} ${clientId}`)
  }

  /** Forgets every triple: called by every revocation made through this connection. */
  forget(): void {
    this.#active.clear()
  }
}
