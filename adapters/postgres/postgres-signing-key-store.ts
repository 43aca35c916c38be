import type { SigningKey, SigningKeyStore } from '../../core/ports/signing-key-store.js'
import type { PostgresPool } from './postgres-driver.js'
import { builderFor, PostgresQuery, slot } from './postgres-query.js'

/**
 * The signing keys the standalone server generated (D3), in the `signing_keys` table.
 *
 * Get one from `PostgresStorage`; it is not constructed on its own.
 */
export class PostgresSigningKeyStore implements SigningKeyStore {
  readonly #pool: PostgresPool
  readonly #assertOpen: () => void
  readonly #selectAll: PostgresQuery<SigningKey>
  readonly #insert: PostgresQuery

  /**
   * @param pool Where every statement runs.
   * @param schema The schema of the tables, migrated.
   * @param assertOpen Throws when the owning storage is closed; called first by every method.
   */
  constructor(pool: PostgresPool, schema: string, assertOpen: () => void) {
    this.#pool = pool
    this.#assertOpen = assertOpen
    const db = builderFor(schema)
    this.#selectAll = new PostgresQuery(
      db
        .selectFrom('signing_keys')
        .select(['kid', 'secret', 'created_at'])
        .orderBy('created_at')
        .orderBy('seq'),
    )
    // Two instances starting at once on a new database insert the same kid: one row stays.
    this.#insert = new PostgresQuery(
      db
        .insertInto('signing_keys')
        .values({
          kid: slot<string>('kid'),
          secret: slot<string>('secret'),
          created_at: slot<number>('created_at'),
        })
        .onConflict((oc) => oc.column('kid').doNothing()),
    )
  }

  /** Every key by ascending `created_at`; keys created at the same instant in insertion order. */
  async list(): Promise<readonly SigningKey[]> {
    this.#assertOpen()
    return this.#selectAll.rows(this.#pool)
  }

  /** Adds the key, unless a key with its `kid` exists (another process may have won): then the stored one stays. */
  async insert(key: SigningKey): Promise<void> {
    this.#assertOpen()
    await this.#insert.run(this.#pool, {
      kid: key.kid,
      secret: key.secret,
      created_at: key.created_at,
    })
  }
}
