import type { SigningKey, SigningKeyStore } from '../../core/ports/signing-key-store.js'
import { slot } from './relational-slots.js'
import type {
  RelationalRead,
  RelationalStatements,
  RelationalWrite,
} from './relational-statements.js'

/**
 * The signing keys the standalone server generated (D3), in the `signing_keys` table.
 *
 * Get one from the adapter's storage (`SqliteStorage`, `PostgresStorage`); it is not
 * constructed on its own.
 */
export class RelationalSigningKeyStore implements SigningKeyStore {
  readonly #assertOpen: () => void
  readonly #selectAll: RelationalRead
  readonly #insert: RelationalWrite

  /**
   * @param statements How the adapter runs the statements; its schema migrated.
   * @param assertOpen Throws when the owning storage is closed; called first by every method.
   */
  constructor(statements: RelationalStatements, assertOpen: () => void) {
    this.#assertOpen = assertOpen
    const db = statements.builder
    this.#selectAll = statements.read(
      db
        .selectFrom('signing_keys')
        .select(['kid', 'secret', 'created_at'])
        .orderBy('created_at')
        .orderBy('seq'),
    )
    // Two instances starting at once on a new database insert the same kid: one row stays.
    this.#insert = statements.write(
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
    return (await this.#selectAll()).map((row) => ({
      kid: row[0] as string,
      secret: row[1] as string,
      created_at: row[2] as number,
    }))
  }

  /** Adds the key, unless a key with its `kid` exists (another process may have won): then the stored one stays. */
  async insert(key: SigningKey): Promise<void> {
    this.#assertOpen()
    await this.#insert({ kid: key.kid, secret: key.secret, created_at: key.created_at })
  }
}
