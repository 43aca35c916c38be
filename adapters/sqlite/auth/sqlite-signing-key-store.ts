import type BetterSqlite3 from 'better-sqlite3'
import type { SigningKey, SigningKeyStore } from '../../../core/ports/signing-key-store.js'
import { queryBuilder, slot, SqliteQuery } from '../sqlite-query.js'
import type { SqliteWrites } from '../threads/sqlite-writer-protocol.js'

/**
 * The signing keys the standalone server generated (D3), in the `signing_keys` table.
 *
 * Get one from `SqliteStorage`; it is not constructed on its own.
 */
export class SqliteSigningKeyStore implements SigningKeyStore {
  readonly #assertOpen: () => void
  readonly #writer: SqliteWrites | undefined
  readonly #selectAll: SqliteQuery<SigningKey>
  readonly #insert: SqliteQuery<never>

  /**
   * @param db An open connection whose schema `migrateSqlite` brought up to date.
   * @param assertOpen Throws when the owning storage is closed; called first by every method.
   * @param writer Where the writes run when given: the writer thread (`SqliteWriterThread`).
   */
  constructor(db: BetterSqlite3.Database, assertOpen: () => void, writer?: SqliteWrites) {
    this.#assertOpen = assertOpen
    this.#writer = writer
    this.#selectAll = new SqliteQuery(
      db,
      queryBuilder
        .selectFrom('signing_keys')
        .select(['kid', 'secret', 'created_at'])
        .orderBy('created_at')
        .orderBy('seq'),
    )
    this.#insert = new SqliteQuery(
      db,
      queryBuilder
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
    return this.#selectAll.all()
  }

  /** Adds the key, unless a key with its `kid` exists (another process may have won): then the stored one stays. */
  async insert(key: SigningKey): Promise<void> {
    this.#assertOpen()
    if (this.#writer !== undefined) return this.#writer.insertSigningKey(key)
    this.#insert.run({ kid: key.kid, secret: key.secret, created_at: key.created_at })
  }
}
