import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { CommandFailedError, UsageError } from './cli-error.js'
import { COMMON_OPTIONS, parseCommand, type CliIo } from './cli-io.js'
import { openDatabase } from './database.js'
import { fakeBeneficiaries } from './fake-beneficiaries.js'
import { BACKUP_HELP, MIGRATE_HELP, SEED_HELP } from './help.js'
import { Settings } from './settings.js'
import { describeTarget, openCliDatabase, storageTarget } from './storage-target.js'

/**
 * `beneficiaries migrate`: applies pending migrations (opening the database does) and prints
 * the schema version reached.
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
    const applied = await database.appliedMigrations()
    io.out(JSON.stringify({ database: describeTarget(target), migrations: applied }))
    return 0
  } finally {
    await database.close()
  }
}

/** `beneficiaries backup --to FILE`: an online, consistent copy of the database. */
export async function backupCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseCommand(args, { ...COMMON_OPTIONS, to: { type: 'string' } })
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
  if (!existsSync(path)) throw new CommandFailedError(`no database at ${path}`)
  if (resolve(to) === resolve(path)) throw new UsageError('must not be the database itself', '--to')
  const storage = await openDatabase(path)
  // Imported when used, as every adapter is (see openCliDatabase).
  const { backupSqlite } = await import('../../adapters/sqlite/index.js')
  try {
    const pages = await backupSqlite(storage, to)
    io.out(JSON.stringify({ database: path, to, pages }))
    return 0
  } catch (error) {
    throw new CommandFailedError(`backup to ${to} failed: ${(error as Error).message}`, {
      cause: error,
    })
  } finally {
    await storage.close()
  }
}

/** `beneficiaries seed --count N`: realistic made-up beneficiaries, in one transaction. */
export async function seedCommand(args: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseCommand(args, {
    ...COMMON_OPTIONS,
    count: { type: 'string' },
    seed: { type: 'string' },
  })
  if (values['help'] === true) {
    io.out(SEED_HELP)
    return 0
  }
  const settings = new Settings(values, io.env)
  if (values['count'] === undefined) throw new UsageError('seed needs --count N')
  const count = settings.integer('count', undefined, 0, 1, 10_000_000)
  const seed = settings.integer('seed', undefined, 1, 0, 4_294_967_295)
  const database = await openCliDatabase(storageTarget(settings))
  try {
    const started = performance.now()
    const records = withProgress(fakeBeneficiaries({ count, seed }), count, io)
    const result = await database.seed(records)
    const seconds = Math.round((performance.now() - started) / 10) / 100
    io.out(JSON.stringify({ first_id: result.firstId, count: result.count, seconds }))
    return 0
  } finally {
    await database.close()
  }
}

/** Every ~2 s while `records` is read, a line on standard error: how many of `count` so far. */
function* withProgress<T>(records: Iterable<T>, count: number, io: CliIo): Generator<T> {
  let taken = 0
  let lastLine = performance.now()
  for (const record of records) {
    yield record
    taken++
    if ((taken & 1023) === 0 && performance.now() - lastLine >= 2000) {
      lastLine = performance.now()
      io.err(`seed: ${taken.toLocaleString('en-US')} of ${count.toLocaleString('en-US')}`)
    }
  }
}
