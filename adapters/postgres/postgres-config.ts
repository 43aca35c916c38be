import type { PostgresPool } from './postgres-driver.js'

/**
 * How `openPostgresStorage` reaches PostgreSQL: a connection string, from which the storage
 * makes (and owns) a pool of its own, or a pool the caller made (and owns). Everything else has
 * a default.
 *
 * @example
 * const options: PostgresStorageOptions = {
 *   connectionString: 'postgres://app@db.internal:5432/beneficiaries',
 *   poolSize: 20,
 * }
 */
export interface PostgresStorageOptions {
  /**
   * A libpq-style URL, `postgres://user:password@host:5432/database`. Either this or `pool`.
   * node-postgres reads the `PG*` environment variables for whatever the URL leaves out.
   */
  readonly connectionString?: string
  /**
   * A ready-made pool (a `pg.Pool`, say). The caller owns it: `close()` leaves it open, and
   * `poolSize`, `connectionTimeoutMs` and `statementTimeoutMs` do not apply to it (set them on
   * the pool: `max`, `connectionTimeoutMillis`, `statement_timeout`; `connectionTimeoutMs`
   * still bounds the wait for a batch). Attach an `error` listener to
   * it, as node-postgres requires of every pool.
   */
  readonly pool?: PostgresPool
  /** Connections of the storage's own pool. Default 10. */
  readonly poolSize?: number
  /**
   * The schema that holds the tables, created by the migrations when missing. Default `public`.
   * Tests give each file a schema of its own.
   */
  readonly schema?: string
  /**
   * Whether opening runs the pending migrations (default true). When false, opening fails
   * unless the schema is up to date: migrate with `migratePostgres` first.
   */
  readonly migrate?: boolean
  /**
   * How long a request waits for a free connection of the storage's own pool before it fails
   * with `StorageUnavailableError` (a 503), in milliseconds. Default 5000: more concurrent
   * requests than connections queue, and never wait forever.
   */
  readonly connectionTimeoutMs?: number
  /**
   * The server-side `statement_timeout` of the storage's own connections, in milliseconds.
   * Default 10000; 0 for none. A statement cancelled by it fails with
   * `StorageUnavailableError`, and so does one the server has not answered two seconds later.
   */
  readonly statementTimeoutMs?: number
  /**
   * The time budget of each statement of a list, in milliseconds, whatever the pool (the
   * storage's own or the one given): PostgreSQL cancels a list statement that runs longer
   * (`SET LOCAL statement_timeout` in the list's read-only transaction), and the list fails
   * at once with `StorageUnavailableError` (`busy`), a 503 with `Retry-After`, while the
   * connection goes back to serve the next request. Default 2000; at most `statementTimeoutMs`
   * when that is set, for the client's own timeout (two seconds later) must not come first.
   */
  readonly listTimeoutMs?: number
  /**
   * How reads and token checks that arrive together are sent as one statement (see
   * `PostgresBatcher`): at most `inFlight` such statements at once (default 2), each for at
   * most `size` calls (default 64). A call made while the service is idle goes out at once,
   * alone; only calls that would otherwise queue for PostgreSQL wait for the next batch.
   * `inFlight` above the pool's size gains nothing. A call waits for its batch at most
   * `connectionTimeoutMs` (then a `StorageUnavailableError`, a 503), as for a connection.
   */
  readonly batching?: { readonly inFlight?: number; readonly size?: number }
}

/** Defaults of {@link PostgresStorageOptions}. */
export const POSTGRES_DEFAULTS = Object.freeze({
  poolSize: 10,
  schema: 'public',
  connectionTimeoutMs: 5000,
  statementTimeoutMs: 10_000,
  listTimeoutMs: 2000,
  batching: Object.freeze({ inFlight: 2, size: 64 }),
})

/** A schema name the adapter accepts: a plain identifier, so it never needs quoting rules. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/

/**
 * The schema of `options`, checked.
 * @throws TypeError when it is not a lower-case identifier of at most 63 characters.
 */
export function schemaOf(options: { readonly schema?: string | undefined }): string {
  const schema = options.schema ?? POSTGRES_DEFAULTS.schema
  if (typeof schema !== 'string' || !SCHEMA_NAME.test(schema)) {
    throw new TypeError('schema must be a lower-case identifier: letters, digits and _')
  }
  return schema
}

/** A whole number option within bounds, or its default. */
export function integerOption(
  name: string,
  value: number | undefined,
  fallback: number,
  min: number,
  max: number,
): number {
  if (value === undefined) return fallback
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new TypeError(`${name} must be a whole number from ${min} to ${max}`)
  }
  return value
}
