import type { Storage } from '../../core/index.js'
import { CommandFailedError, UsageError } from './cli-error.js'
import { databasePath, notUpToDate, openDatabase, type DatabaseUse } from './database.js'
import type { Settings } from './settings.js'
import type { ServerMetrics } from '../metrics/server-metrics.js'
import { postgresProblem } from './postgres-problem.js'
import { redactedUrl } from './redacted-url.js'
import { fakeBeneficiaries } from './fake-beneficiaries.js'
import type { SeedProgress } from './seed-progress.js'

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
  /**
   * Adds `count` made-up beneficiaries of the generator's `seed`, telling `progress`. SQLite:
   * in one transaction. PostgreSQL: in batches of `batchSize` that commit as they go; the same
   * `seed` and `count` again resume a seed that stopped, and add nothing to one that finished.
   */
  seed(fake: FakeSeed, progress: SeedProgress): Promise<SeedOutcome>
  /** Adds the database's own metrics to `metrics`: SQLite's group commits, PostgreSQL's pool. */
  watch(metrics: ServerMetrics): void
  close(): Promise<void>
}

/** The made-up records `seed` adds. */
export interface FakeSeed {
  readonly count: number
  /** The generator's seed. */
  readonly seed: number
  /** PostgreSQL: records per transaction. */
  readonly batchSize: number
}

/** What `seed` did. */
export interface SeedOutcome {
  /** Id of the seed's first record. */
  readonly firstId: number
  /** Records of the seed in the database, those of a run it resumed included. */
  readonly count: number
  /** Records this run added. */
  readonly added: number
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
  /** PostgreSQL: the time budget of each list statement. */
  readonly listTimeoutMs?: number
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
      seed: async ({ count, seed }, progress) => {
        const records = progress.follow(fakeBeneficiaries({ count, seed }))
        const result = await sqlite.seedBeneficiaries(storage, records)
        return { ...result, added: result.count }
      },
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
      ...(options.listTimeoutMs !== undefined && { listTimeoutMs: options.listTimeoutMs }),
      ...(options.use === 'existing' && { migrate: false }),
    })
  } catch (error) {
    if (options.use === 'existing' && error instanceof TypeError) {
      throw notUpToDate(describeTarget(target), error)
    }
    const reason =
      postgresProblem(error) ?? (error instanceof Error ? error.message : String(error))
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
    seed: ({ count, seed, batchSize }, progress) =>
      postgres.seedPostgres(
        storage,
        ({ startedAt, done }) => {
          progress.begin(done)
          // The clock of the first run, so that a resumed seed makes the same records.
          return fakeBeneficiaries({ count, seed, now: startedAt })
        },
        {
          name: `fake-beneficiaries seed=${seed} count=${count}`,
          batchSize,
          onProgress: (done) => {
            if (done < count) progress.advance(done)
            else progress.end(done, 'the tables are analysed (VACUUM ANALYZE)')
          },
        },
      ),
    watch: (metrics) => {
      metrics.watchPool(() => storage.poolUsage())
      metrics.watchBatches(storage)
    },
    close: () => storage.close(),
  }
}
