import { BufferedAccessLog } from '../../core/buffered-access-log.js'
import { PostgresEventLog } from './postgres-event-log.js'
import { PostgresWebhookStore } from './postgres-webhook-store.js'
import { PostgresMatchStore } from './postgres-match-keys.js'
import { PostgresBulkStore } from './postgres-bulk-store.js'
import { PostgresImportJobStore } from './postgres-import-job-store.js'
import type { Storage } from '../../core/ports/storage.js'
import type { HistoryPurge } from '../../core/ports/history-purge.js'
import { PostgresAccessLogTable, postgresHistoryPurge } from './postgres-access-log.js'
import type { BatchLimits, BatchListener, Batching } from './postgres-batcher.js'
import { PostgresBeneficiaryStore } from './postgres-beneficiary-store.js'
import { RelationalClientStore } from '../relational/relational-client-store.js'
import { RelationalSessionStore } from '../relational/relational-session-store.js'
import { RelationalSigningKeyStore } from '../relational/relational-signing-key-store.js'
import {
  integerOption,
  POSTGRES_DEFAULTS,
  schemaOf,
  type PostgresStorageOptions,
} from './postgres-config.js'
import { loadPg, type PostgresPool } from './postgres-driver.js'
import { migratePostgres, pendingMigrations, unknownMigrations } from './postgres-migrations.js'
import { postgresStatements } from './postgres-query.js'
import { PostgresSessionTokens } from './postgres-session-tokens.js'
import { translateStorageFailure } from './postgres-storage-failure.js'

/** What `PostgresStorage.poolUsage` tells. */
export interface PostgresPoolUsage {
  /** Connections open, in use or idle. */
  readonly total: number
  /** Open connections nobody uses. */
  readonly idle: number
  /** Requests waiting for a connection. */
  readonly waiting: number
}

/** The counters of a `pg.Pool`. */
interface PoolCounts {
  readonly totalCount: number
  readonly idleCount: number
  readonly waitingCount: number
}

/**
 * Every storage port on a PostgreSQL database, through a pool of node-postgres connections:
 * the storage for several stateless instances of the service on one database (D30).
 *
 * Get one from {@link openPostgresStorage}. Every call is one or a few statements on the pool,
 * and a write has committed when its promise resolves. A fault of the database (unreachable,
 * shutting down, a statement or pool timeout) rejects with `StorageUnavailableError`, which
 * the server answers with a 503 and `Retry-After`.
 *
 * @example
 * const storage = await openPostgresStorage({ connectionString: process.env.DATABASE_URL })
 * // … pass `storage` to the core, then:
 * await storage.close()
 */
export class PostgresStorage implements Storage {
  readonly beneficiaries: PostgresBeneficiaryStore
  readonly clients: RelationalClientStore
  readonly sessions: RelationalSessionStore
  readonly signingKeys: RelationalSigningKeyStore
  /** The access log (D35): each batch one statement on the pool. */
  readonly accessLog: BufferedAccessLog
  /** Retention of the history (D37). */
  readonly historyRetention: HistoryPurge
  /** The change feed (D33), which a trigger on the history fills with every change. */
  readonly events: PostgresEventLog
  /** Webhook endpoints and their deliveries (D34). */
  readonly webhooks: PostgresWebhookStore
  readonly matches: PostgresMatchStore
  readonly bulk: PostgresBulkStore
  readonly imports: PostgresImportJobStore
  /** The schema that holds the tables. */
  readonly schema: string
  /** The migrations `openPostgresStorage` applied when it opened the storage, in order. */
  readonly migrationsApplied: readonly string[]
  readonly #pool: PostgresPool
  readonly #ownsPool: boolean
  readonly #background = new Set<Promise<void>>()
  readonly #batchListeners: BatchListener[] = []
  #closed = false

