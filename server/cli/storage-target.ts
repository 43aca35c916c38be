import type { Storage } from '../../core/index.js'
import { CommandFailedError, UsageError } from './cli-error.js'
import { databasePath, notUpToDate, openDatabase, type DatabaseUse } from './database.js'
import type { Settings } from './settings.js'
import type { NewBeneficiary } from '../../core/ports/beneficiary-store.js'
import type { ServerMetrics } from '../metrics/server-metrics.js'
import { redactedUrl } from './redacted-url.js'

/** The database a command works on: a SQLite file, or a PostgreSQL database. */
export type StorageTarget =
  | { readonly kind: 'sqlite'; readonly path: string }
  | { readonly kind: 'postgres'; readonly url: string }

/** What the commands do with a database beyond the storage ports. */
export interface CliDatabase {
  readonly storage: Storage
  /** The migrations applied when the database was opened, in order; empty when up to date. */
  readonly migrationsApplied: readonly string[]
  /** Names of the migrations applied to the schema, oldest first. */
  appliedMigrations(): Promise<string[]>
  /** Inserts `records` in bulk; the first id given and how many. */
  seed(records: Iterable<NewBeneficiary>): Promise<{ firstId: number; count: number }>
  /** Adds the database's own metrics to `metrics`: SQLite's group commits, PostgreSQL's pool. */
  watch(metrics: ServerMetrics): void
  close(): Promise<void>
}

/** How a command opens its database. */
export interface OpenOptions {
  /** Whether the command may create the database and migrate it (default) or needs it to exist. */
  readonly use?: DatabaseUse
  /** SQLite: how long a write waits for another process's lock. */
  readonly busyTimeoutMs?: number
  /** SQLite: `background` for the server, inline for the other commands. */
  readonly checkpoint?: 'background' | 'inline'
  /** SQLite: `thread` for the server (writes off the event loop), inline for the other commands. */
  readonly writer?: 'thread' | 'inline'
  /** PostgreSQL: connections in the pool. */
  readonly poolSize?: number
}

const POSTGRES_URL = /^postgres(?:ql)?:\/\//i

/**
 * The database the settings name: `--database-url` (env `DATABASE_URL`) with a `postgres://`
 * URL selects PostgreSQL; otherwise the SQLite file at `--db` (env `DATABASE_PATH`).
 * @throws UsageError for a URL that is not PostgreSQL's, or both `--db` and `--database-url`.
 */
export function storageTarget(settings: Settings): StorageTarget {
  const url = settings.raw('database-url', 'DATABASE_URL')
  if (url === undefined) return { kind: 'sqlite', path: databasePath(settings) }
  if (!POSTGRES_URL.test(url.value)) {
    throw new UsageError('must be a postgres:// or postgresql:// URL', url.name)
  }
  if (settings.raw('db', undefined) !== undefined) {
    throw new UsageError('--db and --database-url name two databases: give one')
  }
  return { kind: 'postgres', url: url.value }
}

/** The target as logs and messages may show it: a path, or the URL without its password. */
export function describeTarget(target: StorageTarget): string {
  if (target.kind === 'sqlite') return target.path
  return redactedUrl(target.url, 'postgres://(unparsable URL)')
}

/**
 * Opens the target's database and, unless `use` is `existing`, brings its schema up to date.
 * For an `existing` one, a SQLite file must exist and a PostgreSQL schema be up to date: a
 * mistyped `--db` or `--database-url` is an error, never a new database or schema. Each adapter
 * is loaded only when asked for, so that a SQLite deployment never loads `pg`, nor a
 * PostgreSQL one SQLite.
 * @throws CommandFailedError naming the database (never its password) when it cannot be opened,
 *   or for an `existing` one, when it does not exist or its schema is not up to date.
 */
export async function openCliDatabase(
  target: StorageTarget,
  options: OpenOptions = {},
): Promise<CliDatabase> {
  if (target.kind === 'sqlite') {
    const storage = await openDatabase(target.path, {
      ...(options.use !== undefined && { use: options.use }),
      ...(options.busyTimeoutMs !== undefined && { busyTimeoutMs: options.busyTimeoutMs }),
      ...(options.checkpoint !== undefined && { checkpoint: options.checkpoint }),
      ...(options.writer !== undefined && { writer: options.writer }),
    })
    const sqlite = await import('../../adapters/sqlite/index.js')
    return {
      storage,
      migrationsApplied: storage.migrationsApplied,
      appliedMigrations: () =>
        Promise.resolve(
          storage.database
            .prepare<[], { name: string }>('SELECT name FROM kysely_migration ORDER BY name')
            .all()
            .map((row) => row.name),
        ),
      seed: (records) => sqlite.seedBeneficiaries(storage, records),
      watch: (metrics) => metrics.watchGroupCommits(storage),
      close: () => storage.close(),
    }
  }
  const postgres = await import('../../adapters/postgres/index.js')
  let storage: Awaited<ReturnType<typeof postgres.openPostgresStorage>>
  try {
    storage = await postgres.openPostgresStorage({
      connectionString: target.url,
      ...(options.poolSize !== undefined && { poolSize: options.poolSize }),
      ...(options.use === 'existing' && { migrate: false }),
    })
  } catch (error) {
    if (options.use === 'existing' && error instanceof TypeError) {
      throw notUpToDate(describeTarget(target), error)
    }
    const reason = error instanceof Error ? error.message : String(error)
    throw new CommandFailedError(`cannot open the database ${describeTarget(target)}: ${reason}`, {
      cause: error,
    })
  }
  return {
    storage,
    migrationsApplied: storage.migrationsApplied,
    appliedMigrations: async () => {
      const result = await storage.pool.query({
        text: `SELECT name FROM "${storage.schema}".kysely_migration ORDER BY name`,
      })
      return (result.rows as { name: string }[]).map((row) => row.name)
    },
    seed: (records) => postgres.seedPostgres(storage, records),
    watch: (metrics) => {
      metrics.watchPool(() => storage.poolUsage())
      metrics.watchBatches(storage)
    },
    close: () => storage.close(),
  }
}
