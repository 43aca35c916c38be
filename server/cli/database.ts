import { existsSync, mkdirSync, statSync } from 'node:fs'
import { dirname, resolve, sep } from 'node:path'
import type { SqliteConfig, SqliteStorage } from '../../adapters/sqlite/index.js'
import { CommandFailedError } from './cli-error.js'
import type { Settings } from './settings.js'

/** Where the CLI keeps its database unless `--db` or `DATABASE_PATH` says otherwise. */
export const DEFAULT_DATABASE_PATH = './data/beneficiaries.sqlite'

/** The database path every command takes: `--db`, else `DATABASE_PATH`, else the default. */
export function databasePath(settings: Settings): string {
  return settings.string('db', 'DATABASE_PATH', DEFAULT_DATABASE_PATH)
}

/**
 * How a command takes its database: `create` it (and its folder) when missing and bring its
 * schema up to date, as `serve`, `migrate`, `seed` and `clients create` do; or use an
 * `existing` one, up to date, without creating it or changing its schema (`clients list`,
 * `clients revoke`, `backup`): there, a mistyped path is an error, not a new empty database.
 */
export type DatabaseUse = 'create' | 'existing'

/**
 * Opens the SQLite database at `path` for `use` (default `create`: creating it and its folder
 * when missing, 0600 and 0700, D32, and migrating it). A write waits up to `busyTimeoutMs`
 * (default 5000) for another process's; `checkpoint` and `writer` as in `SqliteConfig` (the
 * server checkpoints and writes in the background, other commands inline).
 * @throws CommandFailedError naming the path when it cannot be opened, or, for an `existing`
 *   one, when there is no such file or its schema is not up to date.
 *   MissingPeerDependencyError when better-sqlite3 or kysely is not installed.
 */
export async function openDatabase(
  path: string,
  options: Pick<SqliteConfig, 'busyTimeoutMs' | 'checkpoint' | 'writer'> & {
    use?: DatabaseUse
  } = {},
): Promise<SqliteStorage> {
  const { use = 'create', ...config } = options
  if (use === 'existing' && path !== ':memory:' && !existsSync(path)) {
    throw new CommandFailedError(
      `no database at ${path}: check --db (or DATABASE_PATH); "beneficiaries migrate" creates one`,
    )
  }
  // Loaded only when a command opens a SQLite database: a host of the package without the
  // adapter's drivers can still run the CLI on PostgreSQL, and is told what to install here.
  const { openSqliteStorage } = await import('../../adapters/sqlite/index.js')
  try {
    if (use === 'create' && path !== ':memory:') makeFolder(path)
    return await openSqliteStorage({
      ...config,
      path,
      create: use === 'create',
      migrate: use === 'create',
    })
  } catch (error) {
    if (error instanceof CommandFailedError) throw error
    if (use === 'existing' && error instanceof TypeError) throw notUpToDate(path, error)
    const reason = error instanceof Error ? error.message : String(error)
    throw new CommandFailedError(`cannot open the database ${path}: ${reason}`, { cause: error })
  }
}

/** Folder errors in the operator's words, by their system code. */
const FOLDER_PROBLEMS: Readonly<Record<string, string>> = {
  EACCES: 'permission denied: the user running this command may not create it',
  EPERM: 'permission denied: the user running this command may not create it',
  EROFS: 'the file system is read-only',
  ENOSPC: 'no space is left on the device',
  ENAMETOOLONG: 'the path is too long',
}

/**
 * Makes the database's folder and its missing parents, each its owner's alone (D32; an existing
 * one is left as it is), or says why it cannot in the operator's words: a path through a file,
 * a permission, a read-only file system.
 * @throws CommandFailedError naming the database and the cause's system code.
 */
function makeFolder(path: string): void {
  const folder = dirname(resolve(path))
  try {
    mkdirSync(folder, { recursive: true, mode: 0o700 })
  } catch (error) {
    const { code } = error as NodeJS.ErrnoException
    const file = code === 'EEXIST' || code === 'ENOTDIR' ? firstFile(folder) : undefined
    const problem =
      file !== undefined
        ? `${file} is a file, not a folder`
        : code !== undefined && Object.hasOwn(FOLDER_PROBLEMS, code)
          ? `${FOLDER_PROBLEMS[code]} (${code})`
          : (error as Error).message
    throw new CommandFailedError(
      `cannot create the folder of the database ${path}: ${problem}; check --db (or DATABASE_PATH)`,
      { cause: error },
    )
  }
}

/** The first of `folder` and its parents, from the root down, that exists and is not a folder. */
function firstFile(folder: string): string | undefined {
  const parts = folder.split(sep)
  for (let end = 2; end <= parts.length; end += 1) {
    const prefix = parts.slice(0, end).join(sep)
    let stats
    try {
      stats = statSync(prefix)
    } catch {
      return undefined
    }
    if (!stats.isDirectory()) return prefix
  }
  return undefined
}

/**
 * What a command on an `existing` database says when its schema is not this version's: it does
 * not migrate it, and `migrate` either does or says why it cannot.
 */
export function notUpToDate(name: string, cause: unknown): CommandFailedError {
  return new CommandFailedError(
    `the database ${name} does not have this version's schema: run "beneficiaries migrate" (which says what it applies, or why it cannot), then try again`,
    { cause },
  )
}

/** The side files SQLite may keep beside a database. */
const SIDE_FILES = ['-wal', '-shm', '-journal']

/**
 * The database file and those of its side files that exist, each with its mode, when other
 * users may read or write it (any group or other permission bit): what `serve` warns about at
 * start (D32). Empty for `:memory:` and for files only their owner can open.
 */
export function filesOpenToOthers(
  path: string,
): { readonly file: string; readonly mode: string }[] {
  if (path === ':memory:') return []
  const open: { file: string; mode: string }[] = []
  for (const file of [path, ...SIDE_FILES.map((suffix) => path + suffix)]) {
    let mode: number
    try {
      mode = statSync(file).mode & 0o777
    } catch {
      continue
    }
    if ((mode & 0o077) !== 0) open.push({ file, mode: mode.toString(8).padStart(4, '0') })
  }
  return open
}
