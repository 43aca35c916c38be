import type { ClientRecord, ClientStore } from '../../core/ports/client-store.js'
import { slot } from './relational-slots.js'
import type {
  RelationalRead,
  RelationalStatements,
  RelationalWrite,
} from './relational-statements.js'

const CLIENT_COLUMNS = ['id', 'name', 'secret_hash', 'scopes', 'created_at', 'revoked_at'] as const

/**
 * API clients (D1) in the `clients` table.
 *
 * Get one from the adapter's storage (`SqliteStorage`, `PostgresStorage`); it is not
 * constructed on its own.
 */
export class RelationalClientStore implements ClientStore {
  readonly #assertOpen: () => void
  readonly #revoked: () => void
  readonly #insert: RelationalWrite
  readonly #select: RelationalRead
  readonly #selectAll: RelationalRead
  readonly #revoke: RelationalWrite

  /**
   * @param statements How the adapter runs the statements; its schema migrated.
   * @param assertOpen Throws when the owning storage is closed; called first by every method.
   * @param revoked Called after every revocation (SQLite forgets the tokens it found active).
   */
  constructor(
    statements: RelationalStatements,
    assertOpen: () => void,
    revoked: () => void = () => {},
  ) {
    this.#assertOpen = assertOpen
    this.#revoked = revoked
    const db = statements.builder
    this.#insert = statements.write(
      db.insertInto('clients').values({
        id: slot<string>('id'),
        name: slot<string>('name'),
        secret_hash: slot<string>('secret_hash'),
        scopes: slot<string>('scopes'),
        created_at: slot<number>('created_at'),
        revoked_at: slot<number | null>('revoked_at'),
      }),
    )
    this.#select = statements.read(
      db.selectFrom('clients').select(CLIENT_COLUMNS).where('id', '=', slot('id')),
    )
    this.#selectAll = statements.read(
      db.selectFrom('clients').select(CLIENT_COLUMNS).orderBy('created_at').orderBy('seq'),
    )
    this.#revoke = statements.write(
      db
        .updateTable('clients')
        .set({ revoked_at: slot<number>('at') })
        .where('id', '=', slot('id'))
        .where('revoked_at', 'is', null),
    )
  }

  /**
   * Adds the client.
   * @throws Error (the driver's unique violation: SQLite's `SQLITE_CONSTRAINT_UNIQUE`,
   * PostgreSQL's `23505`) when a client with this id exists.
   */
  async insert(client: ClientRecord): Promise<void> {
    this.#assertOpen()
    await this.#insert({
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
    const row = (await this.#select({ id }))[0]
    return row === undefined ? undefined : toClient(row)
  }

  /** Every client by ascending `created_at`; clients created at the same instant in insertion order. */
  async list(): Promise<readonly ClientRecord[]> {
    this.#assertOpen()
    return (await this.#selectAll()).map(toClient)
  }

  /** Sets `revoked_at` to `at`. False when the client is unknown or already revoked. */
  async revoke(id: string, at: number): Promise<boolean> {
    this.#assertOpen()
    const revoked = (await this.#revoke({ id, at })) > 0
    this.#revoked()
    return revoked
  }
}

function toClient(row: readonly unknown[]): ClientRecord {
  return {
    id: row[0] as string,
    name: row[1] as string,
    secret_hash: row[2] as string,
    scopes: JSON.parse(row[3] as string) as string[],
    created_at: row[4] as number,
    revoked_at: row[5] as number | null,
  }
}
