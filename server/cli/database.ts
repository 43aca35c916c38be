import { mkdirSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import {
  openSqliteStorage,
  type SqliteConfig,
  type SqliteStorage,
} from '../../adapters/sqlite/index.js'
import { CommandFailedError } from './cli-error.js'
import type { Settings } from './settings.js'

/** Where the CLI keeps its database unless `--db` or `DATABASE_PATH` says otherwise. */
export const DEFAULT_DATABASE_PATH = './data/beneficiaries.sqlite'

/** The database path every command takes: `--db`, else `DATABASE_PATH`, else the default. */
export function databasePath(settings: Settings): string {
  return settings.string('db', 'DATABASE_PATH', DEFAULT_DATABASE_PATH)
}

/**
 * Opens (creating it and its folder when missing) the SQLite database at `path` and brings its
 * schema up to date. A write waits up to `busyTimeoutMs` (default 5000) for another process's;
 * `checkpoint` as in `SqliteConfig` (the server checkpoints in the background, other commands
 * inline).
 * @throws CommandFailedError naming the path when it cannot be opened.
 */
export async function openDatabase(
  path: string,
  options: Pick<SqliteConfig, 'busyTimeoutMs' | 'checkpoint'> = {},
): Promise<SqliteStorage> {
  try {
    if (path !== ':memory:') mkdirSync(dirname(resolve(path)), { recursive: true })
    return await openSqliteStorage({ ...options, path })
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    throw new CommandFailedError(`cannot open the database ${path}: ${reason}`, { cause: error })
  }
}
