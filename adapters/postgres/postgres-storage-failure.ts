import {
  ConflictError,
  StorageUnavailableError,
  type StorageFailureReason,
} from '../../core/errors.js'

/** The unique index that holds the fiscal codes (D8); its violation is a `ConflictError`. */
export const FISCAL_CODE_INDEX = 'beneficiaries_fiscal_code'

/** SQLSTATE codes (and classes, by their first two characters) that say the server is at fault. */
const SQLSTATES: ReadonlyMap<string, StorageFailureReason> = new Map([
  ['08', 'cannot_open'], // connection exception
  ['57P01', 'cannot_open'], // admin_shutdown: the server is stopping
  ['57P02', 'cannot_open'], // crash_shutdown
  ['57P03', 'cannot_open'], // cannot_connect_now: starting up or shutting down
  ['57014', 'busy'], // query_canceled: statement_timeout
  ['55P03', 'busy'], // lock_not_available: lock_timeout
  ['40001', 'busy'], // serialization_failure
  ['40P01', 'busy'], // deadlock_detected
  ['53300', 'busy'], // too_many_connections
  ['53200', 'busy'], // out_of_memory
  ['53100', 'disk_full'],
  ['25006', 'read_only'], // read_only_sql_transaction: a standby, or default_transaction_read_only
  ['58', 'io_error'], // system error
  ['XX001', 'io_error'], // data_corrupted
  ['XX002', 'io_error'], // index_corrupted
])

/** Socket errors of Node.js: the server cannot be reached. */
const SOCKET_ERRORS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'ENOENT',
])

/** Messages of node-postgres's own errors, which carry no code. */
const DRIVER_MESSAGES: readonly (readonly [RegExp, StorageFailureReason])[] = [
  // pg-pool: no connection became free within connectionTimeoutMillis.
  [/^timeout exceeded when trying to connect$/i, 'busy'],
  [/^Query read timeout$/i, 'busy'],
  [/Connection terminated|not queryable|connection timeout|Connection refused/i, 'cannot_open'],
]

/**
 * The domain's `StorageUnavailableError` for a driver error that says the database, not the
 * request, is at fault (unreachable, shutting down, a statement or pool timeout, disk full, a
 * read-only server), the driver error kept as its `cause`; any other error as it is.
 */
export function translateStorageFailure(error: unknown): unknown {
  if (!(error instanceof Error) || error instanceof StorageUnavailableError) return error
  const code = (error as { code?: unknown }).code
  let reason: StorageFailureReason | undefined
  if (typeof code === 'string') {
    reason = SOCKET_ERRORS.has(code)
      ? 'cannot_open'
      : (SQLSTATES.get(code) ?? SQLSTATES.get(code.slice(0, 2)))
  }
  if (reason === undefined && code === undefined) {
    reason = DRIVER_MESSAGES.find(([pattern]) => pattern.test(error.message))?.[1]
  }
  return reason === undefined ? error : new StorageUnavailableError(reason, { cause: error })
}

/**
 * Like {@link translateStorageFailure}, and a violated fiscal-code uniqueness (`23505` on
 * {@link FISCAL_CODE_INDEX}) becomes the domain's `ConflictError` (D8).
 */
export function translateWriteFailure(error: unknown): unknown {
  if (
    error instanceof Error &&
    (error as { code?: unknown }).code === '23505' &&
    (error as { constraint?: unknown }).constraint === FISCAL_CODE_INDEX
  ) {
    return new ConflictError('fiscal_code', { cause: error })
  }
  return translateStorageFailure(error)
}
