import { sql, type Kysely, type Migration } from 'kysely'
import type { WebhookEndpoint, WebhookState, WebhookStore } from '../../core/ports/webhook-store.js'
import { endpointOf, WEBHOOK_COLUMNS } from '../relational/relational-webhook-rows.js'
import type { Queryable } from './postgres-query.js'
import { translateStorageFailure } from './postgres-storage-failure.js'

/**
 * Migration `0008_webhooks`: the webhook endpoints (D34) and where each one's deliveries stand
 * (`state`, JSON), with the lease that says which instance delivers to it.
 */
export function webhooksMigration(schema: string): Migration {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await sql
        .raw(
          `CREATE TABLE "${schema}".webhook_endpoints (
            id text PRIMARY KEY,
            url text NOT NULL,
            secret text NOT NULL,
            types text NOT NULL,
            created_at bigint NOT NULL,
            state text NOT NULL,
            lease_owner text,
            lease_until bigint NOT NULL DEFAULT 0
          )`,
        )
        .execute(db)
    },
  }
}

/**
 * The webhook endpoints of `PostgresStorage` (D34). The lease is one UPDATE that takes the row
 * only when its lease is free, expired or already the caller's: two instances that try at once
 * meet on the row lock, and the second sees the first's lease when it re-checks the condition,
 * so one instance at a time delivers to an endpoint.
 */
export class PostgresWebhookStore implements WebhookStore {
  readonly #pool: Queryable
  readonly #assertOpen: () => void
  readonly #table: string

  constructor(pool: Queryable, schema: string, assertOpen: () => void) {
    this.#pool = pool
    this.#assertOpen = assertOpen
    this.#table = `"${schema}".webhook_endpoints`
  }

  async add(endpoint: WebhookEndpoint): Promise<void> {
    await this.#query(
      `INSERT INTO ${this.#table} (${WEBHOOK_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)`,
      [
        endpoint.id,
        endpoint.url,
        endpoint.secret,
        JSON.stringify(endpoint.types),
        endpoint.createdAt,
        JSON.stringify(endpoint.state),
      ],
    )
  }

  async list(): Promise<readonly WebhookEndpoint[]> {
    const rows = await this.#query(
      `SELECT ${WEBHOOK_COLUMNS} FROM ${this.#table} ORDER BY created_at, id`,
      [],
    )
    return rows.map(endpointOf)
  }

  async remove(id: string): Promise<boolean> {
    const rows = await this.#query(`DELETE FROM ${this.#table} WHERE id = $1 RETURNING 1`, [id])
    return rows.length > 0
  }

  async lease(id: string, owner: string, now: number, until: number): Promise<boolean> {
    const rows = await this.#query(
      `UPDATE ${this.#table} SET lease_owner = $3, lease_until = $4
      WHERE id = $1 AND (lease_owner IS NULL OR lease_owner = $3 OR lease_until <= $2)
      RETURNING 1`,
      [id, now, owner, until],
    )
    return rows.length > 0
  }

  async save(id: string, owner: string, state: WebhookState): Promise<boolean> {
    const rows = await this.#query(
      `UPDATE ${this.#table} SET state = $3 WHERE id = $1 AND lease_owner = $2 RETURNING 1`,
      [id, owner, JSON.stringify(state)],
    )
    return rows.length > 0
  }

  async #query(text: string, values: unknown[]): Promise<unknown[][]> {
    this.#assertOpen()
    try {
      return (await this.#pool.query({ text, values, rowMode: 'array' })).rows as unknown[][]
    } catch (error) {
      throw translateStorageFailure(error)
    }
  }
}
