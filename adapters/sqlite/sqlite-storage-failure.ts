import { StorageUnavailableError, type StorageFailureReason } from '../../core/errors.js'

/** Primary result codes of SQLite that say the machine, not the request, is at fault. */
const REASONS: ReadonlyMap<string, StorageFailureReason> = new Map([
  ['SQLITE_BUSY', 'busy'],
  ['SQLITE_FULL', 'disk_full'],
  ['SQLITE_READONLY', 'read_only'],
  ['SQLITE_IOERR', 'io_error'],
  ['SQLITE_CANTOPEN', 'cannot_open'],
])

/**
 * The domain's `StorageUnavailableError` for a driver error whose code is one of SQLite's storage
 * faults (`SQLITE_BUSY` past the busy timeout, `SQLITE_FULL`, `SQLITE_READONLY*`,
 * `SQLITE_IOERR*`, `SQLITE_CANTOPEN*`), the driver error kept as its `cause`; any other error as
 * it is.
 */
export function translateStorageFailure(error: unknown): unknown {
  const code = (error as { code?: unknown } | null | undefined)?.code
  if (typeof code !== 'string' || !code.startsWith('SQLITE_')) return error
  const extended = code.indexOf('_', 7)
  const reason = REASONS.get(extended === -1 ? code : code.slice(0, extended))
  return reason === undefined ? error : new StorageUnavailableError(reason, { cause: error })
}
