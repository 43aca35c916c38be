import type BetterSqlite3 from 'better-sqlite3'
import type {
  WebhookEndpoint,
  WebhookState,
  WebhookStore,
} from '../../../core/ports/webhook-store.js'
import { endpointOf, WEBHOOK_COLUMNS } from '../../relational/relational-webhook-rows.js'
import { translateStorageFailure } from '../sqlite-query.js'

interface Lease {
  readonly id: string
  readonly now: number
  readonly owner: string
  readonly until: number
}

/**
 * The webhook endpoints of `SqliteStorage` (D34), in `webhook_endpoints` (migration
 * `0014_webhooks`). A lease is one UPDATE that succeeds only when the lease is free, expired or
 * already the caller's: processes sharing the file take it one at a time (the write lock).
 */
export class SqliteWebhookStore implements WebhookStore {
  readonly #assertOpen: () => void
  readonly #insert: BetterSqlite3.Statement
  readonly #all: BetterSqlite3.Statement<[], unknown[]>
  readonly #delete: BetterSqlite3.Statement<[string]>
  readonly #lease: BetterSqlite3.Statement<[Lease]>
  readonly #save: BetterSqlite3.Statement<[{ id: string; owner: string; state: string }]>

  constructor(db: BetterSqlite3.Database, assertOpen: () => void) {
    this.#assertOpen = assertOpen
    this.#insert = db.prepare(
      `INSERT INTO webhook_endpoints (${WEBHOOK_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)`,
    )
    this.#all = db
      .prepare<[], unknown[]>(
        `SELECT ${WEBHOOK_COLUMNS} FROM webhook_endpoints ORDER BY created_at, id`,
      )
      .raw(true)
    this.#delete = db.prepare('DELETE FROM webhook_endpoints WHERE id = ?')
    this.#lease = db.prepare<[Lease]>(
      `UPDATE webhook_endpoints SET lease_owner = @owner, lease_until = @until
      WHERE id = @id AND (lease_owner IS NULL OR lease_owner = @owner OR lease_until <= @now)`,
    )
    this.#save = db.prepare<[{ id: string; owner: string; state: string }]>(
      'UPDATE webhook_endpoints SET state = @state WHERE id = @id AND lease_owner = @owner',
    )
  }

  async add(endpoint: WebhookEndpoint): Promise<void> {
    this.#run(() =>
      this.#insert.run(
        endpoint.id,
        endpoint.url,
        endpoint.secret,
        JSON.stringify(endpoint.types),
        endpoint.createdAt,
        JSON.stringify(endpoint.state),
      ),
    )
  }

  async list(): Promise<readonly WebhookEndpoint[]> {
    return this.#run(() => this.#all.all().map(endpointOf))
  }

  async remove(id: string): Promise<boolean> {
    return this.#run(() => this.#delete.run(id).changes > 0)
  }

  async lease(id: string, owner: string, now: number, until: number): Promise<boolean> {
    return this.#run(() => this.#lease.run({ id, now, owner, until }).changes > 0)
  }

  async save(id: string, owner: string, state: WebhookState): Promise<boolean> {
    return this.#run(() => this.#save.run({ id, owner, state: JSON.stringify(state) }).changes > 0)
  }

  #run<T>(work: () => T): T {
    this.#assertOpen()
    try {
      return work()
    } catch (error) {
      throw translateStorageFailure(error)
    }
  }
}