  /** Use {@link openPostgresStorage}. */
  constructor(
    pool: PostgresPool,
    options: {
      schema: string
      ownsPool: boolean
      migrationsApplied: readonly string[]
      batching?: BatchLimits
      /** Default `POSTGRES_DEFAULTS.listTimeoutMs`. */
      listTimeoutMs?: number
    },
  ) {
    const batching: Batching = {
      limits: options.batching ?? {
        ...POSTGRES_DEFAULTS.batching,
        maxWaitMs: POSTGRES_DEFAULTS.connectionTimeoutMs,
      },
      observe: (kind, size) => {
        for (const listener of this.#batchListeners) listener(kind, size)
      },
    }
    this.#pool = pool
    this.#ownsPool = options.ownsPool
    this.schema = options.schema
    this.migrationsApplied = Object.freeze([...options.migrationsApplied])
    const assertOpen = (): void => this.#assertOpen()
    const track = (work: Promise<void>): void => {
      this.#background.add(work)
      void work.finally(() => this.#background.delete(work))
    }
    this.beneficiaries = new PostgresBeneficiaryStore(
      pool,
      this.schema,
      assertOpen,
      track,
      batching,
      options.listTimeoutMs ?? POSTGRES_DEFAULTS.listTimeoutMs,
    )
    const statements = postgresStatements(pool, this.schema)
    const tokens = new PostgresSessionTokens(pool, this.schema, batching)
    this.clients = new RelationalClientStore(statements, assertOpen)
    this.sessions = new RelationalSessionStore(statements, assertOpen, tokens)
    this.signingKeys = new RelationalSigningKeyStore(statements, assertOpen)
    this.accessLog = new BufferedAccessLog(
      new PostgresAccessLogTable(pool, this.schema, assertOpen),
    )
    this.historyRetention = postgresHistoryPurge(pool, this.schema, assertOpen)
    this.events = new PostgresEventLog(pool, this.schema, assertOpen)
    this.webhooks = new PostgresWebhookStore(pool, this.schema, assertOpen)
    this.matches = new PostgresMatchStore(pool, this.schema, assertOpen)
    this.bulk = new PostgresBulkStore(pool, this.schema, assertOpen)
    this.imports = new PostgresImportJobStore(pool, this.schema, assertOpen)
  }

  /**
   * How the pool is used now: connections open (`total`), idle among them, and requests waiting
   * for one. Read from a `pg.Pool`'s `totalCount`, `idleCount` and `waitingCount`; `undefined`
   * for a pool passed in that does not keep them. For metrics.
   */
  poolUsage(): PostgresPoolUsage | undefined {
    const pool = this.#pool as Partial<PoolCounts>
    const { totalCount: total, idleCount: idle, waitingCount: waiting } = pool
    if (typeof total !== 'number' || typeof idle !== 'number' || typeof waiting !== 'number') {
      return undefined
    }
    return { total, idle, waiting }
  }

  /**
   * Calls `listener` with the kind (`read`, `check`, `create`) and the number of calls of each
   * batch the storage sends to PostgreSQL (see `batching`), a batch of one included. For metrics.
   */
  observeBatches(listener: BatchListener): void {
    this.#batchListeners.push(listener)
  }

  /** The pool, for `seedPostgres` and maintenance. */
  get pool(): PostgresPool {
    return this.#pool
  }

  /**
   * Resolves when the database answers a query (the readiness probe).
   * @throws StorageUnavailableError when it does not; Error once `close` has been called.
   */
  async ping(): Promise<void> {
    this.#assertOpen()
    try {
      await this.#pool.query({ text: 'SELECT 1' })
    } catch (error) {
      throw translateStorageFailure(error)
    }
  }

  /**
   * Closes the storage: every later call, `ping` included, rejects. Ends the pool when the
   * storage made it (from a connection string), after its background work; a pool passed in
   * stays open. Closing twice is harmless.
   */
  async close(): Promise<void> {
    if (this.#closed) return
    // Before anything stops: the entries still queued are committed.
    await this.accessLog.close().catch(() => undefined)
    this.#closed = true
    await Promise.all(this.#background)
    if (this.#ownsPool) await this.#pool.end()
  }

  #assertOpen(): void {
    if (this.#closed) throw new Error('storage is closed')
  }
}

/**
 * Opens the PostgreSQL storage: makes a pool from `connectionString` (loading `pg`, an
 * optional peer dependency, only now) or uses the `pool` given, then runs the pending
 * migrations (`migratePostgres`) unless `migrate` is false, in which case the schema must be up
 * to date already.
 *
 * The storage's own pool queues requests beyond `poolSize` connections for at most
 * `connectionTimeoutMs`, sets `statement_timeout` on each connection, and logs nothing: an
 * idle connection that breaks (the server restarting) is dropped and replaced on next use.
 * Whatever the pool, each list statement has the shorter budget `listTimeoutMs`.
 *
 * @throws TypeError for invalid options, or when `migrate` is false and the schema is not up
 * to date; `MissingPeerDependencyError` naming the packages when `pg` is not installed;
 * `StorageUnavailableError` when the database cannot be reached.
 *
 * @example
 * const storage = await openPostgresStorage({
 *   connectionString: 'postgres://app@127.0.0.1:5432/beneficiaries',
 *   poolSize: 20,
 * })
 *
 * @example
 * const pool = new pg.Pool({ connectionString, max: 20, statement_timeout: 10_000 })
 * pool.on('error', () => {}) // idle connections that break are replaced
 * const storage = await openPostgresStorage({ pool }) // close() leaves the pool open
 */
export async function openPostgresStorage(
  options: PostgresStorageOptions,
): Promise<PostgresStorage> {
  const schema = schemaOf(options)
  const given = options.pool
  const connectionTimeoutMs = integerOption(
    'connectionTimeoutMs',
    options.connectionTimeoutMs,
    POSTGRES_DEFAULTS.connectionTimeoutMs,
    1,
    600_000,
  )
  const batching = batchingOf(options.batching, connectionTimeoutMs)
  if ((given === undefined) === (options.connectionString === undefined)) {
    throw new TypeError('give either connectionString or pool')
  }
  const statementTimeoutMs = integerOption(
    'statementTimeoutMs',
    options.statementTimeoutMs,
    POSTGRES_DEFAULTS.statementTimeoutMs,
    0,
    3_600_000,
  )
  // The pool's own timeout must not cut a list before PostgreSQL does.
  const longest = given === undefined && statementTimeoutMs > 0 ? statementTimeoutMs : 3_600_000
  const listTimeoutMs = integerOption(
    'listTimeoutMs',
    options.listTimeoutMs,
    Math.min(POSTGRES_DEFAULTS.listTimeoutMs, longest),
    1,
    longest,
  )
  let pool: PostgresPool
  if (given !== undefined) {
    pool = given
  } else {
    if (typeof options.connectionString !== 'string' || options.connectionString === '') {
      throw new TypeError('connectionString must be a postgres:// URL')
    }
    const max = integerOption('poolSize', options.poolSize, POSTGRES_DEFAULTS.poolSize, 1, 1000)
    const pg = await loadPg()
    const own = new pg.Pool({
      connectionString: options.connectionString,
      max,
      connectionTimeoutMillis: connectionTimeoutMs,
      statement_timeout: statementTimeoutMs,
      // A server that stops answering without closing the connection (stopped, partitioned
      // away) fails the request a little after the server would have cancelled it itself; the
      // pool then drops the connection.
      ...(statementTimeoutMs > 0 && { query_timeout: statementTimeoutMs + 2000 }),
      // An abandoned transaction never holds locks for long.
      idle_in_transaction_session_timeout: 60_000,
      keepAlive: true,
      application_name: 'beneficiary-service',
    })
    // node-postgres emits an idle connection's failure on the pool; unheard, it would end the
    // process. The connection is dropped; the next request opens a new one or gets a 503.
    own.on('error', () => undefined)
    pool = own
  }
  try {
    let applied: string[] = []
    if (options.migrate !== false) {
      applied = await migratePostgres(pool, { schema })
    } else {
      const pending = await pendingMigrations(pool, schema)
      if (pending.length > 0) {
        throw new TypeError(
          `The database schema is not up to date (${pending.join(', ')} pending): run migratePostgres first.`,
        )
      }
      const unknown = await unknownMigrations(pool, schema)
      if (unknown.length > 0) {
        throw new TypeError(
          `The database was migrated by a newer version (${unknown.join(', ')}): upgrade the adapter.`,
        )
      }
    }
    return new PostgresStorage(pool, {
      schema,
      ownsPool: given === undefined,
      migrationsApplied: applied,
      batching,
      listTimeoutMs,
    })
  } catch (error) {
    if (given === undefined) await pool.end().catch(() => undefined)
    throw error
  }
}

/**
 * The batch limits of `options.batching`, checked, with their defaults; a call waits for its
 * batch at most as long as for a connection.
 */
function batchingOf(given: PostgresStorageOptions['batching'], maxWaitMs: number): BatchLimits {
  const defaults = POSTGRES_DEFAULTS.batching
  return {
    inFlight: integerOption('batching.inFlight', given?.inFlight, defaults.inFlight, 1, 1000),
    size: integerOption('batching.size', given?.size, defaults.size, 1, 10_000),
    maxWaitMs,
  }
}
