import type { ClientRecord, ClientStore } from '../../core/ports/client-store.js'
import type { PostgresPool } from './postgres-driver.js'
import { builderFor, PostgresQuery, slot } from './postgres-query.js'

const CLIENT_COLUMNS = ['id', 'name', 'secret_hash', 'scopes', 'created_at', 'revoked_at'] as const

/**
 * API clients (D1) in the `clients` table.
 *
 * Get one from `PostgresStorage`; it is not constructed on its own.
 */
export class PostgresClientStore implements ClientStore {
  readonly #pool: PostgresPool
  readonly #assertOpen: () => void
  readonly #insert: PostgresQuery
  readonly #select: PostgresQuery
  readonly #selectAll: PostgresQuery
  readonly #revoke: PostgresQuery

  /**
   * @param pool Where every statement runs.
   * @param schema The schema of the tables, migrated.
   * @param assertOpen Throws when the owning storage is closed; called first by every method.
   */
  constructor(pool: PostgresPool, schema: string, assertOpen: () => void) {
    this.#pool = pool
    this.#assertOpen = assertOpen
    const db = builderFor(schema)
    this.#insert = new PostgresQuery(
      db.insertInto('clients').values({
        id: slot<string>('id'),
        name: slot<string>('name'),
        secret_hash: slot<string>('secret_hash'),
        scopes: slot<string>('scopes'),
        created_at: slot<number>('created_at'),
        revoked_at: slot<number | null>('revoked_at'),
      }),
    )
    this.#select = new PostgresQuery(
      db.selectFrom('clients').select(CLIENT_COLUMNS).where('id', '=', slot('id')),
    )
    this.#selectAll = new PostgresQuery(
      db.selectFrom('clients').select(CLIENT_COLUMNS).orderBy('created_at').orderBy('seq'),
    )
    this.#revoke = new PostgresQuery(
      db
        .updateTable('clients')
        .set({ revoked_at: slot<number>('at') })
        .where('id', '=', slot('id'))
        .where('revoked_at', 'is', null),
    )
  }

  /**
   * Adds the client.
   * @throws Error (the driver's unique violation, `23505`) when a client with this id exists.
   */
  async insert(client: ClientRecord): Promise<void> {
    this.#assertOpen()
    await this.#insert.run(this.#pool, {
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
    const row = (await this.#select.arrays(this.#pool, { id }))[0]
    return row === undefined ? undefined : toClient(row)
  }

  /** Every client by ascending `created_at`; clients created at the same instant in insertion order. */
  async list(): Promise<readonly ClientRecord[]> {
    this.#assertOpen()
    return (await this.#selectAll.arrays(this.#pool)).map(toClient)
  }

  /** Sets `revoked_at` to `at`. False when the client is unknown or already revoked. */
  async revoke(id: string, at: number): Promise<boolean> {
    this.#assertOpen()
    return (await this.#revoke.run(this.#pool, { id, at })) > 0
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
