import { closeSync, openSync, rmSync } from 'node:fs'
import { resolve } from 'node:path'
import { CommandFailedError, UsageError } from './cli-error.js'
import { COMMON_OPTIONS, parseCommand, type CliIo } from './cli-io.js'
import { openDatabase } from './database.js'
import { BACKUP_HELP, MIGRATE_HELP, SEED_HELP } from './help.js'
import { SeedProgress, seedMemoryMib } from './seed-progress.js'
import { Settings } from './settings.js'
import { describeTarget, openCliDatabase, storageTarget } from './storage-target.js'

/**
 * `beneficiaries migrate`: applies pending migrations (opening the database does), prints as
 * JSON those it applied and every migration the schema now has, and says on standard error
 * what it applied or that the database was already up to date.
 */
export async function migrateCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseCommand(args, COMMON_OPTIONS)
  if (values['help'] === true) {
    io.out(MIGRATE_HELP)
    return 0
  }
  const target = storageTarget(new Settings(values, io.env))
  const database = await openCliDatabase(target)
  try {
    const applied = database.migrationsApplied
    const migrations = await database.appliedMigrations()
    const name = describeTarget(target)
    io.out(JSON.stringify({ database: name, applied, migrations }))
    io.err(
      applied.length === 0
        ? `migrate: ${name} is already up to date (${migrations.length} migrations, the last ${migrations.at(-1) ?? 'none'})`
        : `migrate: applied ${applied.length} migration${applied.length === 1 ? '' : 's'} to ${name}: ${applied.join(', ')}`,
    )
    return 0
  } finally {
    await database.close()
  }
}

/**
 * `beneficiaries backup --to FILE [--force]`: an online, consistent copy of an existing
 * database, which it does not change; an existing FILE is replaced only with `--force`.
 */
export async function backupCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseCommand(args, {
    ...COMMON_OPTIONS,
    to: { type: 'string' },
    force: { type: 'boolean' },
  })
  if (values['help'] === true) {
    io.out(BACKUP_HELP)
    return 0
  }
  const to = values['to']
  if (typeof to !== 'string' || to === '') throw new UsageError('backup needs --to FILE')
  const target = storageTarget(new Settings(values, io.env))
  if (target.kind === 'postgres') {
    throw new UsageError(
      'a PostgreSQL database is backed up with its own tool: pg_dump --format=custom --file FILE "$DATABASE_URL" (restore with pg_restore)',
    )
  }
  const path = target.path
  if (resolve(to) === resolve(path)) throw new UsageError('must not be the database itself', '--to')
  const storage = await openDatabase(path, { use: 'existing' })
  let claimed = false
  // Imported when used, as every adapter is (see openCliDatabase).
  const { backupSqlite } = await import('../../adapters/sqlite/index.js')
  try {
    // What is replaced goes first: SQLite would read an old file as the start of the copy.
    // (It drops the WAL or journal of a database it finds empty, as the new file is.)
    if (values['force'] === true) rmSync(to, { force: true })
    claimed = claim(to)
    const pages = await backupSqlite(storage, to)
    io.out(JSON.stringify({ database: path, to, pages }))
    return 0
  } catch (error) {
    // A file this command made stays only if it holds a backup.
    if (claimed) rmSync(to, { force: true })
    if (error instanceof CommandFailedError) throw error
    throw new CommandFailedError(`backup to ${to} failed: ${(error as Error).message}`, {
      cause: error,
    })
  } finally {
    await storage.close()
  }
}

/**
 * Creates `file`, empty and its owner's only, failing if it exists: the check and the creation
 * are one step, so that no file made meanwhile is overwritten either.
 * @throws CommandFailedError when it exists (without `--force`, or made again since).
 */
function claim(file: string): true {
  try {
    closeSync(openSync(file, 'wx', 0o600))
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
      throw new CommandFailedError(`${file} exists: give --force to replace it`)
    }
    throw error
  }
}

/**
 * `beneficiaries seed --count N`: realistic made-up beneficiaries, with its progress on standard
 * error (`SeedProgress`): on SQLite in one transaction; on PostgreSQL in batches that commit as
 * they go, so that the same command resumes a seed that stopped.
 */
export async function seedCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseCommand(args, {
    ...COMMON_OPTIONS,
    count: { type: 'string' },
    seed: { type: 'string' },
    'batch-size': { type: 'string' },
  })
  if (values['help'] === true) {
    io.out(SEED_HELP)
    return 0
  }
  const settings = new Settings(values, io.env)
  if (values['count'] === undefined) throw new UsageError('seed needs --count N')
  const count = settings.integer('count', undefined, 0, 1, 10_000_000)
  const seed = settings.integer('seed', undefined, 1, 0, 4_294_967_295)
  const target = storageTarget(settings)
  if (values['batch-size'] !== undefined && target.kind === 'sqlite') {
    throw new UsageError('SQLite seeds in one transaction: --batch-size is for PostgreSQL')
  }
  const batchSize = settings.integer('batch-size', undefined, 10_000, 1, 100_000)
  const database = await openCliDatabase(target)
  const progress = new SeedProgress(count, io)
  try {
    const how =
      target.kind === 'sqlite'
        ? 'in one transaction'
        : `in batches of ${batchSize.toLocaleString('en-US')} that commit as they go (stopped, the same command resumes it)`
    io.err(
      `seed: adding ${count.toLocaleString('en-US')} made-up beneficiaries to ${describeTarget(target)} ${how}; it takes up to about ${seedMemoryMib(target.kind, count)} MiB of memory`,
    )
    const started = performance.now()
    const result = await database.seed({ count, seed, batchSize }, progress)
    if (result.added === 0) {
      io.err(
        `seed: the ${result.count.toLocaleString('en-US')} records of this seed are in already`,
      )
    }
    const seconds = Math.round((performance.now() - started) / 10) / 100
    io.out(
      JSON.stringify({
        first_id: result.firstId,
        count: result.count,
        added: result.added,
        seconds,
      }),
    )
    return 0
  } finally {
    progress.close()
    await database.close()
  }
}
