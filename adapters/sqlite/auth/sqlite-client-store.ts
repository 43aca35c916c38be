import type BetterSqlite3 from 'better-sqlite3'
import type { Selectable } from 'kysely'
import type { ClientRecord, ClientStore } from '../../../core/ports/client-store.js'
import type { SqliteActiveTokens } from './sqlite-active-tokens.js'
import type { SqliteWrites } from '../threads/sqlite-writer-protocol.js'
import { queryBuilder, slot, SqliteQuery } from '../sqlite-query.js'
import type { ClientRow } from '../../relational/relational-schema.js'

type StoredRow = Selectable<ClientRow>

/**
 * API clients (D1) in the `clients` table.
 *
 * Get one from `SqliteStorage`; it is not constructed on its own.
 */
export class SqliteClientStore implements ClientStore {
  readonly #assertOpen: () => void
  readonly #known: SqliteActiveTokens
  readonly #writer: SqliteWrites | undefined
  readonly #insert: SqliteQuery<never>
  readonly #select: SqliteQuery<StoredRow>
  readonly #selectAll: SqliteQuery<StoredRow>
  readonly #revoke: SqliteQuery<never>

  /**
   * @param db An open connection whose schema `migrateSqlite` brought up to date.
   * @param assertOpen Throws when the owning storage is closed; called first by every method.
   * @param known The memo of active tokens, which a revocation empties.
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
      queryBuilder.insertInto('clients').values({
        id: slot<string>('id'),
        name: slot<string>('name'),
        secret_hash: slot<string>('secret_hash'),
        scopes: slot<string>('scopes'),
        created_at: slot<number>('created_at'),
        revoked_at: slot<number | null>('revoked_at'),
      }),
    )
    this.#select = new SqliteQuery(
      db,
      queryBuilder.selectFrom('clients').selectAll().where('id', '=', slot('id')),
    )
    this.#selectAll = new SqliteQuery(
      db,
      queryBuilder.selectFrom('clients').selectAll().orderBy('created_at').orderBy('seq'),
    )
    this.#revoke = new SqliteQuery(
      db,
      queryBuilder
        .updateTable('clients')
        .set({ revoked_at: slot<number>('at') })
        .where('id', '=', slot('id'))
        .where('revoked_at', 'is', null),
    )
  }

  /**
   * Adds the client.
   * @throws Error (`SQLITE_CONSTRAINT_UNIQUE`) when a client with this id exists.
   */
  async insert(client: ClientRecord): Promise<void> {
    this.#assertOpen()
    if (this.#writer !== undefined) return this.#writer.insertClient(client)
    this.#insert.run({
      id: client.id,
      name: client.name,
      secret_hash: client.secret_hash,
      scopes: JSON.stringify(client.scopes),
      created_at: client.created_at,
      revoked_at: client.revoked_at,
    })
  }

  /** The client with this id, revoked or not, or `undefined`. */
  async get(id: string): Promise<ClientRecord | undefined> {
    this.#assertOpen()
    const row = this.#select.get({ id })
    return row === undefined ? undefined : toClient(row)
  }

  /** Every client by ascending `created_at`; clients created at the same instant in insertion order. */
  async list(): Promise<readonly ClientRecord[]> {
    this.#assertOpen()
    return this.#selectAll.all().map(toClient)
  }

  /** Sets `revoked_at` to `at`. False when the client is unknown or already revoked. */
  async revoke(id: string, at: number): Promise<boolean> {
    this.#assertOpen()
    const revoked =
      this.#writer !== undefined
        ? await this.#writer.revokeClient(id, at)
        : this.#revoke.run({ id, at }).changes > 0
    this.#known.forget()
    return revoked
  }
}

function toClient(row: StoredRow): ClientRecord {
  return {
    id: row.id,
    name: row.name,
    secret_hash: row.secret_hash,
    scopes: JSON.parse(row.scopes) as string[],
    created_at: row.created_at,
    revoked_at: row.revoked_at,
  }
}
